"""The search index keeps each L3 summary's decisions and open issues (``l3_findings``), read by
the activity screen's rule: the screen lists them from there for every summary the index has
current and opens only the others. The index's list must equal reading the files on real and
generated stores, after a summary is written, regenerated, forgotten, restored or rebuilt,
and an index made before the table gets them from a background refresh."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

import memkeeper.core.search.history as history
from memkeeper.core.demo import create_demo_store
from memkeeper.core.search import indexer, l3findings, schema
from memkeeper.core.search.engine import search
from memkeeper.core.store import changes
from memkeeper.core.store.atomic import atomic_write_json
from memkeeper.core.store.memory_index import rebuild_index
from memkeeper.core.store.names import is_summary, summary_name
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.store.trash import forget_archive, restore
from memkeeper.core.summaries.fields import Row, findings_of
from memkeeper.core.summaries.summary import generate_summary
from tests.unit.summary.test_summary_fields_plain import junk_summary

from .conftest import Screen, as_made_before, from_index

FIXTURES = Path(__file__).parents[2] / "fixtures" / "summaries"


def index_lists(store: StorePaths) -> dict[str, list[list[str]]]:
    """What the index holds, per summary it has read."""
    listed = from_index(store, l3findings.listed)
    return {name: json.loads(text) for name, (_sig, text) in listed.items()}


def read_lists(store: StorePaths) -> dict[str, list[list[str]]]:
    """Every summary file's list, read by the screen's rule."""
    return {
        p.name: [list(row) for row in findings_of(p.read_bytes())]
        for p in sorted(store.root.iterdir())
        if is_summary(p.name)
    }


SCREEN = Screen(history, "_read_findings", "_indexed_findings", history.findings)


def assert_listed_as_read(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> list[history.Finding]:
    """Every summary is in the index with the files' list, the screen opens none of them, and
    each item names a summary that holds it."""
    assert index_lists(store) == read_lists(store)
    found, reads = SCREEN.reads(store, monkeypatch)
    assert reads == []
    assert found == SCREEN.without_index(store, monkeypatch)
    assert all((store.root / summary_name(f.archive)).is_file() for f in found)  # each opens its source
    return found


# -- stores ---------------------------------------------------------------------------------


def archive_with_summary(store: StorePaths, n: int, summary: object) -> str:
    """An archive ``n`` with ``summary`` as its summary file's JSON (or text, if a string)."""
    name = f"memory_2026{1 + n % 12:02d}{1 + n % 28:02d}_{n % 24:02d}0000.md"
    store.archive(name).write_text(f"# memory\n\n## 2026-01-01 10:00\n- archive {n}\n", "utf-8")
    text = summary if isinstance(summary, str) else json.dumps(summary, ensure_ascii=False)
    (store.root / summary_name(name)).write_text(text, "utf-8")
    return name


def write_summary(store: StorePaths, archive: str, summary: object) -> None:
    """A summary replaced as the summary job replaces one (atomically, named in the journal)."""
    path = store.root / summary_name(archive)
    atomic_write_json(path, summary)
    changes.record(store, path)


def generate(store: StorePaths, count: int, seed: int = 7) -> list[str]:
    """Archives whose summaries are junk-filled as the JS plugin and models leave them, with a few
    files the model refuses or cannot read."""
    rng = random.Random(seed)
    names = []
    for n in range(count):
        summary: object = junk_summary(rng)
        if n % 11 == 3:
            summary = "{ not json"
        elif n % 13 == 5:
            summary = "\ufeff" + json.dumps(junk_summary(rng))
        names.append(archive_with_summary(store, n, summary))
    atomic_write_json(store.index, rebuild_index(store))
    return names


