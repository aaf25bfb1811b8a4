"""What the index holds: camelCase split as well as whole, session titles, trigrams by piece, the schema upgrade."""

from __future__ import annotations

import json
import runpy
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.capture.titles import session_titles
from memkeeper.core.search import reindex, scan_search, search
from memkeeper.core.search import schema as search_schema
from memkeeper.core.search.words import camel_parts, plain_words, with_parts
from memkeeper.core.store.paths import StorePaths, ensure_store, paths_for
from tests.l1_data import ODD_LINES, l1_entry, store_with_memory, write_l1


def _filler(n: int) -> list[dict[str, Any]]:
    return [
        l1_entry(i % 60, "user" if i % 2 else "assistant", text=f"ordinary turn {i} about the readme")
        for i in range(n)
    ]


def _store(tmp_path: Path) -> StorePaths:
    store = store_with_memory(
        tmp_path / "proj", "# Memory\n\n## 2026-11-01_0900\n- [api]: loadSessionIndex reads the cache\n"
    )
    write_l1(
        store,
        "2026-11-20_100000_aaaa1111.l1.jsonl",
        [
            l1_entry(0, "user", text="Please make the archive writer safer when the disk is full"),
            *_filler(20),
            l1_entry(
                30, "assistant", text="I renamed the helper to rotateMemory() and call it from the hook."
            ),
            l1_entry(31, "assistant", text="The summary_state file is now written atomically."),
            l1_entry(32, "assistant", text="We rotate the memory file once it passes the threshold."),
            *_filler(10),
        ],
    )
    write_l1(
        store,
        "2026-11-21_100000_bbbb2222.l1.jsonl",
        [l1_entry(0, "user", text="Why does the Korean tokenizer miss short words?"), *_filler(6)],
    )
    return store


def _snippets(results: Any) -> list[str]:
    return [h.snippet for h in results.ranked]


def test_camel_case_words_split_as_well_as_kept_whole() -> None:
    assert plain_words("call rotateMemory now") == ["call", "rotatememory", "rotate", "memory", "now"]
    assert camel_parts("HTTPServerError and getURLs") == ["http", "server", "error", "get", "urls"]
    assert camel_parts("The Index of README and IDs") == []  # capitals alone are not camelCase
    assert with_parts("plain prose") == "plain prose"
    assert with_parts("use parseJSON") == "use parseJSON\nparse json"


def test_camel_case_found_by_its_words_and_whole(tmp_path: Path) -> None:
    store = _store(tmp_path)
    # the words of an identifier find it, and the identifier finds itself first
    assert any("rotateMemory()" in s for s in _snippets(search(store, "rotate memory", tiers=["l1"]))[:2])
    assert "rotateMemory()" in _snippets(search(store, "rotateMemory", tiers=["l1"]))[0]
    # the identifier as a query also finds the words written apart
    assert any("rotate the memory file" in s for s in _snippets(search(store, "rotateMemory", tiers=["l1"])))
    # memory tier too
    assert "loadSessionIndex" in _snippets(search(store, "load session index"))[0]


