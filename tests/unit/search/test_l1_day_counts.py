"""The search index keeps each L1 file's prompts and tool calls per day (``l1_days``), counted
as the activity screen counts them: the screen reads them from there for every file the index
has current, and reads only the others. The index's counts must equal the screen's own scan
of the files on real transcripts and generated stores, after appends, renames, gzips, forgets
and restores, and an index made before the table gets them from a background refresh."""

from __future__ import annotations

import gzip
import json
import os
import random
from pathlib import Path

import pytest

import memkeeper.core.search.history as history
from memkeeper.core.capture import l1_counts
from memkeeper.core.capture.l1 import compress, refine_transcript
from memkeeper.core.search import indexer, l1days, schema
from memkeeper.core.search.engine import search
from memkeeper.core.store.atomic import append_text
from memkeeper.core.store.names import is_l1
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.store.trash import forget_l1, restore
from tests.unit.l1.l1_kit import all_fixture_transcripts, shared_transcripts

from .conftest import Screen, as_made_before, from_index

DayCounts = dict[str, tuple[int, int]]


def index_counts(store: StorePaths) -> dict[str, DayCounts]:
    """What the index holds, per file it has counted whole."""
    counted = from_index(store, l1days.counted)
    return {name: l1_counts.from_text(text) for name, (_sig, text) in counted.items()}


def scanned(store: StorePaths) -> dict[str, DayCounts]:
    """The activity screen's own reading of every L1 file."""
    return {p.name: history._scan(p) for p in sorted(store.sessions.iterdir()) if is_l1(p.name)}


SCREEN = Screen(history, "_scan", "_indexed_counts", history.daily_activity)


