"""What a search asks the OS to read ahead: the index tables every keystroke reads (in the warm-up),
and the files whose lines it counts (side by side). Hints only: the answers stay the same."""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.search import blocks, engine, readahead, scan_search, search, sources
from memkeeper.core.search.query import parse_query
from memkeeper.core.search.sources import newest_first, parse_id
from memkeeper.core.store.paths import StorePaths
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
            l1_entry(i, "user", text=f"session {n} question {i} about the wombat burrow") for i in range(3)
        ]
        write_l1(store, f"2026-11-1{n}_100000_aaaa000{n}.l1.jsonl", entries)
    return store


def test_the_warm_up_asks_for_every_table_a_keystroke_reads_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _sessions(tmp_path)
    archives = [store.root / f"memory_202611{day:02d}_090000.md" for day in range(1, 12)]
    for path in archives:
        path.write_text("# Memory\n\n## 2026-11-01_0900\n- [db]: an archived wombat\n", "utf-8")
    search(store, "wombat", deep=True)  # the index built
    asked: list[list[int]] = []

    def recording(path: Path, size: int, roots: Any, *more: Any) -> int:
        asked.append(list(roots))
        return 0

    monkeypatch.setattr(readahead, "prefetch", recording)
    files: list[tuple[Path, int]] = []
    monkeypatch.setattr(readahead, "files", lambda wanted: files.extend(wanted))
    engine.warm_up(store, True)
    newest = sorted(store.sessions.iterdir(), reverse=True)[: engine.NEWEST_FILES["l1"]]
    newest += archives[::-1][: engine.NEWEST_FILES["l2"]]
    assert files == [(path, 0) for path in newest]
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
    l1 = [x for hit in after.tiers[-1].hits for x in (hit, *hit.exchange)]  # a ranked hit's exchange too
    assert len({hit.file for hit in l1}) >= 2 and all(hit.line for hit in l1)
    assert len(hinted) == 1 and {path.name for path, _n in hinted[0]} == {Path(hit.file).name for hit in l1}
    for path, length in hinted[0]:  # up to the last hit (or turn of an exchange) of each file
        offsets = [int(_offset(h.id)) for h in l1 if Path(h.file).name == path.name]
        assert length == max(offsets)


def _offset(hit_id: str) -> str:
    place = parse_id(hit_id)
    assert place is not None
    return place[2]


def _odd_sessions(tmp_path: Path) -> StorePaths:
    """Sessions whose lines a backwards reader could get wrong: blank, broken, BOM, CRLF, a last
    line without its newline, one holding only a newline, a gzipped one, Korean and upper case."""
    store = store_with_memory(tmp_path / "proj", "# Memory\n")
    for n in range(3):
        entries = [
            l1_entry(
                i, "user" if i % 3 else "assistant", text=f"Lock {n}.{i} 검색 레벨 rotation {'x' * (i % 7)}"
            )
            for i in range(25)
        ]
        write_l1(store, f"2026-11-0{n + 1}_100000_aaaa000{n}.l1.jsonl", entries)
    odd = (
        b"\n"
        + json.dumps(l1_entry(1, "user", text="first lock line")).encode()
        + b"\n\n{broken lock\n"
        + b"\xef\xbb\xbf"
        + json.dumps(l1_entry(2, "user", text="bom LOCK line")).encode()
        + b"\r\n"
        + json.dumps(l1_entry(3, "assistant", text="검색 at the end, no newline lock")).encode()
    )
    (store.sessions / "2026-11-05_100000_bbbb0000.l1.jsonl").write_bytes(odd)
    (store.sessions / "2026-11-06_100000_bbbb0001.l1.jsonl").write_bytes(b"\n")
    zipped = json.dumps(l1_entry(4, "user", text="a zipped lock 검색")).encode() + b"\n"
    (store.sessions / "2026-11-04_100000_cccc0000.l1.jsonl.gz").write_bytes(gzip.compress(zipped * 3))
    return store


@pytest.mark.parametrize("text", ["lock", "l", "검", "검색 lock", "LOCK 1.2", "o", "nowhere"])
@pytest.mark.parametrize("cap", [1, 4, 30, 1000])
def test_a_session_scanned_from_its_end_gives_the_newest_matches_every_line_read_forwards_gives(
    tmp_path: Path, text: str, cap: int
) -> None:
    store = _odd_sessions(tmp_path)
    query = parse_query(text)
    filters = engine.make_filters(True, cap=cap, limit=cap)
    # the oracle: every doc of every session read forwards, the newest cap + 1 matches kept
    forwards = [
        d for d in engine.iter_all_docs(store) if d.tier == "l1" and engine._wanted(d, query, filters)
    ]
    newest = forwards[::-1][: cap + 1]
    kept = newest[:cap][::-1]
    expected = engine.rank("l1", kept, query, filters, len(newest) > cap)
    got = engine._scan_tier(store, newest_first(store, "l1"), "l1", query, filters)
    assert got == expected
    assert [h.line for h in got.hits] == [h.line for h in expected.hits]


#: Lines as the L1 writer and the JS plugin write them, and odd ones (JSON, one a line).
_LINES = [
    json.loads(line)
    for line in (
        '{"ts": "2026-11-20T10:01:00.000Z", "role": "user", "text": "Rotate the lock", "session": "c046dade-0ef2"}',
        '{"ts": "2026-11-20T10:02:00.000Z", "role": "tool_result", "result": "error", "output": "no", "session": "ab12"}',
        '{"ts": "2026-11-20T10:03:00.000Z", "role": "tool", "tool": "Bash", "input": {"session": "zzz", "ts": "T9"}}',
        '{"role": "assistant", "text": "quote \\" and \\\\ backslash", "uuid": "fff", "ts": "2026Z"}',
        '{"text": "ts first? no", "ts": "2026-11-20T10:04:00.000Z", "agentId": "qq", "sidechain": true}',
        '{"ts": "2026-11-20T10:05:00.000Z", "role": "user", "text": "Zebra 검색", "session": "odd\\"id"}',
        '{"ts": "2026-11-20T10:06:00.000Z", "role": "user", "text": "tail", "note": {"session": "deep", "role": "x"}}',
        '{"ts": "2026-11-20T10:07:00.000Z", "role": "assistant", "text": "번역", "extra": [1, {"uuid": "u"}]}',
    )
]


@pytest.mark.parametrize("entry", _LINES)
@pytest.mark.parametrize("spaced", [False, True])
def test_what_an_l1_line_is_searched_for_keeps_every_byte_its_body_comes_from(
    entry: dict[str, Any], spaced: bool
) -> None:
    """Any piece of the body found by the full parse is found in the line's text the anchor
    reads; only the leading and trailing bookkeeping members go."""
    line = json.dumps(entry, ensure_ascii=False, separators=(", ", ": ") if spaced else (",", ":")).encode()
    doc = sources.l1_doc("sessions/x.l1.jsonl", None, None, 0, 1, line)
    assert doc is not None
    body = doc.body.lower()
    kept = blocks.l1_text(line)
    for size in (1, 2, 3, 5):
        for at in range(len(body) - size + 1):
            text = body[at : at + size]
            if text.strip() and '"' not in text:
                assert blocks.Anchor(parse_query(text)).may_match(kept), (text, kept)
    if not spaced and line.startswith(b'{"ts":"2026-11-20T10'):
        assert b"2026-11-20T10" not in kept  # the timestamp no longer matches every line's 't' and 'z'
