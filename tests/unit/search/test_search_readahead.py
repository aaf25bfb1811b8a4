"""What a search asks the OS to read ahead: the index tables every keystroke reads (in the warm-up),
and the files whose lines it counts (side by side). Hints only: the answers stay the same."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.search import engine, readahead, scan_search, search
from memkeeper.core.search.sources import parse_id
from memkeeper.core.store import StorePaths
from tests.l1_data import l1_entry, store_with_memory, write_l1

PAGE = 4096


def _tree(path: Path, rows: int) -> sqlite3.Connection:
    """A database whose table ``t`` (rows of 1 KB) and index ``t_k`` span several b-tree levels."""
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA page_size={PAGE}")
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v BLOB)")
    conn.execute("CREATE TABLE other(id INTEGER PRIMARY KEY, v BLOB)")
    conn.execute("CREATE INDEX t_k ON t(k)")
    for n in range(rows):  # interleaved with another table, as an index's pages are
        conn.execute(
            "INSERT INTO t VALUES (?, ?, ?)", (n, f"key {n * 7919 % rows:08d} " + "x" * 200, b"v" * 1000)
        )
        if n % 40 == 0:
            conn.execute("INSERT INTO other VALUES (?, ?)", (n, b"o" * 60_000))
    conn.commit()
    return conn


def _dbstat(conn: sqlite3.Connection, name: str, kind: str) -> list[int]:
    return sorted(
        page
        for (page,) in conn.execute("SELECT pageno FROM dbstat WHERE name=? AND pagetype=?", (name, kind))
    )


def _advised(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """The (first byte, bytes, advice) of each posix_fadvise call, the call made still."""
    calls: list[tuple[int, int, int]] = []
    real = os.posix_fadvise

    def recording(fd: int, offset: int, length: int, advice: int) -> None:
        calls.append((offset, length, advice))
        real(fd, offset, length, advice)

    monkeypatch.setattr(os, "posix_fadvise", recording)
    return calls


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="no posix_fadvise on this OS")
@pytest.mark.parametrize("name", ["t", "t_k"])
def test_the_leaf_pages_of_a_table_and_of_an_index_are_asked_for_and_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    conn = _tree(tmp_path / "db.sqlite3", 2500)
    leaves = _dbstat(conn, name, "leaf")
    assert _dbstat(conn, name, "internal") and len(leaves) > 50  # a tree of a few levels
    (root,) = (r for _n, r in readahead.tables(conn, [name, "missing"]))
    calls = _advised(monkeypatch)
    assert readahead.prefetch(tmp_path / "db.sqlite3", PAGE, [root]) == len(leaves)
    asked = {offset // PAGE + 1 + n for offset, length, _a in calls for n in range(length // PAGE)}
    assert {advice for _o, _l, advice in calls} == {os.POSIX_FADV_WILLNEED}
    assert set(leaves) <= asked
    # read through only between leaves at most GAP pages apart: far fewer calls than pages
    for page in asked - set(leaves):
        assert any(0 < page - leaf <= readahead.GAP for leaf in leaves)
    assert 1 < len(calls) < len(leaves)
    others = {page for (page,) in conn.execute("SELECT pageno FROM dbstat WHERE name='other'")}
    assert others - asked


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="no posix_fadvise on this OS")
def test_a_table_past_the_budget_a_one_page_table_and_a_page_of_junk_are_not_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = _tree(tmp_path / "db.sqlite3", 2500)
    conn.execute("CREATE TABLE tiny(v)")
    conn.commit()
    roots = dict(readahead.tables(conn, ["t", "tiny"]))
    calls = _advised(monkeypatch)
    assert readahead.prefetch(tmp_path / "db.sqlite3", PAGE, [roots["t"]], max_pages=10) == 0
    assert readahead.prefetch(tmp_path / "db.sqlite3", PAGE, [roots["tiny"]]) == 0  # its root: read already
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x05" + os.urandom(PAGE * 4 - 1))  # an "interior page" pointing anywhere
    assert readahead.prefetch(junk, PAGE, [1, 2, 3, 99]) == 0
    assert calls == []


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="no posix_fadvise on this OS")
def test_files_are_asked_for_up_to_their_length_never_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").write_bytes(b"a\n" * 5000)
    (tmp_path / "b").write_bytes(b"b\n" * 10)
    (tmp_path / "link").symlink_to(tmp_path / "a")
    calls = _advised(monkeypatch)
    readahead.files(
        [(tmp_path / "a", 4096), (tmp_path / "gone", 10), (tmp_path / "link", 0), (tmp_path / "b", 0)]
    )
    assert calls == [(0, 4096, os.POSIX_FADV_WILLNEED), (0, 0, os.POSIX_FADV_WILLNEED)]


def _sessions(tmp_path: Path) -> StorePaths:
    store = store_with_memory(tmp_path / "proj", "# Memory\n\n## 2026-11-01_0900\n- [db]: a wombat note\n")
    for n in range(4):
        entries = [
            l1_entry(i, "user", text=f"session {n} question {i} about the wombat burrow") for i in range(30)
        ]
        write_l1(store, f"2026-11-1{n}_100000_aaaa000{n}.l1.jsonl", entries)
    return store


def test_the_warm_up_asks_for_every_table_a_keystroke_reads_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _sessions(tmp_path)
    search(store, "wombat", deep=True)  # the index built
    asked: list[list[int]] = []

    def recording(path: Path, size: int, roots: Any, *more: Any) -> int:
        asked.append(list(roots))
        return 0

    monkeypatch.setattr(readahead, "prefetch", recording)
    engine.warm_up(store, True)
    conn = sqlite3.connect(store.search_db)
    roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_schema"))
    conn.close()
    assert asked == [[roots[name] for name in engine.READ_AHEAD]]  # each of them exists
    assert roots["words_l1_docsize"] in asked[0] and roots["words_l1_data"] not in asked[0]


@pytest.mark.parametrize("exact", [False, True])
def test_the_files_whose_lines_are_counted_are_asked_for_first_and_the_hits_stay_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exact: bool
) -> None:
    store = _sessions(tmp_path)
    before = search(store, "wombat burrow", deep=True, exact=exact)
    hinted: list[list[tuple[Path, int]]] = []
    real = readahead.files

    def recording(wanted: Any) -> None:
        wanted = list(wanted)
        hinted.append(wanted)
        real(wanted)

    monkeypatch.setattr(readahead, "files", recording)
    after = search(store, "wombat burrow", deep=True, exact=exact)
    assert after == before
    if exact:
        assert after.tiers == scan_search(store, "wombat burrow", deep=True).tiers
    l1 = [hit for hit in after.tiers[-1].hits]
    assert len({hit.file for hit in l1}) >= 2 and all(hit.line for hit in l1)
    assert len(hinted) == 1 and {path.name for path, _n in hinted[0]} == {Path(hit.file).name for hit in l1}
    for path, length in hinted[0]:  # up to the last hit of each file
        offsets = [int(_offset(h.id)) for h in l1 if Path(h.file).name == path.name]
        assert length == max(offsets)


def _offset(hit_id: str) -> str:
    place = parse_id(hit_id)
    assert place is not None
    return place[2]
