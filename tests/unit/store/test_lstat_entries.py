"""Listing a store folder without following a link: boundary.lstat_entries and its two users,
the recall state's pruning and the pulled files made private again."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest

from memkeeper.core.log.pulled import private_modes
from memkeeper.core.recall import lookup
from memkeeper.core.store.boundary import lstat_entries
from memkeeper.core.store.paths import StorePaths, ensure_store

needs_links = pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")


@needs_links
def test_entries_are_lstat_and_a_missing_folder_is_empty(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.txt").write_text("a", "utf-8")
    outside = tmp_path / "outside.txt"
    outside.write_text("outside", "utf-8")
    (folder / "link").symlink_to(outside)
    found = {name: (path, status) for name, path, status in lstat_entries(str(folder))}
    assert set(found) == {"a.txt", "link"}
    assert found["a.txt"][0] == os.path.join(str(folder), "a.txt")
    assert stat.S_ISLNK(found["link"][1].st_mode)  # the link itself, not what it points at
    assert list(lstat_entries(str(folder / "missing"))) == []


@pytest.mark.skipif(os.name == "nt", reason="file modes")
def test_private_modes_changes_only_open_regular_files(tmp_path: Path) -> None:
    paths = StorePaths(tmp_path)
    ensure_store(paths)
    shared = paths.root / "memory_20261129_100000.md"
    shared.write_text("x", "utf-8")
    shared.chmod(0o644)
    private = paths.sessions / "s.l1.jsonl"
    private.write_text("{}\n", "utf-8")
    private.chmod(0o600)
    assert private_modes(paths) == [shared.name]
    assert stat.S_IMODE(shared.stat().st_mode) == 0o600
    assert private_modes(paths) == []


def test_prune_removes_only_state_older_than_its_age(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    old = folder / "old.json"
    new = folder / "new.json"
    old.write_text("{}", "utf-8")
    new.write_text("{}", "utf-8")
    past = time.time() - lookup.STATE_MAX_AGE_SECONDS - 60
    os.utime(old, (past, past))
    lookup._prune(str(folder))
    assert sorted(p.name for p in folder.iterdir()) == ["new.json"]
    lookup._prune(str(folder / "missing"))  # nothing to list: nothing happens
