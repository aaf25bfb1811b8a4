"""The first build's reader, made cheaper without changing what it hands the writer: the
camelCase parts found from their turns, the day counts read a line per match, and the
work sent back from a pool worker as marshal's plain values."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memkeeper.core.basics.fastjson import bulk_parser
from memkeeper.core.capture import l1_counts
from memkeeper.core.search import cutting
from memkeeper.core.search.freshness import Row
from memkeeper.core.search.sources import discover, iter_sections, l1_entry, word_row
from memkeeper.core.search.words import MAX_WORD_CHARS, camel_parts, with_parts

from .conftest import build_store

_WORD = re.compile(r"[^\W_]+")
_TURN = re.compile(r"[A-Z](?:(?<=[a-z0-9][A-Z])|(?<=[A-Z]{2})(?=[a-z]{2}))")
_PART = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]{2})|[A-Z]?[a-z]+|[A-Z]+[a-z]?|[0-9]+")


def parts_word_by_word(text: str) -> list[str]:
    """The camelCase parts as the rule states them: every word of the text asked in turn."""
    parts: dict[str, None] = {}
    for word in _WORD.findall(text):
        if len(word) <= MAX_WORD_CHARS and _TURN.search(word):
            parts.update(dict.fromkeys(part.lower() for part in _PART.findall(word)))
    return list(parts)


LONG = "a" * (MAX_WORD_CHARS - 2)
TEXTS = [
    "",
    "plain prose, Capitals At Each Word, README and IDs",
    "HTTPServerError and getURLs then getURLs again, parseJSON",
    f"{LONG}aB {LONG}aBc {LONG}abC x{LONG}aB",  # words of 40, 41 and 42 characters
    "aB" * 30 + " shortCase",  # a long word full of turns, then a short one
    "snake_caseWord under_Score _xY ß­straße éA aéB ΣίσυφοςAb 검색Index",
    "line\nbreakHere\u2028and\u00a0nbspWord\ud800loneSurrogate",
    "x" * (MAX_WORD_CHARS + 5) + "Ab " + "y" * (MAX_WORD_CHARS - 3) + "zAb",
]


@pytest.mark.parametrize("text", TEXTS)
def test_camel_parts_are_those_of_each_word_asked_in_turn(text: str) -> None:
    assert camel_parts(text) == parts_word_by_word(text)
    expected = parts_word_by_word(text)
    assert with_parts(text) == (f"{text}\n{' '.join(expected)}" if expected else text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            ["a", "B", "0", "_", " ", "é", "Σ", "\u00a0", "검", "\n", "fooBar", "HTTPServer", "aB" * 21, LONG]
        ),
        max_size=40,
    )
)
def test_any_text_gets_the_parts_of_each_word_asked_in_turn(pieces: list[str]) -> None:
    text = "".join(pieces)
    expected = parts_word_by_word(text)
    assert camel_parts(text) == expected
    assert with_parts(text) == (f"{text}\n{' '.join(expected)}" if expected else text)


def counts_line_by_line(data: bytes, start: int, end: int | None) -> l1_counts.DayCounts:
    """The day counts as the rule states them: each whole line by its first role, first day
    and any sidechain mark."""
    days: dict[str, list[int]] = {}
    for line in data[start:end].split(b"\n"):
        role, day = l1_counts.ROLE.search(line), l1_counts.TS.search(line)
        if role is None or day is None:
            continue
        user = role.group(1) == b"user"
        if user and l1_counts.SIDE.search(line):
            continue
        days.setdefault(day.group(1).decode(), [0, 0])[0 if user else 1] += 1
    return {day: (c[0], c[1]) for day, c in days.items()}


_FRAGMENTS = [
    b'"role":"user"',
    b'"role": "tool"',
    b'"role":"assistant"',
    b'"ts":"2026-01-0',
    b'"ts": "2026-01-02T',
    b'"ts":"2025-12-31"',
    b'"sidechain":true',
    b'"sidechain": true',
    b"\n",
    b"x",
    b"{",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=30), st.integers(0, 30), st.integers(0, 31))
def test_day_counts_follow_the_rule_line_by_line(pieces: list[bytes], first: int, last: int) -> None:
    data = b"".join(pieces)
    starts = [0, *(i + 1 for i, byte in enumerate(data) if byte == 10)]
    start = starts[first % len(starts)]
    ends = [s for s in starts if s >= start]
    end = None if last >= len(ends) else ends[last]
    assert l1_counts.day_counts(data, start, end) == counts_line_by_line(data, start, end)


def _slots(work: cutting.Work) -> list[tuple[str, str]]:
    """Every slot's value as its repr: equal values of another type (1 and True) differ."""
    return [(name, repr(getattr(work, name))) for name in cutting.Work.__slots__]


