"""A bulk build writes some tables (the trigram indexes, the archive word index, the titles) in
a helper process (side.py) and takes them over at the end: exact search answers as the full
scan does, ranked search as a build without the helper, a build cut short is rebuilt, and a
helper that cannot start leaves the writer to write them itself."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from memkeeper.core.search import indexer, refresh, scan_search, side
from memkeeper.core.search import schema as search_schema
from memkeeper.core.search import search as any_search
from memkeeper.core.store.paths import StorePaths

from .conftest import l1_lines, refresh_cut_short
from .test_search_index import QUERIES

OPTIONS: list[dict[str, Any]] = [{}, {"deep": True}, {"tiers": ["l1"]}, {"tiers": ["l2"], "deep": True}]


def same_as_scan(paths: StorePaths, query: str, **options: Any) -> None:
    indexed = any_search(paths, query, exact=True, **options)
    assert indexed.source == "index", indexed.warnings
    assert indexed.tiers == scan_search(paths, query, **options).tiers, f"{query!r} {options}"


@pytest.fixture
def takes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every load counts as a bulk one; the list records each take of a helper's tables."""
    monkeypatch.setattr(indexer, "BULK_BYTES", 0)
    monkeypatch.setattr(indexer, "SIDE_BYTES", 0)
    taken: list[int] = []
    real = side.SideWriter.take

    def take(self: side.SideWriter, conn: sqlite3.Connection) -> None:
        taken.append(1)
        real(self, conn)

    monkeypatch.setattr(side.SideWriter, "take", take)
    return taken


def more_sessions(paths: StorePaths, count: int) -> None:
    for i in range(count):
        text = l1_lines(
            f"side{i:04d}",
            "2026-11-03",
            [("user", f"question {i:04d} about the lantern"), ("assistant", f"answer{i:04d} glows")],
        )
        (paths.sessions / f"2026-11-03_10{i:04d}_cccc{i:04d}.l1.jsonl").write_text(text, "utf-8")


def fts_checked(paths: StorePaths) -> dict[str, str | None]:
    """FTS5's own integrity check of the trigram tables, and what the index's meta says."""
    conn = sqlite3.connect(paths.search_db)
    try:
        for table in search_schema.BIG_COLUMNS:
            conn.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()


def test_a_bulk_build_takes_the_helpers_trigrams_and_answers_as_the_scan(
    store: StorePaths, takes: list[int]
) -> None:
    more_sessions(store, 6)
    refresh(store)
    assert takes == [1]
    assert search_schema.TAKE_PENDING not in fts_checked(store)
    assert not store.side_scratch.exists()
    for options in OPTIONS:
        for query in [*QUERIES, "lantern", "answer0003", "0005 about"]:
            same_as_scan(store, query, **options)


def test_a_rebuild_takes_them_too_and_later_appends_go_to_the_index(
    store: StorePaths, takes: list[int]
) -> None:
    refresh(store)
    more_sessions(store, 3)
    indexer.reindex(store)  # a reset: the old trigram tables are replaced whole
    assert takes == [1, 1]
    fts_checked(store)
    with (store.sessions / "2026-11-03_100001_cccc0001.l1.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("\n" + l1_lines("side0001", "2026-11-03", [("assistant", "appended marigold")]))
    refresh(store)  # into tables that hold rows now: written by the index's own writer
    assert takes == [1, 1]
    for query in ("marigold", "lantern", "answer0002", "sqlite"):
        same_as_scan(store, query, deep=True)


def test_a_build_cut_short_before_the_take_is_rebuilt(
    store: StorePaths, takes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its first files were committed with their words but without trigram rows (those wait in
    the helper): the next refresh must not take them as indexed."""
    monkeypatch.setattr(indexer, "COMMIT_BYTES", 1)  # commit after every file
    more_sessions(store, 8)
    refresh_cut_short(store, 8)  # what a user's Ctrl-C does to a reindex
    assert takes == []
    assert fts_checked(store).get(search_schema.TAKE_PENDING) == "1"
    assert not store.side_scratch.exists()
    monkeypatch.setattr(indexer, "BULK_BYTES", 32 << 20)  # the next refresh is a small one
    monkeypatch.setattr(indexer, "SIDE_BYTES", 256 << 20)
    refresh(store)
    assert search_schema.TAKE_PENDING not in fts_checked(store)
    for query in ("lantern", "answer0000", "sqlite", "flock"):
        same_as_scan(store, query, deep=True)


def test_without_a_helper_the_writer_writes_the_trigrams(store: StorePaths, takes: list[int]) -> None:
    store.state.mkdir(parents=True, exist_ok=True)
    store.side_scratch.mkdir()  # the scratch file cannot be made
    more_sessions(store, 2)
    refresh(store)
    assert takes == []
    assert search_schema.TAKE_PENDING not in fts_checked(store)
    for query in ("lantern", "answer0001", "sqlite", "검색"):
        same_as_scan(store, query, deep=True)


def test_ranked_answers_are_those_of_a_build_without_the_helper(
    store: StorePaths, takes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The archive word index and the titles come from the helper: same scores, same hits."""
    more_sessions(store, 5)
    questions = [
        "why is the rotation lock stuck",
        "lantern question",
        "sqlite search",
        "플러그인 회전",
        "hooks",
    ]
    refresh(store)
    assert takes == [1]
    with_helper = [any_search(store, q, deep=True).tiers for q in questions]
    monkeypatch.setattr(side.SideWriter, "start", classmethod(lambda _cls, _conn, _scratch: None))
    indexer.reindex(store)
    assert takes == [1]
    assert [any_search(store, q, deep=True).tiers for q in questions] == with_helper
    assert any(tier.hits for tiers in with_helper for tier in tiers)


def test_a_helper_that_fails_fails_that_build_and_the_next_ones_go_without_it(
    store: StorePaths, takes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    more_sessions(store, 4)
    real_add = side.SideWriter.add

    def add_to_no_table(self: side.SideWriter, table: str, rows: Any) -> None:
        real_add(self, "no_such_table", rows)  # the helper's insert raises

    with monkeypatch.context() as patched:
        patched.setattr(side.SideWriter, "add", add_to_no_table)
        with pytest.raises(side.SideFailed):
            indexer.reindex(store)
    assert side.failed_mark(store.side_scratch).exists()
    assert not store.side_scratch.exists()
    refresh(store)  # the writer alone
    assert takes == []
    assert search_schema.TAKE_PENDING not in fts_checked(store)
    for query in ("lantern", "answer0003", "sqlite", "검색"):
        same_as_scan(store, query, deep=True)
