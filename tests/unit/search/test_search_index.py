"""The index answers exactly what a full scan answers: every tier, filter, Korean, short
queries, and after edits, appends, deletes and rotations (incremental refresh)."""

from __future__ import annotations

import gzip
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.search import QueryError, refresh, reindex, scan_search, show, timeline
from memkeeper.core.search import search as any_search
from memkeeper.core.search.engine import iter_all_docs
from memkeeper.core.search.indexer import lock_path
from memkeeper.core.store.lock import file_lock
from memkeeper.core.store.paths import StorePaths

QUERIES = [
    "sqlite",
    "SQLite FTS5",
    '"rotation lock"',
    "lock",
    "검색",
    "트라이그램",
    "세션",
    "회전",
    "db",  # shorter than a trigram
    "a",
    "검",  # one Korean character
    "flock process",
    "NEAR",
    "pydantic",  # in an archive preamble
    "crashed missing",
    "passed",
    "resolved",
    "reason",
    "nothing-matches-this",
]

OPTIONS: list[dict[str, Any]] = [
    {},
    {"deep": True},
    {"tiers": ["l1"]},
    {"tiers": ["l3"], "types": ["decision"]},
    {"types": ["theme", "issue"]},
    {"types": ["section"], "deep": True},
    {"types": ["user", "assistant"], "deep": True},
    {"since": "2026-10-05", "deep": True},
    {"until": "2026-10-05", "deep": True},
    {"since": "2026-11-01", "until": "2026-11-01", "deep": True},
    {"limit": 1, "deep": True},
]


def search(*args: Any, **kwargs: Any) -> Any:
    """These tests check the exact (grep-like) mode against the full-scan oracle."""
    return any_search(*args, exact=True, **kwargs)


def same(paths: StorePaths, query: str, **options: Any) -> Any:
    indexed = search(paths, query, **options)
    scanned = scan_search(paths, query, **{k: v for k, v in options.items() if k != "lock_wait"})
    assert indexed.source == "index", indexed.warnings
    assert indexed.tiers == scanned.tiers, f"{query!r} {options}"
    return indexed


@pytest.mark.parametrize(
    "options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default"
)
def test_index_equals_scan(store: StorePaths, options: dict[str, Any]) -> None:
    for query in QUERIES:
        same(store, query, **options)


def test_each_tier_finds_its_entries(store: StorePaths) -> None:
    hits = same(store, "sqlite", deep=True).tiers
    assert [t.tier for t in hits] == ["memory", "l3", "l2", "l1"]
    files = {h.file for t in hits for h in t.hits}
    assert {"memory.md", "project.md", "sessions/2026-11-01_090000_aaaa1111.l1.jsonl"} <= files
    assert any(h.type == "overall" for h in hits[1].hits)
    assert same(store, "crashed", tiers=["l2"]).hits[0].file == "memory_20261010_110000.md"
    decision = same(store, "flock", types=["decision"]).hits
    assert [h.type for h in decision] == ["decision"]
    assert decision[0].date == "2026-10-02"


def test_korean_substring_and_short_queries(store: StorePaths) -> None:
    hits = same(store, "트라이", deep=True).hits
    assert {h.tier for h in hits} == {"memory", "l1"}
    assert same(store, "검", deep=True).total >= 2
    assert same(store, "db").hits[0].file == "memory.md"


def test_random_substrings_match_scan(store: StorePaths) -> None:
    rng = random.Random(5)
    bodies = [d.body for d in iter_all_docs(store)]
    for _ in range(60):
        body = rng.choice(bodies)
        start = rng.randrange(len(body))
        query = body[start : start + rng.randint(1, 7)].strip().replace('"', "")
        if query:
            same(store, query, deep=True)