def test_a_work_crosses_the_pipe_whole(tmp_path: Path) -> None:
    paths = build_store(tmp_path / "proj")
    parse = bulk_parser()
    works = [cutting.prepare(paths, source, None, parse) for source in discover(paths)]
    assert {w.source.tier for w in works} == {"memory", "l3", "l2", "l1"}
    # an append: the work of what was added to a file the index has read
    first = next(w for w in works if w.source.kind == "l1")
    row = Row(
        7, first.source.rel, "l1", "l1", first.source.size, first.source.mtime_ns, first.end,
        first.next_line, first.open_tail, first.head_fp, first.tail_fp, first.read, first.source.inode,
    )  # fmt: skip
    path = paths.root / first.source.rel
    with open(path, "ab") as handle:
        handle.write(b'\n{"ts":"2026-11-03T10:00:00.000Z","role":"user","text":"appended rotateMemory"}\n')
    source = next(s for s in discover(paths) if s.rel == first.source.rel)
    appended = cutting.prepare(paths, source, row, parse)
    assert appended.append and appended.row == row and appended.words
    works.append(appended)

    sent = cutting._unpacked(cutting._packed(works))
    assert [_slots(w) for w in sent] == [_slots(w) for w in works]
    assert [repr(w.plain()) for w in sent] == [repr(w.plain()) for w in works]  # the docs' fields too
    assert all(type(w.source) is type(works[0].source) for w in sent)
    assert type(sent[-1].row) is Row
    smalls = [w.small for w in sent if w.small]
    assert smalls and all(type(doc) is type(works[0].small[0]) for docs in smalls for doc in docs)  # type: ignore[index]


def test_each_entry_gets_its_own_word_row_whether_its_block_has_camel_case_or_not(tmp_path: Path) -> None:
    paths = build_store(tmp_path / "proj")
    filler = "plain words about the Archive writer and the README " * 30
    entries = [
        {"role": "user" if i % 5 == 0 else "tool", "text": f"{filler} {i}"} for i in range(40)
    ]  # several blocks with no camelCase
    entries[20]["text"] = "the helper is now rotateMemory"  # a block with one camelCase word
    entries[30]["text"] = "x " * 2000 + " loadSessionIndex"  # one past the word fields' 4000 characters
    data = b"".join(json.dumps(e).encode() + b"\n" for e in entries)
    (paths.sessions / "2026-11-05_100000_dddd4444.l1.jsonl").write_bytes(data)
    source = next(s for s in discover(paths) if s.rel.endswith("dddd4444.l1.jsonl"))
    work = cutting.prepare(paths, source, None, bulk_parser())

    expected: list[tuple[int, str, str]] = []
    offset = 0
    for raw in data.splitlines(keepends=True):
        entry, body = l1_entry(raw.rstrip(b"\n"))
        assert isinstance(entry, dict)
        expected.append(word_row(offset, entry.get("role"), body))
        offset += len(raw)
    assert work.words == expected
    assert len(work.blocks) > 3
    assert expected[20][1].endswith("\nrotate memory") and "load" not in expected[30][2].split("\n")[-1]


def test_each_archive_section_gets_its_own_word_row_whether_its_block_has_camel_case_or_not(
    tmp_path: Path,
) -> None:
    paths = build_store(tmp_path / "proj")
    plain = "- the Archive writer keeps the README short\n" * 60
    sections = [f"## 2026-10-{1 + i:02d} 10:00\n{plain}" for i in range(12)]
    sections[5] += "- renamed to rotateMemory\n"
    sections[9] = "## 2026-10-10 10:00\n" + "검색 " * 3000 + "loadSessionIndex\n"  # past 8000 bytes
    data = ("# memory\n\n" + "".join(sections)).encode()
    paths.archive("memory_20261012_090000.md").write_bytes(data)
    source = next(s for s in discover(paths) if s.rel.endswith("memory_20261012_090000.md"))
    work = cutting.prepare(paths, source, None)

    expected = [
        (offset, with_parts(chunk[:8000].decode("utf-8", "replace")), "")
        for offset, _line, chunk in iter_sections(data)
    ]
    assert work.words == expected
    assert len(work.blocks) > 3 and "rotate memory" in expected[6][1]
