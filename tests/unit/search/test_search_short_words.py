"""Words of one or two characters (``검색``, ``db``) are answered through the index, exactly
as the full scan answers them: at the end of a file or block too, mixed with long words,
after appends; and the scan itself reads the newest files first, one at a time."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from memkeeper.core.search import engine, refresh, scan_search, sources
from memkeeper.core.search import search as any_search
from memkeeper.core.search.query import fts_expression, parse_query, prefix_range
from memkeeper.core.search.sources import BLOCK_BYTES, SourceFile
from memkeeper.core.store.paths import StorePaths

SHORT_QUERIES = [
    "검색",
    "버그",
    "세션",
    "검",
    "션",
    "그",
    "db",
    "ok",
    "a",
    "ä",
    "검색 sqlite",
    "버그 rotation",
    "db 검색",
    "세션 파일",
    '"검색"',
    "끝말",  # only ever the last word of a file or block
    "없는",  # nowhere
    "zz",
]


def search(*args: Any, **kwargs: Any) -> Any:
    """These tests check the exact (grep-like) mode against the full-scan oracle."""
    return any_search(*args, exact=True, **kwargs)


def no_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any fallback to reading the files, or walking a small tier whole, fail the test."""

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the index fell back to a full scan")

    real_small = engine._index_small_tier

    def small_through_index(*args: Any) -> Any:
        assert args[4] is not None, "a small tier was walked whole"
        return real_small(*args)

    monkeypatch.setattr(engine, "_scan_tier", refuse)
    monkeypatch.setattr(engine, "_index_small_tier", small_through_index)


def same_by_index(paths: StorePaths, monkeypatch: pytest.MonkeyPatch, query: str, **options: Any) -> Any:
    scanned = scan_search(paths, query, **options)
    with monkeypatch.context() as patch:
        no_scan(patch)
        indexed = search(paths, query, **options)
    assert indexed.source == "index", indexed.warnings
    assert indexed.tiers == scanned.tiers, f"{query!r} {options}"
    return indexed


def add_short_word_files(paths: StorePaths) -> None:
    """Files whose last characters, and the last entry of every block, are short words."""
    # a small-tier file and an archive ending in a two-character word (no final newline)
    paths.named("conventions").write_text("## 규칙\n- 마지막 단어는 끝말", "utf-8")
    paths.archive("memory_20261012_110000.md").write_text(
        "## 2026-10-12_1000\n- [끝]: 마지막 단어는 끝말", "utf-8"
    )
    # an L1 file of several blocks: every entry ends in a short word, the file in "끝말"
    rows = []
    for i in range(60):
        text = f"entry {i} " + "lorem ipsum dolor " * 12 + ("세션" if i % 2 else "db")
        rows.append(json.dumps({"ts": f"2026-10-25T10:{i:02d}:00Z", "role": "user", "text": text}))
    rows.append(json.dumps({"ts": "2026-10-25T11:00:00Z", "role": "assistant", "text": "ä 끝말"}))
    (paths.sessions / "2026-10-25_100000_ffff6666.l1.jsonl").write_text("\n".join(rows), "utf-8")
    assert sum(len(r) for r in rows) > 2 * BLOCK_BYTES


@pytest.fixture
def short_store(store: StorePaths) -> StorePaths:
    add_short_word_files(store)
    return store