def test_hits_carry_location_snippet_and_ids(store: StorePaths) -> None:
    results = same(store, "rotation lock", deep=True)
    first = results.hits[0]
    assert first.tier == "memory" and first.line == 3 and first.date == "2026-11-01"
    assert "rotation" in first.snippet.lower()
    for start, end in first.highlights:
        assert first.snippet[start:end].lower() in ("rotation", "lock")
    assert first.tokens > 0
    l1 = [h for h in results.hits if h.tier == "l1"][0]
    assert l1.session == "bbbb2222-full" and l1.line == 1
    assert show(store, l1.id).raw["text"] == "why is the rotation lock stuck?"
    around = timeline(store, l1.id, before=2, after=2)
    assert around.before == () and [h.line for h in around.after] == [2]


def test_cap_keeps_the_newest_matches_like_the_scan(store: StorePaths) -> None:
    for query in ("e", "ion", "sqlite"):
        for cap in (1, 2, 3):
            indexed = search(store, query, deep=True, cap=cap)
            assert indexed.tiers == scan_search(store, query, deep=True, cap=cap).tiers


# -- incremental updates ----------------------------------------------------------------


def test_edit_append_delete_show_up(store: StorePaths) -> None:
    refresh(store)
    # edit memory.md
    text = store.memory.read_text("utf-8").replace("WAL mode", "journal mode zebra")
    store.memory.write_text(text, "utf-8")
    assert same(store, "zebra").hits[0].file == "memory.md"
    assert not same(store, "WAL mode").hits
    # append to a JS-style L1 file (no trailing newline): the writer adds "\n" + line
    js = store.sessions / "2026-11-01_090000_aaaa1111.l1.jsonl"
    with js.open("a", encoding="utf-8") as handle:
        handle.write(
            "\n" + json.dumps({"ts": "2026-11-01T11:00:00Z", "role": "user", "text": "giraffe appended"})
        )
    hit = same(store, "giraffe", deep=True).hits[0]
    assert hit.line == 5 and hit.tier == "l1"
    # append whole lines to a newline-terminated file, then a partial line being written
    nl = store.sessions / "2026-11-02_100000_bbbb2222.l1.jsonl"
    with nl.open("a", encoding="utf-8") as handle:
        handle.write(
            json.dumps({"ts": "2026-11-02T12:00:00Z", "role": "assistant", "text": "okapi one"}) + "\n"
        )
        handle.write('{"ts": "2026-11-02T12:01:00Z", "role": "user", "text": "okapi two')
    assert [h.line for h in same(store, "okapi", deep=True).hits] == [3]
    with nl.open("a", encoding="utf-8") as handle:
        handle.write(' done"}\n')
    assert sorted(h.line for h in same(store, "okapi", deep=True).hits) == [3, 4]
    # delete an archive and a summary
    store.archive("memory_20261010_110000.md").unlink()
    store.archive("memory_20261003_090000.summary.json").unlink()
    assert not same(store, "crashed", deep=True).hits
    assert not same(store, "skeleton", tiers=["l3"]).hits
    # a new session file
    (store.sessions / "2026-11-03_080000_cccc3333.l1.jsonl").write_text(
        json.dumps({"ts": "2026-11-03T08:00:00Z", "role": "user", "text": "세 번째 세션 narwhal"}) + "\n",
        "utf-8",
    )
    assert same(store, "narwhal", deep=True).hits[0].session == "cccc3333"
    stats = refresh(store)
    assert stats.files_read == 0  # nothing changed since the last search


def test_rewritten_l1_file_is_read_again(store: StorePaths) -> None:
    refresh(store)
    path = store.sessions / "2026-11-02_100000_bbbb2222.l1.jsonl"
    # same name, different content, larger: a rewrite (dedupe), not an append
    lines = [
        json.dumps({"ts": "2026-11-02T09:00:00Z", "role": "user", "text": f"rewritten line {i} wombat"})
        for i in range(3)
    ]
    path.write_text("\n".join(lines) + "\n" * 5, "utf-8")
    assert not same(store, "rotation lock stuck", deep=True).hits
    assert len(same(store, "wombat", deep=True).hits) == 3


