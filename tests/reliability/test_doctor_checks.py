"""`memkeeper doctor`: each check finds its problem, repair fixes it without losing data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core import doctor
from memkeeper.core.log import rotation
from memkeeper.core.store.atomic import append_bytes, atomic_write_bytes, atomic_write_json
from memkeeper.core.store.gitignore import gitignore_text
from memkeeper.core.store.memory_index import read_index, update_index
from memkeeper.core.store.paths import StorePaths


def codes(findings: list[doctor.Finding]) -> set[str]:
    return {f.code for f in findings}


def rotated_store(store: StorePaths) -> str:
    append_bytes(store.memory, b"".join(f"## 2026-01-0{i % 9 + 1}\nline {i}\n".encode() for i in range(500)))
    result = rotation.rotate(store, 1000, 100)
    assert result is not None
    return result.archive


def backup_files(store: StorePaths) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in store.backups.rglob("*"):
        if path.is_file():
            out[path.name] = path.read_bytes()
    return out


def test_healthy_store_has_no_findings(store: StorePaths) -> None:
    rotated_store(store)
    assert doctor.diagnose(store) == []
    assert doctor.repair(store) == []


def test_missing_store_is_not_an_error(tmp_path: Path) -> None:
    assert doctor.diagnose(StorePaths(tmp_path / "nowhere")) == []


def test_index_against_files(store: StorePaths) -> None:
    archive = rotated_store(store)
    atomic_write_bytes(store.root / "memory_20200101_000000.md", b"## 2020-01-01\nold text\n")

    def damage(index: dict[str, Any]) -> None:
        index["rotatedFiles"][0]["bytes"] = 5
        index["rotatedFiles"].append(dict(index["rotatedFiles"][0], file="memory_20990101_000000.md"))
        index["rotatedFiles"].append({"file": "../../etc/passwd", "summary": "x.summary.json"})
        index["rotatedFiles"].append(dict(index["rotatedFiles"][0]))

    update_index(store, damage)
    found = codes(doctor.diagnose(store))
    assert {
        "index-missing-entry",
        "index-dangling-entry",
        "index-wrong-size",
        "index-unsafe-entry",
        "index-duplicate-entry",
    } <= found
    doctor.repair(store)
    assert doctor.diagnose(store) == []
    files = [e["file"] for e in read_index(store)["rotatedFiles"]]
    assert sorted(files) == ["memory_20200101_000000.md", archive]
    # the index as it was is kept in the backups
    assert b"../../etc/passwd" in backup_files(store)["memory-index.json"]


def test_corrupt_index_is_backed_up_and_rebuilt(store: StorePaths) -> None:
    archive = rotated_store(store)
    store.index.write_bytes(b'{"rotatedFiles": [ truncated, "lastMemoryUpdateTs": "2026-01-01T00:00:00.000Z"')
    assert "index-corrupt" in codes(doctor.diagnose(store))
    doctor.repair(store)
    index = read_index(store)
    assert [e["file"] for e in index["rotatedFiles"]] == [archive]
    assert index["lastMemoryUpdateTs"] == "2026-01-01T00:00:00.000Z"
    assert b"truncated" in backup_files(store)["memory-index.json"]


def test_interrupted_rotation_is_finished_without_duplicating(store: StorePaths) -> None:
    content = b"".join(f"line {i} of the memory\n".encode() for i in range(2000))
    append_bytes(store.memory, content)
    # a rotation killed after writing its archive: memory.md untouched, no index entry
    atomic_write_bytes(store.root / "memory_20260101_000000.md", content)
    append_bytes(store.memory, b"written after the kill\n")
    assert "rotation-interrupted" in codes(doctor.diagnose(store))
    doctor.repair(store)
    memory = store.memory.read_bytes()
    assert memory.endswith(b"line 1999 of the memory\nwritten after the kill\n")
    assert len(memory) < 9600 and content.endswith(memory[: -len(b"written after the kill\n")])
    assert backup_files(store)["memory.md"] == content + b"written after the kill\n"
    assert doctor.diagnose(store) == []


def test_memory_repeating_an_indexed_archive_is_left_alone(store: StorePaths) -> None:
    archive = rotated_store(store)
    data = (store.root / archive).read_bytes()
    atomic_write_bytes(store.memory, data + b"more\n")  # the user pasted it back: not ours to trim
    assert "rotation-interrupted" not in codes(doctor.diagnose(store))


def test_interrupted_migration_leftovers_are_moved_aside(store: StorePaths) -> None:
    content = b"".join(f"## 2025-01-{d:02d}\n".encode() + b"x" * 3000 + b"\n" for d in range(1, 29))
    atomic_write_bytes(store.memory, content)
    store.backups.mkdir(mode=0o700, exist_ok=True)
    atomic_write_bytes(store.backups / "memory.md.pre-migration-20260101_000000", content)
    atomic_write_bytes(store.root / "memory_20250105_235900.md", content[:15000])
    assert "migration-interrupted" in codes(doctor.diagnose(store))
    doctor.repair(store)
    assert not (store.root / "memory_20250105_235900.md").exists()
    assert store.memory.read_bytes() == content
    assert doctor.diagnose(store) == []


def test_stale_locks_flags_and_temp_files(store: StorePaths) -> None:
    old = time.time() - 3600
    js_lock = store.root / ".rotation.lock"
    js_lock.write_text("12345")
    os.utime(js_lock, (old, old))
    flag = store.state / "job-summary.rerun"
    flag.touch()
    os.utime(flag, (old, old))
    tmp = store.root / ".memory.md.abcd.tmp"
    tmp.write_bytes(b"half a write")
    os.utime(tmp, (old, old))
    fresh = store.root / ".memory-index.json.efgh.tmp"
    fresh.write_bytes(b"being written right now")
    for path in (js_lock, flag, tmp, fresh):
        os.chmod(path, 0o600)
    found = doctor.diagnose(store)
    assert {"stale-js-lock", "stale-rerun-flag", "leftover-temp"} <= codes(found)
    assert not any(f.path and "efgh" in f.path for f in found)  # a fresh temp file is someone's write
    doctor.repair(store)
    assert not js_lock.exists() and not flag.exists() and not tmp.exists() and fresh.exists()
    assert backup_files(store)[tmp.name] == b"half a write"


def test_a_fresh_js_lock_is_not_reported(store: StorePaths) -> None:
    (store.root / ".rotation.lock").write_text("1")
    os.chmod(store.root / ".rotation.lock", 0o600)
    assert doctor.diagnose(store) == []


def test_corrupt_summary_is_backed_up_and_pending(store: StorePaths) -> None:
    archive = rotated_store(store)
    summary = store.root / archive.replace(".md", ".summary.json")
    atomic_write_bytes(summary, b'{"overallSummary": "cut o')
    update_index(store, lambda i: i["rotatedFiles"][0].__setitem__("summaryGenerated", True))
    assert "summary-corrupt" in codes(doctor.diagnose(store))
    doctor.repair(store)
    assert not summary.exists()
    assert read_index(store)["rotatedFiles"][0]["summaryGenerated"] is False
    assert backup_files(store)[summary.name] == b'{"overallSummary": "cut o'
    assert doctor.diagnose(store) == []


def test_summary_written_but_flag_not_set(store: StorePaths) -> None:
    archive = rotated_store(store)
    atomic_write_json(
        store.root / archive.replace(".md", ".summary.json"),
        {"overallSummary": "ok", "themes": [], "keyDecisions": [], "issues": []},
    )
    assert "index-summary-flag" in codes(doctor.diagnose(store))
    doctor.repair(store)
    assert read_index(store)["rotatedFiles"][0]["summaryGenerated"] is True


def test_l1_bad_lines_move_to_a_sidecar(store: StorePaths) -> None:
    l1 = store.sessions / "2026-01-01_000000_abcdef12.l1.jsonl"
    good = [json.dumps({"ts": f"2026-01-01T00:00:0{i}Z", "role": "user", "text": f"t{i}"}) for i in range(3)]
    atomic_write_bytes(l1, "\n".join([good[0], '{"ts": "cut', good[1], "garbage", good[2]]).encode())
    found = [f for f in doctor.diagnose(store) if f.code == "l1-bad-lines"]
    assert found and found[0].message.startswith("2 line(s)")
    doctor.repair(store)
    assert l1.read_text().split("\n") == good
    assert l1.with_name(l1.name + ".bad").read_text() == '{"ts": "cut\ngarbage\n'
    assert doctor.diagnose(store) == []


def test_corrupt_counters(store: StorePaths) -> None:
    atomic_write_bytes(store.counters, b"\x00\x00")
    assert "counters-corrupt" in codes(doctor.diagnose(store))
    doctor.repair(store)
    assert json.loads(store.counters.read_text())["toolUses"] == 0
    assert backup_files(store)["counters.json"] == b"\x00\x00"


def test_permissions(store: StorePaths) -> None:
    rotated_store(store)
    os.chmod(store.memory, 0o644)
    os.chmod(store.sessions, 0o755)
    found = {f.path for f in doctor.diagnose(store) if f.code == "permissions"}
    assert found == {"memory.md", "sessions"}
    doctor.repair(store)
    assert os.stat(store.memory).st_mode & 0o777 == 0o600
    assert os.stat(store.sessions).st_mode & 0o777 == 0o700
    assert doctor.diagnose(store) == []


#: The .gitignore memkeeper wrote in a private store before its text was the whitelist.
EARLIER_GITIGNORE = (
    "# memkeeper: the runtime state of one machine, never committed (the memory files are yours to commit;\n"
    "# `memkeeper share` turns on team memory and rewrites this file: core/sharing/share.py)\n"
    "/.state/\n/logs/\n/.search.sqlite3*\n/.memkeeper.lock\n/.memkeeper-adopt.lock\n/.set-aside/\n"
    "/.trash/\n/.backups/\n*.tmp\n"
    "# L1 sessions hold raw prompts and tool output: shared only by `memkeeper share --sessions`\n"
    "/sessions/\n/config.json\n/model-calls.jsonl\n"
)


def test_the_earlier_private_gitignore_is_replaced_and_a_persons_kept(store: StorePaths) -> None:
    gitignore = store.root / ".gitignore"
    gitignore.write_text(EARLIER_GITIGNORE, encoding="utf-8")
    assert "gitignore-outdated" in codes(doctor.diagnose(store))
    doctor.repair(store)
    assert gitignore.read_text("utf-8") == gitignore_text("private")
    assert backup_files(store)[".gitignore"] == EARLIER_GITIGNORE.encode()
    assert doctor.diagnose(store) == []
    gitignore.write_text("# mine\n/.state/\n", encoding="utf-8")
    assert "gitignore-outdated" not in codes(doctor.diagnose(store))


def test_memory_not_utf8_is_reported_not_touched(store: StorePaths) -> None:
    atomic_write_bytes(store.memory, b"ok\n\xff\xfe broken\n")
    found = [f for f in doctor.repair(store) if f.code == "memory-not-utf8"]
    assert found and not found[0].repaired and not found[0].fixable
    assert store.memory.read_bytes() == b"ok\n\xff\xfe broken\n"


def run_cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(project), "doctor", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )


def test_cli_exit_codes_and_json(store: StorePaths) -> None:
    rotated_store(store)
    healthy = run_cli(store.project)
    assert healthy.returncode == 0 and "healthy" in healthy.stdout
    atomic_write_bytes(store.root / "memory_20200101_000000.md", b"orphan\n")
    found = run_cli(store.project)
    assert found.returncode == 1 and "not in the index" in found.stdout and "--repair" in found.stdout
    data = json.loads(run_cli(store.project, "--json").stdout)
    assert data["healthy"] is False and data["findings"][0]["code"] == "index-missing-entry"
    fixed = run_cli(store.project, "--repair")
    assert fixed.returncode == 0 and "repaired" in fixed.stdout
    assert run_cli(store.project).returncode == 0
    atomic_write_bytes(store.memory, b"\xff")
    stuck = run_cli(store.project, "--repair")
    assert stuck.returncode == 1 and "cannot repair" in stuck.stdout


@pytest.mark.parametrize("name", ["[bold red]markup.l1.jsonl", "\x1b[31mred.l1.jsonl"])
def test_cli_shows_hostile_file_names_literally(store: StorePaths, name: str) -> None:
    atomic_write_bytes(store.sessions / name, b"not json\n")
    out = run_cli(store.project)
    assert out.returncode == 1
    assert "\x1b" not in out.stdout
    if "[bold" in name:
        assert "[bold red]markup" in out.stdout


def test_duplicate_archive_pair_is_found_and_fixed(store: StorePaths) -> None:
    archive = rotated_store(store)
    text = store.archive(archive).read_bytes()
    twin = "memory_20990101_000000.md"
    atomic_write_bytes(store.archive(twin), text)
    rotation.reconcile_archives(store)  # listed too, as a repeated rotation would list it
    found = [f for f in doctor.diagnose(store) if f.code == "archive-duplicate"]
    assert [f.path for f in found] == [twin]
    doctor.repair(store)
    assert not store.archive(twin).exists() and store.archive(archive).read_bytes() == text
    assert backup_files(store)[twin] == text  # moved aside, not deleted
    assert [e["file"] for e in read_index(store)["rotatedFiles"]] == [archive]
    assert doctor.diagnose(store) == []


def test_js_modes_are_a_note_and_the_store_is_healthy(store: StorePaths) -> None:
    rotated_store(store)
    for path in [store.root, *store.root.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)  # what the JS plugin leaves
    findings = doctor.diagnose(store)
    assert findings and {f.severity for f in findings} == {"note"}
    assert doctor.problems_left(findings) == []
    result = run_cli(store.project)
    assert result.returncode == 0, result.stdout
    assert "healthy" in result.stdout and "note" in result.stdout
    doctor.repair(store)
    assert doctor.diagnose(store) == []


def test_every_check_declares_its_codes() -> None:
    for check in doctor.CHECKS:
        assert check.codes, type(check).__name__
    all_codes = [code for check in doctor.CHECKS for code in check.codes]
    assert len(all_codes) == len(set(all_codes))


def test_an_interrupted_rotation_intent_is_reported_and_completed(store: StorePaths) -> None:
    from memkeeper.core.basics.tokens import extract_tail_bytes
    from memkeeper.core.store import intents

    content = b"".join(f"## 2026-01-0{i % 9 + 1}\nline {i}\n".encode() for i in range(500))
    atomic_write_bytes(store.memory, content)
    name = "memory_20260101_000000.md"
    carry = extract_tail_bytes(content, 100)
    intents.record(
        store, "rotation", {"archive": name, "bytes": len(content), "carryoverBytes": len(carry), "tokens": 1}
    )
    atomic_write_bytes(store.archive(name), content)  # killed after the archive, before memory.md
    assert "operation-interrupted" in codes(doctor.diagnose(store))
    doctor.repair(store)
    assert store.memory.read_bytes() == carry and store.archive(name).read_bytes() == content
    assert [e["file"] for e in read_index(store)["rotatedFiles"]] == [name]
    assert not intents.pending(store) and doctor.diagnose(store) == []


def _simulate_read_only(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store as on a read-only file system: any open for writing under it fails with EROFS
    (and ``access`` says so), whoever runs the test."""
    import errno

    root = str(store.root)
    real_open, real_access = os.open, os.access
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def under(path: Any) -> bool:
        return not isinstance(path, int) and os.path.abspath(os.fspath(path)).startswith(root)

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & writes and under(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        return False if mode & os.W_OK and under(path) else real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "access", access)


