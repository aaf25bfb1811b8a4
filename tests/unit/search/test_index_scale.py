"""The index at scale: no deadlock on many small files, no per-file work on an unchanged
store, renamed and gzipped files keep their rows, readers never wait for a rebuild, and
the index gives space back after a large forget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.search import cutting, engine, freshness, indexer, refresh, reindex, scan_search, sources
from memkeeper.core.search import schema as search_schema
from memkeeper.core.search import search as any_search
from memkeeper.core.store import changes
from memkeeper.core.store.paths import StorePaths, ensure_store

from .conftest import refresh_cut_short


def search(*args: Any, **kwargs: Any) -> Any:
    """These tests check the index machinery through the exact mode, against the full-scan oracle."""
    return any_search(*args, exact=True, **kwargs)


def small_sessions(paths: StorePaths, count: int, start: int = 0) -> None:
    """``count`` sessions of about 3 KB, one assistant line each (the shape that deadlocked)."""
    filler = "lorem ipsum dolor sit amet " * 110
    for i in range(start, start + count):
        line = {"ts": "2025-01-01T00:00:00Z", "role": "assistant", "text": f"note {i:08x} {filler}"}
        name = f"2025-01-01_000000_{i:08x}.l1.jsonl"
        (paths.sessions / name).write_text(json.dumps(line) + "\n", "utf-8")


def same(paths: StorePaths, query: str) -> None:
    indexed = search(paths, query, deep=True)
    assert indexed.source == "index", indexed.warnings
    assert indexed.tiers == scan_search(paths, query, deep=True).tiers


@pytest.mark.slow  # over 10 s on two busy cores: left out of the quick subset
def test_twelve_thousand_small_sessions_build(tmp_path: Path) -> None:
    """The old helper wrote 3 batches before reading a reply: this store hung it forever."""
    paths = StorePaths(tmp_path / "proj")
    ensure_store(paths)
    small_sessions(paths, 12_000)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "MEMKEEPER_NO_JOBS": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "memkeeper.cli.main",
            "--project",
            str(paths.project),
            "reindex",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,  # a deadline for a hang, not a speed goal
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files"] == 12_000 and report["bytes"] > indexer.BULK_BYTES  # the pool was used
    hits = search(paths, "00002ee0", deep=True)  # the last one
    assert (
        hits.source == "index"
        and [h.file for h in hits.hits] == ["sessions/2025-01-01_000000_00002ee0.l1.jsonl"][: len(hits.hits)]
    )


def test_pool_batches_in_flight_are_bounded(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexer, "BULK_BYTES", 0)
    monkeypatch.setattr(cutting, "POOL_BATCH_FILES", 1)  # one batch per file: many round trips
    small_sessions(store, 40)
    stats = reindex(store)
    assert stats.files_read >= 48
    same(store, "0000001f")


@pytest.fixture
def large(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> StorePaths:
    """The store treated as large: refreshes rely on folder times and the journal."""
    monkeypatch.setattr(freshness, "SMALL_STORE_FILES", 0)
    monkeypatch.setattr(freshness, "RACY_NS", 0)  # the test's folders were written just now
    refresh(store)
    return store


def _no_listing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every listing of the sessions folder and every full discovery a refresh makes."""
    seen: list[str] = []
    real_scandir, real_discover = os.scandir, sources.discover  # freshness's import

    def scandir(path: object = ".") -> object:
        if Path(str(path)).name == "sessions":  # the store folder's names are read: few
            seen.append(f"scandir {path}")
        return real_scandir(path)  # type: ignore[call-overload]

    def discover(*args: object, **kwargs: object) -> object:
        seen.append("discover")
        return real_discover(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(freshness, "discover", discover)
    return seen


def test_unchanged_large_store_does_no_per_file_work(
    large: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    refresh(large)  # settles the marks
    seen = _no_listing(monkeypatch)
    stats = indexer.refresh_locked(large, search_schema.open_index(large.search_db)[0])
    assert stats.files_read == 0 and seen == []
    assert search(large, "sqlite", deep=True).source == "index" and seen == []


def test_journal_names_what_an_append_changed(large: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    refresh(large)
    path = large.sessions / "2026-11-02_100000_bbbb2222.l1.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"ts": "2026-11-02T12:00:00Z", "role": "user", "text": "capybara"}) + "\n")
    assert not search(large, "capybara", deep=True).hits  # a foreign append: not looked for
    changes.record(large, path)  # what our L1 writer does after appending
    seen = _no_listing(monkeypatch)
    found = search(large, "capybara", deep=True)
    assert [h.file for h in found.hits] == ["sessions/2026-11-02_100000_bbbb2222.l1.jsonl"]
    assert seen == []  # only the named file was looked at


def test_new_and_removed_sessions_are_seen_by_the_folder_time(large: StorePaths) -> None:
    refresh(large)
    (large.sessions / "2026-11-05_080000_ffff0000.l1.jsonl").write_text(
        json.dumps({"ts": "2026-11-05T08:00:00Z", "role": "user", "text": "armadillo"}) + "\n", "utf-8"
    )
    same(large, "armadillo")
    (large.sessions / "2026-11-01_090000_aaaa1111.l1.jsonl").unlink()
    same(large, "sqlite")


def test_full_check_in_the_background_finds_a_foreign_append(
    large: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = large.sessions / "2026-11-02_100000_bbbb2222.l1.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"ts": "2026-11-02T12:00:00Z", "role": "user", "text": "pangolin"}) + "\n")
    monkeypatch.setattr(freshness, "FULL_CHECK_SECONDS", 0)
    refresh(large)  # the background refresh: its periodic full check
    same(large, "pangolin")


def test_missing_journal_means_one_full_check(large: StorePaths) -> None:
    path = large.sessions / "2026-11-02_100000_bbbb2222.l1.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"ts": "2026-11-02T12:00:00Z", "role": "user", "text": "tapir"}) + "\n")
    changes.journal_path(large).unlink()
    same(large, "tapir")
    assert changes.journal_path(large).exists()


def test_compress_keeps_the_rows_and_does_not_rebuild(store: StorePaths) -> None:
    from memkeeper.core.capture.l1 import compress

    refresh(store)
    old = store.search_db.stat().st_size
    for path in store.sessions.glob("*.l1.jsonl"):
        os.utime(path, (0, 0))  # old enough to compress
    assert len(compress(store, retention_days=1)) == 2
    stats = refresh(store)
    assert stats.files_read == 0 and stats.files_renamed == 2 and not stats.rebuilt
    same(store, "트라이그램")
    same(store, "flock process")
    hit = search(store, "rotation lock stuck", deep=True).hits[0]
    assert hit.file.endswith(".l1.jsonl.gz") and hit.line == 1
    assert store.search_db.stat().st_size <= old * 2


def test_forget_and_restore_keep_the_rows(store: StorePaths) -> None:
    from memkeeper.core.store.trash import forget_l1, restore

    refresh(store)
    item = forget_l1(store, "2026-11-01_090000_aaaa1111.l1.jsonl")
    assert refresh(store).files_removed == 1
    same(store, "트라이그램")
    restore(store, item.id)
    stats = refresh(store)
    assert stats.files_read == 0 and stats.files_renamed == 1
    same(store, "트라이그램")


def test_index_shrinks_after_forgetting_half_the_store(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.core.store.trash import forget_l1

    monkeypatch.setattr(freshness, "MIN_GARBAGE_BYTES", 0)
    small_sessions(store, 400)
    refresh(store)
    conn = search_schema.connect(store.search_db)
    before = indexer.live_bytes(conn)
    file_before = store.search_db.stat().st_size
    for path in sorted(store.sessions.glob("2025-*.l1.jsonl"))[:200]:
        forget_l1(store, path.name)
    refresh(store)  # sets the rows aside (dead)
    stats = refresh(store)  # the dead rows outweigh a third: compacted, then vacuumed
    assert stats.rebuilt
    after = indexer.live_bytes(conn)
    conn.close()
    assert after < before * 0.75
    assert store.search_db.stat().st_size < file_before
    same(store, "00000123")
    same(store, "sqlite")


def test_a_first_build_in_chunks_gives_its_free_pages_back(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk's commit leaves the segments FTS5 merged away as free pages (41 % of the file after
    a first build of 109 MB): a first build tidies as a rebuild does."""
    monkeypatch.setattr(indexer, "COMMIT_BYTES", 1 << 14)
    filler = "lorem ipsum dolor sit amet " * 5
    for i in range(300):
        lines = [
            json.dumps(
                {
                    "ts": "2025-01-01T00:00:00Z",
                    "role": "assistant",
                    "text": f"note {i:08x} {j} {filler} w{i * j:x}",
                }
            )
            for j in range(10)
        ]
        (store.sessions / f"2025-01-01_000000_{i:08x}.l1.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    refresh(store)
    conn = search_schema.connect(store.search_db)
    ((pages,),) = conn.execute("PRAGMA page_count").fetchall()
    ((free,),) = conn.execute("PRAGMA freelist_count").fetchall()
    conn.close()
    assert free * 8 < pages, (free, pages)
    same(store, "00000123")


@contextmanager
def paused_build(
    build: Callable[[StorePaths, Callable[[int, int, str], None]], object], store: StorePaths, at_call: int
) -> Iterator[threading.Thread]:
    """``build(store, progress)`` in a thread, held at its ``at_call``-th progress report until the block ends."""
    started, release = threading.Event(), threading.Event()
    calls = 0

    def hold(_done: int, _total: int, _file: str) -> None:
        nonlocal calls
        calls += 1
        if calls == at_call:
            started.set()
        if calls >= at_call:
            release.wait(60)

    builder = threading.Thread(target=build, args=(store, hold))
    builder.start()
    try:
        assert started.wait(60)
        yield builder
    finally:
        release.set()
        builder.join(60)


def test_search_during_a_rebuild_answers_from_the_index(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without waiting for the writer: the rebuild is held paused until the answer is in, so an
    answer at all means the search did not wait; it came from the committed index (no file read
    by the full scan) while the rebuild still held the writer lock."""
    refresh(store)
    with paused_build(reindex, store, at_call=1) as builder:

        def no_scan(*_args: object, **_kwargs: object) -> None:
            raise AssertionError("the search read every file (the full scan) instead of the index")

        with monkeypatch.context() as patch:
            patch.setattr(engine, "_scan", no_scan)
            patch.setattr(engine, "_ranked_scan", no_scan)
            results = search(store, "sqlite", deep=True)
            ranked = any_search(store, "sqlite")
        assert builder.is_alive()
        with pytest.raises(indexer.IndexBusy), indexer.writer(store, 0):
            pass  # the rebuild still holds the writer lock
        for answer in (results, ranked):
            assert answer.source == "index" and indexer.BUSY_NOTE in answer.warnings
        assert results.tiers == scan_search(store, "sqlite", deep=True).tiers
        assert ranked.hits
    same(store, "sqlite")


def test_first_build_by_another_process_shows_progress(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexer, "BULK_BYTES", 0)
    monkeypatch.setattr(indexer, "COMMIT_BYTES", 1)  # commit after every file
    monkeypatch.setattr(indexer, "SCAN_BELOW_BYTES", 0)
    small_sessions(store, 20)
    with paused_build(refresh, store, at_call=10):
        progress = indexer.build_progress(store)
        assert progress is not None and 0 < progress[0] < progress[1]
        results = search(store, "lorem", deep=True)
        assert results.source == "index" and any("being built" in w for w in results.warnings)
    assert indexer.build_progress(store) is None
    same(store, "lorem")


def test_summary_replaced_under_its_name_is_seen_through_the_journal(large: StorePaths) -> None:
    from memkeeper.core.store.atomic import atomic_write_json

    name = "memory_20261003_090000.summary.json"
    atomic_write_json(large.archive(name), {"overallSummary": "regenerated with a pelican"})
    assert not search(large, "pelican", tiers=["l3"]).hits  # a foreign rewrite: left to the full check
    changes.record(large, large.archive(name))  # what the summary job does after writing
    assert [h.file for h in search(large, "pelican", tiers=["l3"]).hits] == [name]


def test_cached_vocabulary_lookups_follow_the_index(store: StorePaths) -> None:
    """A short word's trigrams are remembered between searches, and forgotten when the index changes."""
    assert not search(store, "zq", deep=True).hits  # no trigram begins with "zq": remembered as none
    assert not search(store, "zq", deep=True).hits
    (store.sessions / "2026-11-04_080000_abcd0000.l1.jsonl").write_text(
        json.dumps({"ts": "2026-11-04T08:00:00Z", "role": "user", "text": "the zqw key"}) + "\n", "utf-8"
    )
    found = search(store, "zq", deep=True)
    assert [h.file for h in found.hits] == ["sessions/2026-11-04_080000_abcd0000.l1.jsonl"]
    assert found.tiers == scan_search(store, "zq", deep=True).tiers
    ranked = any_search(store, "zqw key", deep=True)  # document counts are cached the same way
    assert ranked.hits and ranked.hits[0].file.endswith("abcd0000.l1.jsonl")


def test_a_search_that_builds_first_reports_progress(store: StorePaths) -> None:
    seen: list[tuple[int, int]] = []
    results = any_search(store, "sqlite", progress=lambda done, total, _f: seen.append((done, total)))
    assert results.source == "index" and seen and seen[-1][0] == seen[-1][1] > 0
    seen.clear()
    any_search(store, "sqlite", progress=lambda done, total, _f: seen.append((done, total)))
    assert seen == []  # nothing to index the second time


def test_jobs_refresh_the_index_in_the_background(store: StorePaths) -> None:
    from memkeeper.core.store.jobs import run_job

    refresh(store)
    (store.sessions / "2026-11-06_080000_eeee0000.l1.jsonl").write_text(
        json.dumps({"ts": "2026-11-06T08:00:00Z", "role": "user", "text": "wombat in a job"}) + "\n", "utf-8"
    )
    assert not search(store, "wombat", deep=True, refresh=False).hits  # not indexed yet
    assert run_job(store, "summary")  # nothing to summarise; the index is refreshed after it
    found = search(store, "wombat", deep=True, refresh=False)
    assert [h.file for h in found.hits] == ["sessions/2026-11-06_080000_eeee0000.l1.jsonl"]


def _merge_settings(paths: StorePaths) -> set[tuple[str, int]]:
    """Each FTS table's automerge setting (absent means FTS5's default, 4)."""
    import sqlite3

    conn = sqlite3.connect(paths.root / ".search.sqlite3")
    try:
        tables = ("fts_small", *search_schema.BIG_FTS.values(), *search_schema.WORDS.values())
        found = set()
        for table in tables:
            row = conn.execute(f"SELECT v FROM {table}_config WHERE k='automerge'").fetchone()
            found.add((table, 4 if row is None else int(row[0])))
        return found
    finally:
        conn.close()


def test_a_large_load_cut_short_does_not_leave_merging_off(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first chunks of an interrupted large load are committed with merging off; the next
    refresh, too small to count as large itself, turns it back on."""
    monkeypatch.setattr(indexer, "BULK_BYTES", 0)
    monkeypatch.setattr(indexer, "COMMIT_BYTES", 1)  # commit after every file
    small_sessions(store, 20)
    refresh_cut_short(store, 9)  # what a user's Ctrl-C does to a reindex
    assert ("words_l1", 0) in _merge_settings(store)  # the state the next refresh meets
    monkeypatch.setattr(indexer, "BULK_BYTES", 32 << 20)
    refresh(store)
    assert {value for _table, value in _merge_settings(store)} == {4}
    same(store, "0000000f")


def test_a_one_shot_search_maps_the_index_and_a_long_lived_one_does_not(store: StorePaths) -> None:
    store.memory.write_text("## Notes\n- the mapped lantern glows\n", "utf-8")
    refresh(store)
    with indexer.open_for_search(store) as (conn, _notes):
        assert conn.execute("PRAGMA mmap_size").fetchone()[0] == 0  # the TUI's, the MCP server's
    with indexer.open_for_search(store, mmap_bytes=search_schema.ONE_SHOT_MMAP_BYTES) as (conn, _notes):
        mapped = conn.execute("PRAGMA mmap_size").fetchone()[0]
        assert mapped > 0  # SQLite caps what is asked at its build's limit
        assert conn.execute("SELECT count(*) FROM docs").fetchone()[0] >= 1
    hits = any_search(store, "lantern", mmap_bytes=search_schema.ONE_SHOT_MMAP_BYTES)
    assert [h.snippet for h in hits.ranked] == [h.snippet for h in any_search(store, "lantern").ranked]
    assert hits.ranked and "lantern" in hits.ranked[0].snippet