def test_rotation_shows_up(store: StorePaths) -> None:
    from memkeeper.core.log.rotation import rotate

    refresh(store)
    with store.memory.open("a", encoding="utf-8") as handle:
        handle.write("\n## 2026-11-21_0800 (local 11-21_1700)\n- [rotate]: platypus before rotation\n")
    assert same(store, "platypus").hits[0].tier == "memory"
    result = rotate(store, threshold_tokens=10, carryover_tokens=5, force=True)
    assert result is not None
    found = same(store, "platypus", tiers=["memory", "l2"])
    assert [t.tier for t in found.tiers if t.hits] == ["l2"]
    assert found.hits[0].file == result.archive


def test_gzip_sessions_and_many_blocks(store: StorePaths) -> None:
    rows = [
        json.dumps(
            {
                "ts": f"2026-10-20T10:{i % 60:02d}:00Z",
                "role": "assistant",
                "text": f"line {i} " + "lorem ipsum " * 30 + ("kiwi" if i % 37 == 0 else ""),
            }
        )
        for i in range(400)
    ]
    (store.sessions / "2026-10-20_100000_dddd4444.l1.jsonl").write_text("\n".join(rows), "utf-8")
    (store.sessions / "2026-10-21_100000_eeee5555.l1.jsonl.gz").write_bytes(
        gzip.compress("\n".join(rows).encode())
    )
    found = same(store, "kiwi", deep=True, limit=100)
    assert found.tiers[-1].total == 2 * len([i for i in range(400) if i % 37 == 0])
    same(store, "lorem kiwi", deep=True, limit=50)
    same(store, "line 1", deep=True, limit=50, cap=7)
    gz_hit = [h for h in found.hits if h.file.endswith(".gz")][0]
    assert show(store, gz_hit.id).raw["text"].endswith("kiwi")


# -- robustness -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        "*",
        "NEAR",
        "NEAR(a b)",
        "-",
        "a-b:c",
        "(parens)",
        "col:value",
        "AND OR NOT",
        "^x",
        "x" * 900,
        "\x00\x1b[31mred\x07",
        "'; DROP TABLE docs; --",
        '"unclosed phrase',
    ],
)
def test_syntax_characters_never_reach_sql(store: StorePaths, query: str) -> None:
    try:
        same(store, query, deep=True)
    except QueryError as exc:  # only the clean refusals: empty
        assert "empty" in str(exc)


@pytest.mark.parametrize("query", ["", "   ", "\x00\x01", "x" * 10_000, " ".join(f"w{i}" for i in range(40))])
def test_bad_queries_are_refused_clearly(store: StorePaths, query: str) -> None:
    with pytest.raises(QueryError) as info:
        search(store, query)
    assert str(info.value) and "sql" not in str(info.value).lower()


@pytest.mark.parametrize(
    "options",
    [
        {"tiers": ["l9"]},
        {"types": ["bogus"]},
        {"since": "yesterday"},
        {"since": "2026-02-30"},
        {"since": "2026-05-01", "until": "2026-04-01"},
        {"limit": 0},
    ],
)
def test_bad_options_are_refused_clearly(store: StorePaths, options: dict[str, Any]) -> None:
    with pytest.raises(QueryError):
        search(store, "sqlite", **options)


def test_missing_store_answers_nothing(tmp_path: Path) -> None:
    paths = StorePaths(tmp_path / "nowhere")
    results = search(paths, "sqlite", deep=True)
    assert not results and "no memory store" in results.warnings[0]
    assert not scan_search(paths, "sqlite").hits
    assert not paths.root.exists()


def test_corrupt_index_is_moved_aside_and_rebuilt(store: StorePaths) -> None:
    refresh(store)
    store.search_db.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(store.search_db) + suffix).unlink(missing_ok=True)
    results = same(store, "sqlite", deep=True)
    assert results.hits
    assert any("damaged" in w for w in results.warnings)
    assert store.search_db.with_name(store.search_db.name + ".corrupt").exists()
    assert same(store, "sqlite", deep=True).warnings == ()