def test_real_summaries_are_listed_by_the_index_as_the_screen_reads_them(
    empty_store: StorePaths, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = create_demo_store(tmp_path / "demo")
    for n, fixture in enumerate(sorted(FIXTURES.glob("*.json"))):
        archive_with_summary(empty_store, n, fixture.read_text("utf-8"))
    for path in store.root.iterdir():  # the demo's archives and summaries beside the fixtures
        if path.name.startswith("memory_"):
            shutil.copy2(path, empty_store.root / path.name)
    atomic_write_json(empty_store.index, rebuild_index(empty_store))
    indexer.refresh(empty_store)
    found = assert_listed_as_read(empty_store, monkeypatch)
    assert len(index_lists(empty_store)) >= 7  # four fixtures (JS-written and real) and the demo's
    assert {f.kind for f in found} == {"decision", "issue"}


def test_a_generated_store_is_listed_alike_through_writes_regenerations_forgets_restores_and_rebuilds(
    empty_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = generate(empty_store, 40)
    indexer.refresh(empty_store)
    first = assert_listed_as_read(empty_store, monkeypatch)
    assert len(first) > 20
    # a summary written (the model's answer replaces the extractive one) and one regenerated
    rows: list[Row] = [("decision", "written later", "2026-12-01", "a reason")]
    decision = {"decision": rows[0][1], "date": rows[0][2], "reason": rows[0][3]}
    write_summary(empty_store, names[0], {"keyDecisions": [decision]})
    generate_summary(empty_store, names[1], backend="extractive")
    found, reads = SCREEN.reads(empty_store, monkeypatch)  # before the index has seen them
    assert sorted(reads) == sorted(summary_name(n) for n in names[:2])
    assert found == SCREEN.without_index(empty_store, monkeypatch)
    indexer.refresh(empty_store)
    again = assert_listed_as_read(empty_store, monkeypatch)
    assert index_lists(empty_store)[summary_name(names[0])] == [list(rows[0])]
    assert "written later" in [f.text for f in again]
    # forgotten archives take their summaries' lists with them; restored, they come back
    item = forget_archive(empty_store, names[2])
    forget_archive(empty_store, names[3])
    indexer.refresh(empty_store)
    assert_listed_as_read(empty_store, monkeypatch)
    assert summary_name(names[2]) not in index_lists(empty_store)
    restore(empty_store, item.id)
    indexer.refresh(empty_store)
    assert summary_name(names[2]) in index_lists(empty_store)
    before = assert_listed_as_read(empty_store, monkeypatch)
    indexer.reindex(empty_store)
    assert assert_listed_as_read(empty_store, monkeypatch) == before


def test_a_search_lists_what_it_indexes(empty_store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    generate(empty_store, 6, seed=11)
    search(empty_store, "decision", deep=True)  # a search's own refresh indexes (and lists) them
    assert_listed_as_read(empty_store, monkeypatch)


def test_an_index_made_before_the_table_gets_the_lists_from_a_background_refresh(
    empty_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = empty_store
    names = generate(store, 12, seed=5)
    indexer.refresh(store)
    as_made_before(store, schema.L3_FINDINGS, l3findings.FILLED)
    assert history._indexed_findings(store) == {}  # no table: the screen reads the files
    assert history.findings(store) == SCREEN.without_index(store, monkeypatch)
    search(store, "decision", deep=True)  # a search's refresh does not read every summary for them
    assert history._indexed_findings(store) == {}
    # one summary replaced since it was indexed: the fill leaves it to the refresh that reads it
    write_summary(store, names[4], {"issues": ["replaced meanwhile"]})
    conn = schema.connect(store.search_db)
    l3findings.ensure(conn)
    assert l3findings.fill(store, conn) == len(names) - 1
    assert l3findings.fill(store, conn) == 0  # once per index
    conn.close()
    assert summary_name(names[4]) not in index_lists(store)
    stats = indexer.refresh(store)
    assert stats.files_read == 1
    assert_listed_as_read(store, monkeypatch)
    conn = schema.connect(store.search_db)
    assert conn.execute("SELECT value FROM meta WHERE key=?", (l3findings.FILLED,)).fetchone() == ("1",)
    conn.close()


def test_the_screens_tables_are_asked_of_the_os_ahead(
    empty_store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.core.search import readahead

    asked: list[tuple[Path, list[int]]] = []

    def record(path: Path, page_size: int, roots: list[int], max_pages: int = 0) -> int:
        asked.append((path, list(roots)))
        return 0

    monkeypatch.setattr(readahead, "prefetch", record)
    history.read_ahead(empty_store)  # no index yet: nothing asked, nothing made
    assert asked == [] and not empty_store.search_db.exists()
    generate(empty_store, 3)
    indexer.refresh(empty_store)
    history.read_ahead(empty_store)
    conn = schema.connect_readonly(empty_store.search_db, 1.0)
    assert conn is not None
    try:
        roots = [root for _name, root in readahead.tables(conn, (schema.L3_FINDINGS, schema.L1_DAYS))]
    finally:
        conn.close()
    assert len(roots) == 2 and asked == [(empty_store.search_db, roots)]