def assert_counted_as_scanned(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> dict[str, DayCounts]:
    """Every file is in the index with the scan's counts, and the screen reads none of them."""
    expected = scanned(store)
    assert index_counts(store) == expected
    days, reads = SCREEN.reads(store, monkeypatch)
    assert reads == []
    assert days == SCREEN.without_index(store, monkeypatch)
    return expected


# -- stores ---------------------------------------------------------------------------------


def generated_lines(rng: random.Random, session: str, day: str, n: int) -> list[str]:
    """Entries as the L1 writer and the JS plugin write them, with the odd ones a store meets."""
    lines: list[str] = []
    hour = 20
    for i in range(n):
        minute = i % 60
        when = f"{day}T{hour + (i * 7) // 60 % 4:02d}:{minute:02d}:00.000Z"  # crosses midnight? no: same day
        kind = rng.choice(["user", "assistant", "tool", "tool_result", "side", "nested", "odd"])
        entry: dict[str, object] = {"ts": when}
        if kind == "user":
            entry.update(role="user", text=rng.choice(["fix the lock", "검색 기능", '"role": "tool" typed']))
        elif kind == "assistant":
            entry.update(role="assistant", text='I ran "role": "user" in a quote')
        elif kind == "tool":
            entry.update(role="tool", name="Bash", cmd="pytest -q", tool_use_id=f"t{i}")
        elif kind == "tool_result":
            entry.update(
                role="tool_result", tool_use_id=f"t{i}", result="ok", output="x" * rng.randint(0, 400)
            )
        elif kind == "side":
            entry.update(
                role=rng.choice(["user", "tool"]), text="subagent work", sidechain=True, agentId="a1"
            )
        elif kind == "nested":
            entry.update(role="tool", name="Task", input={"role": "user", "ts": "1999-01-01"})
        else:
            entry = {"role": "user", "text": "no timestamp"}
        entry["session"] = session
        lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", rng.choice([":", ": "]))))
    return lines


def generate(store: StorePaths, files: int, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    made = []
    for f in range(files):
        day = f"2026-0{1 + f % 9}-{10 + f:02d}"
        session = f"{f:08x}-generated"
        path = store.sessions / f"{day}_2{f % 10}0000_{session[:8]}.l1.jsonl"
        lines = generated_lines(rng, session, day, rng.randint(0, 60))
        if f % 3 == 1 and lines:
            lines.insert(
                len(lines) // 2, '{"ts":"2026-01-01T00:00:00Z","role":"user","text":"broken'
            )  # mid-file
        text = "\n".join(lines)
        path.write_text(text + ("\n" if f % 2 else ""), "utf-8")  # JS plugin files end without one
        made.append(path)
    return made


# -- the counts equal the scan ----------------------------------------------------------------


def test_real_transcripts_are_counted_by_the_index_as_the_screen_scans_them(
    empty_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = shared_transcripts()  # the real transcripts beside the repository, when they are there
    transcripts = all_fixture_transcripts() + shared
    assert transcripts
    made = {refine_transcript(empty_store, transcript).l1_path for transcript in transcripts}
    indexer.refresh(empty_store)
    counted = assert_counted_as_scanned(empty_store, monkeypatch)
    # the copied fixtures repeat some of the shared sessions
    assert len(counted) == len(made - {None}) >= (8 if shared else len(all_fixture_transcripts()) - 1)
    assert sum(p for days in counted.values() for p, _t in days.values()) > 0
    assert sum(t for days in counted.values() for _p, t in days.values()) > 0


def test_a_generated_store_is_counted_alike_through_appends_renames_gzips_forgets_and_restores(
    empty_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = empty_store
    files = generate(store, 24)
    indexer.refresh(store)
    assert_counted_as_scanned(store, monkeypatch)
    rng = random.Random(3)
    # appends: to a file ending in a newline, and to JS-style files (the next line starts one)
    for path in files[:4]:
        more = generated_lines(rng, "appended", path.name[:10], 9)
        ended = path.read_bytes().endswith(b"\n")
        append_text(path, ("" if ended else "\n") + "\n".join(more) + "\n")
    stats = indexer.refresh(store)
    assert stats.files_read == 4
    assert_counted_as_scanned(store, monkeypatch)
    # a rename keeps the rows (the file is not read again), a gzip too
    renamed = files[5].with_name(files[5].name.replace("_2", "_3", 1))
    os.replace(files[5], renamed)
    old = 10 * 86400
    for path in files[6:9]:
        os.utime(path, (path.stat().st_atime - old, path.stat().st_mtime - old))
    assert len(compress(store, retention_days=5)) == 3
    stats = indexer.refresh(store)
    assert stats.files_renamed == 4 and stats.files_read == 0
    assert_counted_as_scanned(store, monkeypatch)
    # forgotten files drop out of the counts; restored, they come back without a read
    item = forget_l1(store, files[10].name)
    forget_l1(store, files[11].name)
    indexer.refresh(store)
    counted = assert_counted_as_scanned(store, monkeypatch)
    assert files[10].name not in counted and files[11].name not in counted
    restore(store, item.id)
    stats = indexer.refresh(store)
    assert stats.files_renamed == 1 and stats.files_read == 0
    assert files[10].name in assert_counted_as_scanned(store, monkeypatch)


def test_a_search_counts_what_it_indexes_and_the_screen_reads_only_what_the_index_lacks(
    empty_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = empty_store
    files = generate(store, 6, seed=11)
    search(store, "lock", deep=True)  # a search's own refresh indexes (and counts) the files
    assert set(index_counts(store)) == {p.name for p in files}
    # grown since: read by the screen, the rest from the index
    append_text(files[0], "\n" + "\n".join(generated_lines(random.Random(1), "s", files[0].name[:10], 5)))
    being_written = '{"ts":"2026-05-01T00:00:00Z","role":"user","text":"half'
    append_text(files[1], ("" if files[1].read_bytes().endswith(b"\n") else "\n") + being_written)
    days, reads = SCREEN.reads(store, monkeypatch)
    assert sorted(reads) == sorted([files[0].name, files[1].name])
    assert days == SCREEN.without_index(store, monkeypatch)
    # refreshed: the grown file is current again; the half-written line keeps its file out
    indexer.refresh(store)
    assert files[0].name in index_counts(store) and files[1].name not in index_counts(store)
    again, reads = SCREEN.reads(store, monkeypatch)
    assert again == days and reads == [files[1].name]


def test_an_index_made_before_the_day_counts_gets_them_from_a_background_refresh(
    empty_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = empty_store
    files = generate(store, 8, seed=5)
    gz = files[2].with_name(files[2].name + ".gz")
    gz.write_bytes(gzip.compress(files[2].read_bytes()))
    files[2].unlink()
    indexer.refresh(store)
    as_made_before(store, schema.L1_DAYS, l1days.FILLED)
    assert history._indexed_counts(store) == {}  # no table: the screen reads the files
    assert history.daily_activity(store) == SCREEN.without_index(store, monkeypatch)
    search(store, "lock", deep=True)  # a search's refresh does not read the whole store for them
    assert history._indexed_counts(store) == {}
    stats = indexer.refresh(store)  # the index job's refresh does, once
    assert stats.files_read == 0
    assert_counted_as_scanned(store, monkeypatch)
    conn = schema.connect(store.search_db)
    assert conn.execute("SELECT value FROM meta WHERE key=?", (l1days.FILLED,)).fetchone() == ("1",)
    conn.close()


def test_a_rebuild_counts_every_file_again(empty_store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    store = empty_store
    generate(store, 5, seed=2)
    indexer.refresh(store)
    before = index_counts(store)
    indexer.reindex(store)
    assert index_counts(store) == before
    assert_counted_as_scanned(store, monkeypatch)
