"""``memkeeper search`` lists nothing to look for links (its cost stays flat with the store's size):
it checks the store folder, the folders it reads and the index, and opens every file without
following a link. So a link anywhere in the store, planted before the first search or after the
index was built, is never followed: the search says so in one line when it meets one, and its
target's words are never found."""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from memkeeper.cli.main import main as cli_main
from memkeeper.core.search import refresh
from memkeeper.core.store.paths import StorePaths
from tests.reliability.links import link_in_place

SESSION = "5ec12e75-2222-4000-8000-000000000002"
L1_NAME = "2026-05-01_100000_5ec12e75.l1.jsonl"
ARCHIVE = "memory_20260501_100000.md"
SUMMARY = "memory_20260501_100000.summary.json"
SECRET = "zanzibarquux"  # only the targets outside hold it

#: name inside the store -> whether the outside target is a folder
PLACEMENTS: dict[str, bool] = {
    "memory.md": False,
    ARCHIVE: False,
    SUMMARY: False,
    "project.md": False,
    "sessions": True,
    f"sessions/{L1_NAME}": False,
    "sessions/2026-05-02_100000_aaaaaaaa.l1.jsonl": False,
    ".state": True,
    ".search.sqlite3": False,
    "logs": True,
    ".trash": True,
}


def _fill(store: StorePaths) -> None:
    store.memory.write_text("## 2026-05-01\n- [decision]: use sqlite for the rotation lock\n")
    (store.root / ARCHIVE).write_text("## 2026-04-01\n- [note]: archived rotation notes\n")
    (store.root / SUMMARY).write_text(json.dumps({"overall": "rotation work", "decisions": []}))
    (store.root / "project.md").write_text("# project\nrotation\n")
    line = {"ts": "2026-05-01T10:00:00.000Z", "role": "user", "text": "rotation lock", "session": SESSION}
    (store.sessions / L1_NAME).write_text(json.dumps(line) + "\n")
    (store.root / "logs").mkdir(exist_ok=True)
    (store.root / ".trash").mkdir(exist_ok=True)


def _outside(tmp_path: Path, folder: bool) -> Path:
    target = tmp_path / "outside" / ("dir" if folder else "file")
    target.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"ts": "2026-05-02T10:00:00.000Z", "role": "user", "text": SECRET}) + "\n"
    if folder:
        target.mkdir()
        (target / L1_NAME).write_text(line)
        (target / "2026-05-03_100000_cccccccc.l1.jsonl").write_text(line)
    else:
        target.write_text(f"## 2026-05-02\n- [note]: {SECRET}\n{line}")
    return target


def _snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(root)): (p.lstat().st_mode, p.read_bytes() if p.is_file() else b"")
        for p in [root, *root.rglob("*")]
    }


def _search(store: StorePaths, *words: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(["--project", str(store.project), "search", *words, "--deep"])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("indexed_first", [False, True], ids=["before-the-first-search", "after-indexing"])
@pytest.mark.parametrize("placement", list(PLACEMENTS))
def test_a_link_is_never_followed_by_a_search(
    placement: str, indexed_first: bool, store: StorePaths, tmp_path: Path
) -> None:
    _fill(store)
    if indexed_first:
        refresh(store)
    target = _outside(tmp_path, PLACEMENTS[placement])
    link = link_in_place(store.root, placement, target)
    before = _snapshot(target.parent)

    for words in ((SECRET,), ("rotation", "lock"), (SECRET, "rotation")):
        code, out, err = _search(store, *words)
        found = out.replace(" ".join(words), "")  # the query is echoed; the hits are what count
        assert SECRET not in found and SECRET not in err
        if code not in (0, 3):  # refused: one line naming the link
            assert code == 2 and err.count("\n") == 1 and "symbolic link" in err and str(link) in err, err
        elif words == (SECRET,):
            assert code == 3, out

    assert _snapshot(target.parent) == before
    assert link.is_symlink() and os.readlink(link) == str(target)


def test_a_search_of_a_clean_store_lists_no_folder(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search's guard looks at a few paths, never at the store's listing (the index's own
    freshness check may list a folder whose time changed; not a clean, unchanged one)."""
    _fill(store)
    refresh(store)
    assert _search(store, "rotation")[0] == 0
    from memkeeper.core.store import boundary

    def listed(*_args: object, **_kwargs: object) -> list[str]:
        raise AssertionError("the search listed the whole store for links")

    monkeypatch.setattr(boundary, "store_links", listed)
    code, out, _err = _search(store, "rotation", "lock")
    assert code == 0 and "rotation lock" in out


@pytest.mark.parametrize("indexed_first", [False, True], ids=["before-the-first-search", "after-indexing"])
@pytest.mark.parametrize("placement", ["memory.md", "project.md"])
def test_a_linked_memory_file_is_refused_before_its_target_is_looked_at(
    placement: str, indexed_first: bool, store: StorePaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not even the target's metadata is read (a stat through the link), let alone the target opened:
    the link is seen by ``lstat`` and refused first. The target is a FIFO where the OS has them
    (opening one for reading would block the search)."""
    _fill(store)
    if indexed_first:
        refresh(store)
    target = tmp_path / "outside" / "fifo"
    target.parent.mkdir()
    if hasattr(os, "mkfifo"):
        os.mkfifo(target)
    else:
        target.write_text(SECRET)
    link = link_in_place(store.root, placement, target)
    followed: list[str] = []
    real_stat = os.stat

    def stat(path: Any, *args: Any, follow_symlinks: bool = True, **kwargs: Any) -> os.stat_result:
        if follow_symlinks and not isinstance(path, int) and os.path.islink(path):
            followed.append(str(os.fspath(path)))
        return real_stat(path, *args, follow_symlinks=follow_symlinks, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    code, _out, err = _search(store, "rotation")
    assert code not in (0, 3) and str(link) in err  # refused, naming the link
    assert followed == []