@pytest.mark.parametrize(
    "options", [{}, {"deep": True}, {"tiers": ["l1"], "limit": 50}, {"deep": True, "cap": 3}]
)
def test_short_words_use_the_index_and_equal_the_scan(
    short_store: StorePaths, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    for query in SHORT_QUERIES:
        same_by_index(short_store, monkeypatch, query, **options)


def test_short_words_at_the_end_of_a_file_and_of_blocks(
    short_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = same_by_index(short_store, monkeypatch, "끝말", deep=True)
    files = {h.file for h in found.hits}
    assert files == {
        "conventions.md",
        "memory_20261012_110000.md",
        "sessions/2026-10-25_100000_ffff6666.l1.jsonl",
    }
    last_words = same_by_index(short_store, monkeypatch, "세션", tiers=["l1"], limit=100)
    assert last_words.tiers[0].total == 30  # every other entry of the big file
    assert same_by_index(short_store, monkeypatch, "db", tiers=["l1"], limit=100).tiers[0].total == 30
    assert same_by_index(short_store, monkeypatch, "ä", deep=True).total == 1
    assert not same_by_index(short_store, monkeypatch, "없는", deep=True)


def test_short_words_after_appends(short_store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    refresh(short_store)
    path = short_store.sessions / "2026-10-25_100000_ffff6666.l1.jsonl"
    with path.open("a", encoding="utf-8") as handle:  # JS style: the file had no final newline
        handle.write("\n" + json.dumps({"ts": "2026-10-25T12:00:00Z", "role": "user", "text": "새 줄 뷁"}))
    found = same_by_index(short_store, monkeypatch, "뷁", deep=True)
    assert [h.line for h in found.hits] == [62]
    same_by_index(short_store, monkeypatch, "새 줄", deep=True)
    same_by_index(short_store, monkeypatch, "끝말", deep=True)
    # a small-tier file rewritten: its old rows leave the index, the new ones come in
    short_store.named("conventions").write_text("## 규칙\n- 이제 끝은 뷁", "utf-8")
    assert {h.file for h in same_by_index(short_store, monkeypatch, "뷁", deep=True).hits} == {
        "conventions.md",
        "sessions/2026-10-25_100000_ffff6666.l1.jsonl",
    }
    assert "conventions.md" not in {h.file for h in same_by_index(short_store, monkeypatch, "끝말").hits}
    conn = sqlite3.connect(short_store.search_db)
    try:  # the old text's trigrams (its tail included) were deleted with it, none left over
        left = conn.execute(
            "SELECT term FROM vocab_small WHERE term >= ? AND term <= ?", prefix_range("끝말")
        ).fetchall()
    finally:
        conn.close()
    assert left == []


def test_too_common_short_words_fall_back_to_the_newest_files(
    short_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "SHORT_GRAM_LIMIT", 1)  # every short word counts as everywhere
    monkeypatch.setattr(engine, "SMALL_GRAM_LIMIT", 1)
    for query in ("e", "lo", "검색", "db sqlite", "a"):
        for options in ({"deep": True}, {"deep": True, "cap": 2}):
            indexed = search(short_store, query, **options)
            assert indexed.tiers == scan_search(short_store, query, **options).tiers


def test_short_words_with_large_postings_are_answered_from_the_newest_files(
    short_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "SHORT_GRAM_BYTES", 0)  # every short word's trigrams count as too many
    for query in ("e", "lo", "검색", "db sqlite", "a", "없는"):
        for options in ({"deep": True}, {"deep": True, "cap": 2}):
            indexed = search(short_store, query, **options)
            assert indexed.source == "index"
            assert indexed.tiers == scan_search(short_store, query, **options).tiers, (query, options)


def test_the_scan_reads_newest_files_first_and_stops(
    short_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = scan_search(short_store, "e", deep=True)
    read: list[str] = []

    def counting(real: Any) -> Any:
        def reading(paths: StorePaths, source: SourceFile) -> Any:
            read.append(source.rel)
            return real(paths, source)

        return reading

    # what the engine imported: sessions are read whole (and parsed from the end), the others by doc
    monkeypatch.setattr(engine, "iter_source_docs", counting(sources.iter_source_docs))
    monkeypatch.setattr(engine, "read_source", counting(sources.read_source))
    capped = scan_search(short_store, "e", tiers=["l1"], cap=1)
    assert capped.tiers[0].more and capped.tiers[0].total == 1
    assert read == ["sessions/2026-11-02_100000_bbbb2222.l1.jsonl"]  # the newest file held cap + 1
    assert full.tiers[-1].more is False
    read.clear()
    assert scan_search(short_store, "e", deep=True).tiers == full.tiers
    assert len(read) == len(set(read))  # each file read once


def test_expression_quotes_short_word_alternatives() -> None:
    query = parse_query('ab "x" sqlite')
    assert query.short_terms == ("ab", "x") and query.long_terms == ("sqlite",)
    expr = fts_expression(query, [["ab\n", 'ab"'], ["x\n\n"]])
    assert expr == '"sql" AND "ite" AND ("ab\n" OR "ab""") AND "x\n\n"'
    assert fts_expression(parse_query("db")) is None
    assert prefix_range("검") == ("검", "검\U0010ffff\U0010ffff")
    assert prefix_range("db") == ("db", "db\U0010ffff")


def test_index_of_an_older_schema_is_rebuilt_with_block_tails(short_store: StorePaths) -> None:
    refresh(short_store)
    conn = sqlite3.connect(short_store.search_db)
    conn.execute("UPDATE meta SET value='3' WHERE key='schema'")
    conn.commit()
    conn.close()
    results = search(short_store, "끝말", deep=True)
    assert any("schema 3" in w for w in results.warnings)
    assert results.tiers == scan_search(short_store, "끝말", deep=True).tiers


@pytest.mark.parametrize("size", [40_000, 200_000])
def test_a_line_longer_than_the_read_chunks_is_found_by_the_index(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """A large tool result makes one L1 line far longer than a block: it is read to its end."""
    rows = [{"ts": "2026-11-20T10:00:00.000Z", "role": "user", "text": "before the big output"}]
    rows.append(
        {
            "ts": "2026-11-20T10:00:01.000Z",
            "role": "tool_result",
            "tool_use_id": "toolu_1",
            "result": "ok",
            "output": "x" * size + " needle_in_big_output",
        }
    )
    rows.append({"ts": "2026-11-20T10:00:02.000Z", "role": "assistant", "text": "after the big output"})
    (store.sessions / "2026-11-20_100000_aaaaaaaa.l1.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), "utf-8"
    )
    for query in ("needle_in_big_output", "after the big", "before the big"):
        found = same_by_index(store, monkeypatch, query, deep=True)
        assert sum(len(t.hits) for t in found.tiers) == 1, query