def test_old_schema_is_rebuilt(store: StorePaths) -> None:
    refresh(store)
    conn = sqlite3.connect(store.search_db)
    conn.execute("UPDATE meta SET value='0' WHERE key='schema'")
    conn.execute("DELETE FROM docs")  # what an old version held no longer counts
    conn.commit()
    conn.close()
    results = same(store, "sqlite", deep=True)
    assert any("schema 0" in w for w in results.warnings)


def test_busy_writer_answers_from_the_committed_index_with_a_note(store: StorePaths) -> None:
    refresh(store)
    with file_lock(lock_path(store)):
        results = search(store, "sqlite", deep=True, lock_wait=0.05)
    assert results.source == "index" and "a moment old" in results.warnings[0]
    assert results.tiers == scan_search(store, "sqlite", deep=True).tiers


def test_busy_writer_without_an_index_falls_back_to_a_scan(store: StorePaths) -> None:
    with file_lock(lock_path(store)):
        results = search(store, "sqlite", deep=True, lock_wait=0.05)
    assert results.source == "scan" and "reading the files" in results.warnings[0]
    assert results.tiers == scan_search(store, "sqlite", deep=True).tiers


def test_sqlite_level_lock_falls_back_to_a_scan(store: StorePaths) -> None:
    refresh(store)
    blocker = sqlite3.connect(store.search_db, timeout=0)
    blocker.execute("PRAGMA locking_mode=EXCLUSIVE")
    blocker.execute("BEGIN EXCLUSIVE")
    blocker.execute("INSERT INTO meta(key, value) VALUES('x', 'y')")
    try:
        results = search(store, "sqlite", deep=True)
    finally:
        blocker.rollback()
        blocker.close()
    assert results.source == "scan"
    assert results.tiers == scan_search(store, "sqlite", deep=True).tiers


def test_reindex_progress_and_file_modes(store: StorePaths) -> None:
    seen: list[tuple[int, int]] = []
    stats = reindex(store, lambda done, total, _f: seen.append((done, total)))
    assert stats.files_read >= 8 and seen[-1][0] == seen[-1][1]
    assert store.search_db.stat().st_mode & 0o777 == 0o600
    same(store, "sqlite", deep=True)


def test_bulk_build_through_the_process_pool(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    from memkeeper.core.search import cutting, indexer

    monkeypatch.setattr(indexer, "BULK_BYTES", 0)  # every load counts as big: the pool reads
    monkeypatch.setattr(cutting, "POOL_BATCH_BYTES", 300)
    stats = reindex(store)
    assert stats.files_read >= 8
    for query in ("sqlite", "검색", "lock", "db"):
        same(store, query, deep=True)


def test_dead_rows_are_compacted(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    from memkeeper.core.search import freshness

    refresh(store)
    monkeypatch.setattr(freshness, "MIN_GARBAGE_BYTES", 0)
    for path in store.sessions.glob("*.l1.jsonl"):
        path.unlink()
    stats = refresh(store)  # records the dead rows
    assert stats.files_removed == 2
    stats = refresh(store)  # dead rows outweigh a third of the live text: rebuilt
    assert stats.rebuilt and any("compacted" in n for n in stats.notes)
    same(store, "lock", deep=True)
    same(store, "crashed", deep=True)


def test_replaced_summary_is_seen_at_once_and_an_edit_in_place_at_the_full_check(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.core.search import freshness
    from memkeeper.core.store.atomic import atomic_write_json

    refresh(store)
    refresh(store)  # now trusting unchanged archives and summaries by inode
    name = "memory_20261003_090000.summary.json"
    atomic_write_json(store.archive(name), {"overallSummary": "regenerated with a pelican"})
    assert same(store, "pelican", tiers=["l3"]).hits[0].file == name
    store.archive(name).write_text(json.dumps({"overallSummary": "edited in place: a heron"}), "utf-8")
    monkeypatch.setattr(freshness, "FULL_CHECK_SECONDS", 0)
    assert same(store, "heron", tiers=["l3"]).hits[0].file == name