def _really_read_only(store: StorePaths) -> Any:
    """The store on a read-only bind mount of itself (root, where mounts are allowed); else a skip.
    Not by modes: memkeeper restores the modes of its own folders."""
    from contextlib import contextmanager

    @contextmanager
    def read_only() -> Any:
        if not (hasattr(os, "geteuid") and os.geteuid() == 0):
            pytest.skip("a read-only store needs a read-only mount (root)")
        root = str(store.root)
        if subprocess.run(["mount", "--bind", root, root], capture_output=True, check=False).returncode:
            pytest.skip("no mount allowed here")
        try:
            remount = ["mount", "-o", "remount,bind,ro", root]
            if subprocess.run(remount, capture_output=True, check=False).returncode != 0:
                pytest.skip("no read-only bind mount here")
            yield
        finally:
            subprocess.run(["umount", root], capture_output=True, check=False)

    return read_only()


def _with_a_leftover(store: StorePaths) -> Path:
    rotated_store(store)
    tmp = store.root / ".memory.md.abcd.tmp"
    tmp.write_bytes(b"half a write")
    os.chmod(tmp, 0o600)
    old = time.time() - 3600
    os.utime(tmp, (old, old))
    return tmp


@pytest.mark.parametrize("how", ["simulated", "real"])
def test_a_read_only_store_is_diagnosed_as_such_and_still_checked(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """``doctor`` used to fail on its first lock (opened for writing); now it says the store is
    read-only, runs the checks that only read, and a repair changes nothing."""
    tmp = _with_a_leftover(store)
    before = {p: p.read_bytes() for p in store.root.rglob("*") if p.is_file()}
    if how == "simulated":
        _simulate_read_only(store, monkeypatch)
        found, repaired = doctor.diagnose(store), doctor.repair(store)
    else:
        with _really_read_only(store):
            found, repaired = doctor.diagnose(store), doctor.repair(store)
            cli = run_cli(store.project)
        assert cli.returncode == 1 and "read-only" in cli.stdout, cli.stdout + cli.stderr
    assert codes(found) == {"store-read-only", "leftover-temp"}  # said, and the others still ran
    assert codes(repaired) == codes(found) and not any(f.repaired for f in repaired)
    assert tmp.exists() and {p: p.read_bytes() for p in store.root.rglob("*") if p.is_file()} == before


def test_a_failed_summary_is_a_note_that_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``status`` lists a failed summary: doctor says so too (healthy all the same: nothing is damaged)."""
    from memkeeper.cli.main import main
    from memkeeper.core.demo import create_demo_store

    store = create_demo_store(tmp_path / "demo")  # one archive's summary failed (529 overloaded)
    found = [f for f in doctor.diagnose(store) if f.code == "summary-failed"]
    assert len(found) == 1 and found[0].severity == doctor.NOTE and not found[0].fixable
    assert "529" in found[0].message and "memkeeper regenerate" in found[0].message
    capsys.readouterr()
    assert main(["--project", str(store.project), "doctor"]) == 0
    out = capsys.readouterr().out
    assert "note: the summary of memory_" in out and "failed" in out
    assert "tidies them" not in out  # nothing for --repair to tidy
    assert [f.code for f in doctor.repair(store) if f.code == "summary-failed"] == ["summary-failed"]
