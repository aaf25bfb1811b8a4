"""Tokens, tail and rotation: the core spec §11 tables and the reference's byte figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memkeeper.cli.main import main
from memkeeper.core.basics.tokens import (
    CARRYOVER_TOKENS,
    ROTATION_THRESHOLD_TOKENS,
    estimate_tokens,
    extract_tail_by_tokens,
    extract_tail_bytes,
    tokens_for_bytes,
)
from memkeeper.core.log import rotation
from memkeeper.core.store import names
from memkeeper.core.store.atomic import append_bytes
from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.paths import StorePaths

# --- spec §11.1 unit tests ----------------------------------------------------------------


def test_estimate_tokens_hello_world() -> None:
    assert estimate_tokens("Hello World") == 3  # 11 bytes


def test_estimate_tokens_ten_korean_chars() -> None:
    text = "가나다라마바사아자차"
    assert len(text.encode("utf-8")) == 30
    assert estimate_tokens(text) == 8


def test_estimate_tokens_100kb_file(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"x" * 100 * 1024)
    assert tokens_for_bytes(path.stat().st_size) == 25_600  # "~25,000"


def test_tail_of_1000_lines_for_2500_tokens() -> None:
    # Each line is 99 characters + "\n" = 100 bytes = 25 tokens, so 2,500 tokens is 100 lines.
    lines = [f"{i:04d} " + "x" * 94 for i in range(1000)]
    content = "\n".join(lines)
    tail = extract_tail_by_tokens(content, 2500)
    assert tail.split("\n") == lines[-100:]


def test_tail_counts_trailing_newline_as_one_token() -> None:
    # "abc\n" split is ["abc", ""]: "" costs ceil(1/4)=1, "abc" costs ceil(4/4)=1.
    assert extract_tail_by_tokens("zzzz\nabc\n", 2) == "abc\n"
    assert extract_tail_by_tokens("zzzz\nabc\n", 1) == ""


def test_tail_is_empty_when_last_line_is_over_target() -> None:
    assert extract_tail_by_tokens("short\n" + "y" * 100, 10) == ""


def test_tail_never_splits_a_line_and_is_a_suffix() -> None:
    content = "".join(f"line {i} " + "é" * (i % 7) + "\n" for i in range(500)).encode()
    tail = extract_tail_bytes(content, 300)
    assert content.endswith(tail)
    assert content[: len(content) - len(tail)].endswith(b"\n")
    assert estimate_tokens(tail) <= 300 + 1


# --- the reference's byte figures --------------------------------------------------------


def _fill(store: StorePaths, size: int) -> bytes:
    line = b"- [topic]: a fact about the project, written by the flush job\n"
    data = (line * (size // len(line) + 1))[:size]
    store.memory.write_bytes(data)
    return data


def test_94996_bytes_does_not_rotate(store: StorePaths) -> None:
    _fill(store, 94_996)
    assert tokens_for_bytes(94_996) == ROTATION_THRESHOLD_TOKENS - 1
    assert not rotation.is_due(store)
    assert rotation.rotate(store) is None
    assert rotation.memory_tokens(store) == 23_749


def test_94997_bytes_rotates_archive_identical_carryover_tail(store: StorePaths) -> None:
    data = _fill(store, 94_997)
    assert rotation.is_due(store)
    result = rotation.rotate(store)
    assert result is not None
    archive = store.archive(result.archive)
    assert archive.read_bytes() == data
    carry = store.memory.read_bytes()
    assert data.endswith(carry)
    assert data[: len(data) - len(carry)].endswith(b"\n")  # line-aligned
    assert tokens_for_bytes(len(carry)) <= CARRYOVER_TOKENS
    assert carry == extract_tail_bytes(data, CARRYOVER_TOKENS)
    assert result.trigger_line == f"[MEMORY_KEEPER_ROTATE] file={result.archive}"
    entry = read_index(store)["rotatedFiles"][-1]
    assert entry["file"] == result.archive
    assert entry["tokens"] == 23_750 and entry["bytes"] == 94_997
    assert entry["summaryGenerated"] is False
    assert entry["summary"] == result.archive.replace(".md", ".summary.json")


# --- spec §11.2 scenarios (through `memkeeper check`) -----------------------------------


def test_scenario_a_check_rotates_100kb(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    # The spec's generator prints "## Test\n" lines; 13,000 of them make the "100KB+" it asks for.
    data = b"## Test\n" * 13_000 + b"\n"
    store.memory.write_bytes(data)
    assert main(["--project", str(store.project), "check"]) == 0
    out = capsys.readouterr().out
    archives = sorted(store.root.glob("memory_*.md"))
    assert len(archives) == 1 and archives[0].read_bytes() == data
    assert out.strip() == f"[MEMORY_KEEPER_ROTATE] file={archives[0].name}"
    assert 9_000 <= store.memory.stat().st_size <= 9_500  # "~10KB"
    index = json.loads(store.index.read_text())
    assert index["rotatedFiles"][0]["summaryGenerated"] is False
    assert index["stats"]["totalRotations"] == 1


def test_scenario_b_50kb_does_not_rotate(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    data = b"## Test\n" * 6_250  # 50 KB
    store.memory.write_bytes(data)
    assert main(["--project", str(store.project), "check"]) == 0
    assert capsys.readouterr().out == ""
    assert not list(store.root.glob("memory_*.md"))
    assert store.memory.read_bytes() == data


# --- spec §11.3 edge cases ------------------------------------------------------------------


def test_empty_memory_does_not_rotate(store: StorePaths) -> None:
    store.memory.write_bytes(b"")
    assert rotation.rotate(store) is None
    assert rotation.rotate(store, force=True) is None


def test_korean_only_file_counts_bytes(store: StorePaths) -> None:
    line = "한국어로만 쓴 메모 줄입니다\n"  # 12 Hangul (36 B) + 3 spaces + newline = 40 bytes
    assert len(line.encode()) == 40
    store.memory.write_text(line * 2374, encoding="utf-8")  # 94,960 B
    assert rotation.memory_tokens(store) == 23_740
    assert rotation.rotate(store) is None
    text = line * 2375  # 95,000 B
    store.memory.write_text(text, encoding="utf-8")
    assert rotation.memory_tokens(store) == estimate_tokens(text) == 23_750
    result = rotation.rotate(store)
    assert result is not None
    carry = store.memory.read_text("utf-8")  # still valid UTF-8: whole lines only
    assert text.endswith(carry)


def test_threshold_boundary_with_custom_config(store: StorePaths) -> None:
    store.config.write_text(json.dumps({"memoryRotation": {"thresholdTokens": 1000, "carryoverTokens": 100}}))
    _fill(store, 3_800)  # 950 tokens = floor(1000 * 0.95)
    from memkeeper.cli.fast import run_check

    assert run_check(str(store.project)) == 0
    assert len(list(store.root.glob("memory_*.md"))) == 1
    assert rotation.memory_tokens(store) <= 95


def test_corrupt_index_gets_a_new_one(store: StorePaths) -> None:
    store.index.write_text("{not json")
    _fill(store, 94_997)
    assert rotation.rotate(store) is not None
    index = read_index(store)
    assert len(index["rotatedFiles"]) == 1
    assert index["stats"]["totalRotations"] == 1
    assert list(store.root.glob("memory-index.json.corrupt-*"))


# --- better than the reference --------------------------------------------------------------


def test_archive_name_never_reused_within_a_second(store: StorePaths) -> None:
    names = []
    for i in range(4):
        store.memory.write_bytes(f"round {i}\n".encode() * 10)
        result = rotation.rotate(store, carryover_tokens=1, force=True)  # above the carryover
        assert result is not None
        names.append(result.archive)
    assert len(set(names)) == 4
    for i, name in enumerate(names):
        assert store.archive(name).read_bytes() == f"round {i}\n".encode() * 10


def test_existing_archive_with_the_same_name_is_not_clobbered(store: StorePaths) -> None:
    from datetime import UTC, datetime

    taken = names.archive_name_for(datetime.now(UTC))
    store.archive(taken).write_bytes(b"older archive")
    store.memory.write_bytes(b"new content\n")
    result = rotation.rotate(store, carryover_tokens=1, force=True)  # above the carryover
    assert result is not None and result.archive != taken
    assert store.archive(taken).read_bytes() == b"older archive"


def test_text_appended_during_rotation_is_kept(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _fill(store, 100_000)
    real_tail = extract_tail_bytes

    def tail_while_someone_appends(content: bytes, target: int) -> bytes:
        # Another writer appends to memory.md after the rotation has read it.
        append_bytes(store.memory, b"\n## 2026-11-22_0300\n- [late]: appended mid-rotation\n")
        return real_tail(content, target)

    monkeypatch.setattr(rotation, "extract_tail_bytes", tail_while_someone_appends)
    result = rotation.rotate(store)
    assert result is not None
    assert result.late_bytes > 0
    assert store.archive(result.archive).read_bytes() == data
    assert store.memory.read_bytes().endswith(b"- [late]: appended mid-rotation\n")


def test_reconcile_archives_indexes_an_orphan(store: StorePaths) -> None:
    store.archive("memory_20261101_120000.md").write_bytes(b"## 2026-11-01_1200\n- [x]: y\n")
    read_index(store)  # creates the index (rebuilt from disk, so it lists the archive)
    store.archive("memory_20261102_120000.md").write_bytes(b"## 2026-11-02_1200\n- [x]: z\n")
    assert rotation.reconcile_archives(store) == ["memory_20261102_120000.md"]
    assert rotation.reconcile_archives(store) == []
    entry = read_index(store)["rotatedFiles"][-1]
    assert entry["dateRange"] == {"first": "2026-11-02", "last": "2026-11-02"}