def test_snake_case_found_by_its_words_and_whole(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert "summary_state" in _snippets(search(store, "summary state", tiers=["l1"]))[0]
    assert "summary_state" in _snippets(search(store, "summary_state", tiers=["l1"]))[0]


def test_session_titles_are_indexed_as_their_own_field(tmp_path: Path) -> None:
    store = _store(tmp_path)
    reindex(store)
    titles = session_titles(store, write=False)
    conn = sqlite3.connect(store.search_db)
    try:
        rows = conn.execute(
            f"SELECT s.rel FROM {search_schema.TITLES} t JOIN sources s ON s.id = t.rowid"
            f" WHERE {search_schema.TITLES} MATCH ?",
            ("archive writer disk",),
        ).fetchall()
        count = conn.execute(f"SELECT count(*) FROM {search_schema.TITLES}_docsize").fetchone()[0]
    finally:
        conn.close()
    assert rows == [("sessions/2026-11-20_100000_aaaa1111.l1.jsonl",)]
    assert count == 2 == len(titles)
    assert "archive writer safer" in titles["2026-11-20_100000_aaaa1111.l1.jsonl"]


def test_exact_phrases_across_whitespace_match_the_scan(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for query in ('"the memory file"', '"rotate the"', '"e m"', '"turn 1"', "turn 1", '"r  t"', "()"):
        indexed = search(store, query, exact=True, deep=True)
        assert indexed.source == "index"
        assert indexed.tiers == scan_search(store, query, deep=True).tiers, query
    assert search(store, '"rotate the memory"', exact=True, deep=True).total == 1


def test_an_index_of_the_previous_schema_is_rebuilt_once_with_progress(tmp_path: Path) -> None:
    store = _store(tmp_path)
    reindex(store)
    conn = sqlite3.connect(store.search_db)
    conn.execute("UPDATE meta SET value=? WHERE key='schema'", (str(search_schema.SCHEMA_VERSION - 1),))
    conn.execute("DROP TABLE titles_l1")  # the previous schema had no title field
    conn.commit()
    conn.close()
    seen: list[tuple[int, int]] = []
    first = search(store, "rotate memory", progress=lambda done, total, _f: seen.append((done, total)))
    old = search_schema.SCHEMA_VERSION - 1
    assert any(f"schema {old} replaced by {search_schema.SCHEMA_VERSION}" in w for w in first.warnings)
    assert first.source == "index" and first.ranked  # rebuilt, never silently empty
    assert seen and seen[-1][0] == seen[-1][1] > 0
    again = search(store, "rotate memory")
    assert not any("replaced" in w for w in again.warnings)
    assert [h.id for h in again.ranked] == [h.id for h in first.ranked]


def test_a_session_title_counts_for_the_entries_of_its_session(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    store = paths_for(tmp_path / "proj")
    ensure_store(store)
    answer = "I changed the owner of the folder to the app user."
    for name, title in (
        ("2026-11-20_100000_aaaa1111.l1.jsonl", "The nightly backup job fails with a permission error"),
        ("2026-11-22_100000_bbbb2222.l1.jsonl", "Tidy up the readme headings please"),
    ):
        # the answer is far from the title's prompt: another prompt comes between them
        turns = [
            l1_entry(0, "user", text=title),
            *_filler(8),
            l1_entry(20, "user", text="go on"),
            l1_entry(21, "assistant", text=answer),
        ]
        write_l1(store, name, [*turns, *_filler(8)])
    hits = [h for h in search(store, "backup owner folder", tiers=["l1"]).ranked if answer[:20] in h.snippet]
    assert [h.file.rsplit("/", 1)[-1][:17] for h in hits] == ["2026-11-20_100000", "2026-11-22_100000"]
    assert hits[0].confidence > hits[1].confidence


def test_the_command_script_runs_nothing_when_a_pool_worker_imports_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spawned process-pool worker (the index build's reader) loads the parent's main
    script as ``__mp_main__``: it must not run the command again (a reindex inside the
    worker waited 30 s for the lock and the build fell back to one process)."""
    script = Path(sys.executable).parent / "memkeeper"  # the console script pip wrote
    monkeypatch.setattr(sys, "argv", ["memkeeper", "--project", str(tmp_path), "reindex"])
    namespace = runpy.run_path(str(script), run_name="__mp_main__")
    assert callable(namespace["run"])  # loaded, not run (running it would raise SystemExit)
    with pytest.raises(SystemExit):
        runpy.run_path(str(script), run_name="__main__")


def _json_loads_line(raw: bytes) -> object:
    """What a line parsed to before the build's faster parser: json.loads of it."""
    from memkeeper.core.search.sources import BROKEN

    text = raw.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        try:
            return json.loads(text.decode("utf-8", "replace"))
        except ValueError:
            return BROKEN


@pytest.mark.parametrize("raw", ODD_LINES)
def test_lines_parse_as_json_loads_parses_them(raw: bytes) -> None:
    from memkeeper.core.search.sources import parse_line

    assert parse_line(raw) == _json_loads_line(raw)


def test_an_entrys_context_is_the_entry_before_the_one_after_and_its_turns_prompt(tmp_path: Path) -> None:
    """Found at query time from the rowids (the index copies no neighbour's words into a row)."""
    from memkeeper.core.search.near import context_marks, followed, near_words
    from memkeeper.core.search.question import parse_ranked
    from memkeeper.core.search.tierstats import tier_stats

    paths = store_with_memory(tmp_path / "proj", "# Memory\n")
    write_l1(
        paths,
        "2026-11-20_100000_cafe0001.l1.jsonl",
        [
            l1_entry(0, "user", text="why does the quokkaledger rotate twice"),
            l1_entry(1, "tool_call", name="Bash", cmd="ls -la sessions"),
            l1_entry(2, "tool_result", output="zebrafile.txt listed"),
            l1_entry(3, "assistant", text="the answer is in the lock"),
            l1_entry(4, "user", text="and the otters"),
            l1_entry(5, "assistant", text="the otters are fine"),
        ],
    )
    write_l1(paths, "2026-11-21_100000_cafe0002.l1.jsonl", [l1_entry(0, "user", text="otters again")])
    reindex(paths)
    conn = search_schema.connect(paths.search_db)
    try:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(words_l1)")]
        held: dict[str, set[int]] = {}
        context: dict[str, set[int]] = {}
        for word in ("quokkaledger", "zebrafile", "answer", "sessions", "otters"):
            query = parse_ranked(word)
            groups = followed(query, tier_stats(conn, "l1", query).df)
            near = near_words(conn, groups)
            (held[word],) = near.held.values()
            context[word] = set(near.context)
            every = [r for (r,) in conn.execute("SELECT id FROM words_l1_docsize")]
            # asked the other way round, entry by entry: the same
            assert set(context_marks(conn, every, groups)) == context[word]
    finally:
        conn.close()
    assert columns == ["hi", "lo"]
    (prompt,), (call,), (result,), (answer,) = (
        held[w] for w in ("quokkaledger", "sessions", "zebrafile", "answer")
    )
    second_prompt, _reply, _other_file = sorted(held["otters"])
    assert context["quokkaledger"] == {
        call,
        result,
        answer,
    }  # the prompt: context of its whole turn, no further
    assert context["zebrafile"] == {call, answer}  # the entries before and after the result
    assert context["sessions"] == {prompt, result}
    assert context["answer"] == {result, second_prompt}
    assert context["otters"] == {answer}  # not its own holders; the other file's prompt has no neighbour


def test_a_prompt_is_context_of_at_most_turn_rows_entries_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.core.search import near as near_module
    from memkeeper.core.search.question import parse_ranked
    from memkeeper.core.search.tierstats import tier_stats

    paths = store_with_memory(tmp_path / "proj", "# Memory\n")
    entries = [l1_entry(0, "user", text="why does the quokkaledger rotate twice")]
    entries += [l1_entry(i, "assistant", text=f"step {i}") for i in range(1, 6)]
    write_l1(paths, "2026-11-20_100000_cafe0001.l1.jsonl", entries)
    reindex(paths)
    monkeypatch.setattr(near_module, "TURN_ROWS", 2)
    conn = search_schema.connect(paths.search_db)
    try:
        query = parse_ranked("quokkaledger")
        groups = near_module.followed(query, tier_stats(conn, "l1", query).df)
        near = near_module.near_words(conn, groups)
        every = sorted(r for (r,) in conn.execute("SELECT id FROM words_l1_docsize"))
        marked = near_module.context_marks(conn, every, groups)
    finally:
        conn.close()
    assert sorted(near.context) == every[1:3]  # the two entries after the prompt
    assert sorted(marked) == every[1:3]  # the same, asked entry by entry
