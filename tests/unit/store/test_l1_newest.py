"""The newest L1 names SessionStart reads, kept in .state so a hook never lists 50,000 sessions."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memkeeper.core.capture.l1_newest import KEEP, NEWEST_FILE, newest_l1_names
from memkeeper.core.store.paths import StorePaths


def _session(store: StorePaths, day: int, n: int) -> str:
    name = f"2026-10-{day:02d}_10{n:04d}_{n:08x}.l1.jsonl"
    (store.sessions / name).write_text('{"role": "user", "text": "hi"}\n', encoding="utf-8")
    return name


def _age_folder(store: StorePaths, seconds: int = 5) -> None:
    """Make the sessions folder's last change ``seconds`` old (as it is when a session starts)."""
    info = os.stat(store.sessions)
    os.utime(store.sessions, ns=(info.st_atime_ns, time.time_ns() - seconds * 10**9))


@pytest.fixture
def many(store: StorePaths) -> list[str]:
    names = [_session(store, 1 + i % 28, i) for i in range(KEEP * 3)]
    (store.sessions / "2026-10-01_100000_aaaaaaaa.l1.jsonl.gz").write_bytes(b"")  # compressed: not read
    (store.sessions / "notes.txt").write_text("x")
    _age_folder(store)
    return sorted(names, reverse=True)


def test_the_newest_names_are_those_of_a_listing_and_saved(store: StorePaths, many: list[str]) -> None:
    assert newest_l1_names(str(store.root), 5) == many[:5]
    saved = json.loads((store.state / NEWEST_FILE).read_text())
    assert saved["names"] == many[:KEEP]


def test_an_unchanged_folder_is_not_listed_again(
    store: StorePaths, many: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    newest_l1_names(str(store.root))

    def no_listing(path: str) -> list[str]:
        raise AssertionError(f"listed {path}")

    monkeypatch.setattr(os, "listdir", no_listing)  # the module l1_newest calls
    assert newest_l1_names(str(store.root), 16) == many[:16]


def test_a_new_session_file_is_seen(store: StorePaths, many: list[str]) -> None:
    newest_l1_names(str(store.root))
    newer = _session(store, 30, 1)
    _age_folder(store, 3)
    assert newest_l1_names(str(store.root), 3) == [newer, *many[:2]]
    (store.sessions / newer).unlink()  # forgotten
    _age_folder(store, 2)
    assert newest_l1_names(str(store.root), 3) == many[:3]


def test_a_folder_changed_this_moment_is_saved_only_by_a_settling_writer(
    store: StorePaths, many: list[str]
) -> None:
    """A listing in the clock tick of a change could miss a file created in that tick: a hook does not save it."""
    newest_l1_names(str(store.root))
    saved = (store.state / NEWEST_FILE).read_text()
    newer = _session(store, 30, 2)  # the folder changed just now
    assert newest_l1_names(str(store.root), 1) == [newer]
    assert (store.state / NEWEST_FILE).read_text() == saved  # answered, not saved
    assert newest_l1_names(str(store.root), 1, settle=True) == [newer]
    assert json.loads((store.state / NEWEST_FILE).read_text())["names"][0] == newer


def test_names_from_the_saved_file_are_checked(store: StorePaths, many: list[str]) -> None:
    newest_l1_names(str(store.root))
    path = store.state / NEWEST_FILE
    saved = json.loads(path.read_text())
    saved["names"] = ["../../outside.l1.jsonl", "/etc/passwd.l1.jsonl", 7, "memory.md", many[0]]
    path.write_text(json.dumps(saved))
    assert newest_l1_names(str(store.root)) == [many[0]]


def test_an_unreadable_saved_file_means_a_listing(store: StorePaths, many: list[str]) -> None:
    (store.state / NEWEST_FILE).write_text("{not json")
    assert newest_l1_names(str(store.root), 2) == many[:2]
    assert json.loads((store.state / NEWEST_FILE).read_text())["names"][:2] == many[:2]


def test_no_sessions_folder(tmp_path: Path) -> None:
    assert newest_l1_names(str(tmp_path / "nowhere")) == []
