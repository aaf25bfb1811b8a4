"""What a search reads from the store's files: only what the hits it returns need."""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.search import engine, hits, newest, scan_search, schema, search, sources
from memkeeper.core.search.query import parse_query
from memkeeper.core.search.sources import parse_id
from memkeeper.core.store.paths import StorePaths
from tests.l1_data import l1_entry, store_with_memory, write_l1


def _many_sessions(tmp_path: Path) -> StorePaths:
    """Three sessions (one gzipped) whose entries all hold ``quokka``, among other lines."""
    store = store_with_memory(tmp_path / "proj", "# Memory\n\n## 2026-11-01_0900\n- [db]: a quokka note\n")
    for n, name in enumerate(
        ("2026-11-18_100000_aaaa1111", "2026-11-19_100000_bbbb2222", "2026-11-20_100000_cccc3333")
    ):
        entries: list[dict[str, Any]] = []
        for i in range(40):
            entries.append(l1_entry(i, "user", text=f"session {n} question {i} about the quokka habitat"))
            entries.append(l1_entry(i, "tool_result", output=f"line {i}\nof output", result="ok"))
        path = write_l1(store, f"{name}.l1.jsonl", entries)
        if n == 0:  # an older session compressed, as compress leaves it
            path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))
            path.unlink()
    return store


def _line_in_file(store: StorePaths, file: str, offset: int) -> int:
    data = (store.root / file).read_bytes()
    if file.endswith(".gz"):
        data = gzip.decompress(data)
    return data[:offset].count(b"\n") + 1


@pytest.mark.parametrize("exact", [False, True])
def test_lines_are_counted_once_per_file_for_the_hits_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exact: bool
) -> None:
    store = _many_sessions(tmp_path)
    search(store, "quokka", deep=True)  # the index built
    asked: list[tuple[str, list[int]]] = []
    real = sources.lines_at

    def counting(path: Path, offsets: list[int], gz: bool = False) -> Any:
        asked.append((path.relative_to(store.root).as_posix(), list(offsets)))
        return real(path, offsets, gz)

    monkeypatch.setattr(hits, "lines_at", counting)
    found = search(store, "quokka", deep=True, limit=7, exact=exact).tiers[-1]
    assert found.tier == "l1" and len(found.hits) == 7 and found.total > 7
    files = [file for file, _offsets in asked]
    assert len(files) == len(set(files))  # each file read once
    shown = [x for h in found.hits for x in (h, *h.exchange)]  # a ranked L1 hit and its exchange's turns
    offsets = {(h.file, int(place[2])) for h in shown if (place := parse_id(h.id))}
    assert {(file, o) for file, found_offsets in asked for o in found_offsets} == offsets  # the hits' only
    compressed = search(store, "session 0 question 39 quokka", deep=True, exact=exact).tiers[-1].hits
    assert compressed and compressed[0].file.endswith(".gz")
    for hit in (*shown, *compressed):
        assert hit.line == _line_in_file(store, hit.file, int(hit.id.rsplit("-", 1)[1]))
    if exact:  # the same lines as the full scan counts while reading
        assert (
            search(store, "quokka", deep=True, exact=True).tiers
            == scan_search(store, "quokka", deep=True).tiers
        )


def _summary(day: int) -> str:
    themes = [{"name": f"quokka theme {n} of day {day}", "summary": f"quokka habitat {n}"} for n in range(4)]
    return json.dumps({"themes": themes, "overallSummary": f"quokka day {day} overall"})


def _summaries_into(store: StorePaths) -> None:
    for day in range(2, 31):
        store.archive(f"memory_202610{day:02d}_090000.summary.json").write_text(_summary(day), "utf-8")


def _summaries(tmp_path: Path) -> StorePaths:
    """Thirty L3 summaries whose every part holds ``quokka``; one with the oldest name is
    written after the first index build, so its docs have the newest rowids."""
    store = store_with_memory(tmp_path / "proj", "# Memory\n\n## 2026-11-01_0900\n- [db]: a quokka note\n")
    _summaries_into(store)
    search(store, "quokka", deep=True)  # the index built: names and rowids in the same order
    store.archive("memory_20261001_090000.summary.json").write_text(_summary(1), "utf-8")
    search(store, "quokka", deep=True)  # ... but for this one
    return store


@pytest.mark.parametrize("batch", [1, 3, 256])
def test_the_small_tiers_newest_matches_come_in_the_index_paths_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    store = _summaries(tmp_path)
    monkeypatch.setattr(newest, "_BATCH", batch)  # rows walked between two looks at what can go
    conn = schema.connect_readonly(store.search_db, 1.0)
    assert conn is not None
    try:
        assert newest.newest_matches(conn, "l3", "quokka") is None  # spans not read yet: sorted
        newest.spans(conn, "l3")  # as the TUI's warm-up reads them
        for text in ("quokka", "qu", "q", "habitat 3", "day 1", "없는"):
            expr = engine._expression(conn, "small", parse_query(text))
            assert isinstance(expr, str) or expr is False, text
            if expr is False:
                continue
            everything = engine._small_matches(conn, expr)  # all matches, sorted by SQLite
            for tier in ("memory", "l3"):
                walked = newest.newest_matches(conn, tier, expr)
                assert walked is not None
                assert list(walked) == [rowid for rowid, of_tier in everything if of_tier == tier], text
        every_doc = engine._small_matches(conn, None)  # what a word too common to ask for walks
        for tier in ("memory", "l3"):
            assert list(newest.newest_docs(conn, tier) or ()) == [r for r, t in every_doc if t == tier]
    finally:
        conn.close()


def _noted(rowids: Iterator[int], walked: list[int]) -> Iterator[int]:
    for rowid in rowids:
        walked.append(rowid)
        yield rowid


@pytest.mark.parametrize("cap", [1, 3, 10, 200])
def test_a_common_words_newest_matches_are_walked_not_sorted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: int
) -> None:
    store = _summaries(tmp_path)
    monkeypatch.setattr(newest, "_BATCH", 4)
    walked: list[int] = []
    real = newest.newest_matches

    def counting(*args: Any) -> Any:
        found = real(*args)
        return None if found is None else _noted(found, walked)

    monkeypatch.setattr(engine, "newest_matches", counting)
    engine.warm_up(store, deep=False)  # the spans read, as in the TUI
    monkeypatch.setattr(engine, "_small_matches", None)  # never the sort of every match
    for text in ("quokka", "q", "day 1"):
        walked.clear()
        found = search(store, text, tiers=["l3"], cap=cap, exact=True)
        assert found.tiers == scan_search(store, text, tiers=["l3"], cap=cap).tiers, (text, cap)
        if cap < 10 and text != "day 1":
            assert len(walked) <= engine._FIRST_BATCH < 30 * 5  # of about 150 matches


def test_a_tier_whose_files_are_not_numbered_in_a_row_is_not_walked() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE sources(id INTEGER PRIMARY KEY, rel TEXT, tier TEXT)")
    conn.execute("CREATE TABLE docs(rowid INTEGER PRIMARY KEY, src INTEGER, tier TEXT)")
    conn.execute("CREATE INDEX docs_src ON docs(src)")
    conn.executemany(
        "INSERT INTO sources VALUES (?, ?, ?)",
        [(1, "b.json", "l3"), (2, "a.json", "l3"), (3, "x.jsonl", "l1")],
    )
    conn.executemany("INSERT INTO docs VALUES (?, ?, 'l3')", [(1, 1), (2, 1), (3, 2), (4, 2)])
    known = newest._small_spans(conn)
    assert known == {"l3": newest.Spans([1, 3], [2, 4], [1, 0], [1, 1])}
    conn.execute("INSERT INTO docs VALUES (5, 1, 'l3')")  # b.json's docs: 1, 2 and 5
    assert newest._small_spans(conn) == {"l3": None}


def test_the_newest_files_come_as_discover_lists_them_and_only_those_read_are_stated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _many_sessions(tmp_path)
    _summaries_into(store)
    store.named("project").write_text("# Project\n\n## Goals\na quokka plan\n", "utf-8")
    listed = sources.discover(store)
    for tier in ("memory", "l3", "l2", "l1"):
        assert list(sources.newest_first(store, tier)) == [s for s in reversed(listed) if s.tier == tier]
    search(store, "quokka", deep=True)
    stated: list[str] = []
    real = sources._stat_source

    def counting(entry: Any, rel: str, tier: str, kind: str) -> Any:
        stated.append(rel)
        return real(entry, rel, tier, kind)

    monkeypatch.setattr(sources, "_stat_source", counting)
    monkeypatch.setattr(engine, "SHORT_GRAM_BYTES", 0)  # every short word counts as everywhere
    found = search(store, "q", tiers=["l1"], cap=5, exact=True, refresh=False)
    assert stated == ["sessions/2026-11-20_100000_cccc3333.l1.jsonl"]  # the newest held enough
    assert found.tiers == scan_search(store, "q", tiers=["l1"], cap=5).tiers


@pytest.fixture
def spans_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item for each time the small tiers' spans are read from the index."""
    made: list[int] = []
    real = newest._small_spans

    def counting(conn: sqlite3.Connection) -> Any:
        made.append(1)
        return real(conn)

    monkeypatch.setattr(newest, "_small_spans", counting)
    return made


def test_the_warm_up_reads_the_small_tiers_spans_once_for_the_first_keystrokes(
    tmp_path: Path, spans_read: list[int]
) -> None:
    store = _summaries(tmp_path)
    made = spans_read
    engine.warm_up(store, True)
    assert made == [1]
    for text in ("q", "qu", "quokka 3"):  # exact mode's small tiers: the spans already there
        search(store, text, deep=True, exact=True, refresh=False)
    assert made == [1]


def test_a_search_in_a_process_without_the_spans_does_not_read_them(
    tmp_path: Path, spans_read: list[int]
) -> None:
    """A one-shot ``memkeeper search`` sorts a word's matches: reading the spans would cost more."""
    store = _summaries(tmp_path)
    for text in ("quokka", "habitat 3", "없는"):
        found = search(store, text, deep=True, exact=True, refresh=False)
        assert found.tiers == scan_search(store, text, deep=True).tiers
        search(store, text, deep=True, refresh=False)  # ranked, with its trigram channel
    assert spans_read == []
