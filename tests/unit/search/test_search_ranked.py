"""Ranked search (the default): plain questions find the entry, in any words, with a confidence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.search import HIGH_CONFIDENCE, ranked, scoring, search
from memkeeper.core.search.sources import Doc
from memkeeper.core.search.words import edit_distance, variants
from memkeeper.core.store.paths import StorePaths
from tests.l1_data import l1_entry, store_with_memory, write_l1


def _filler(n: int) -> list[dict[str, Any]]:
    """Ordinary turns around the planted ones, so ranking has something to beat."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        out.append(l1_entry(i % 60, "user", text=f"please update the readme section {i} and run the tests"))
        out.append(l1_entry(i % 60, "tool", name="Bash", cmd=f"pytest -q tests/test_{i}.py"))
        out.append(l1_entry(i % 60, "tool_result", output=f"{i} passed in 0.{i}s", result="ok"))
        out.append(
            l1_entry(i % 60, "assistant", text=f"The tests pass; I updated section {i} of the readme.")
        )
    return out


def _chat(said: tuple[str, ...]) -> list[dict[str, Any]]:
    """``said`` as a chat: typed prompts and replies in turn."""
    return [l1_entry(i, ("user", "assistant")[i % 2], text=text) for i, text in enumerate(said)]


def _store(tmp_path: Path) -> StorePaths:
    store = store_with_memory(
        tmp_path / "proj",
        "# Memory\n\n## 2026-11-01_0900\n- [db]: we decided to keep the index in SQLite with WAL\n",
    )
    planted = [
        l1_entry(
            1, "user", text="The nightly backup job keeps crashing with a permission error, can you look?"
        ),
        l1_entry(2, "tool", name="Bash", cmd="ls -la /var/backups"),
        l1_entry(3, "tool_result", output="drwx------ root root backups", result="ok"),
        l1_entry(
            4,
            "assistant",
            text="The cron user cannot write to the folder; I changed its owner to the app user.",
        ),
        l1_entry(5, "user", text="검색 속도를 높이려고 트라이그램 인덱스를 추가했어"),
        l1_entry(6, "assistant", text="Rotation thresholds are measured in tokens."),
        l1_entry(7, "tool_result", output="rotation threshold: 23750 tokens (from config)", result="ok"),
    ]
    write_l1(store, "2026-11-20_100000_aaaa1111.l1.jsonl", [*_filler(30), *planted, *_filler(10)])
    return store


def _top(results: Any) -> Any:
    return results.ranked[0]


def test_a_plain_question_finds_the_planted_entry(tmp_path: Path) -> None:
    store = _store(tmp_path)
    results = search(store, "why did the nightly backup fail?")
    assert results.mode == "ranked" and results.source == "index"
    top = _top(results)
    assert "nightly backup job keeps crashing" in top.snippet
    assert top.tier == "l1" and 0.0 < top.confidence <= 1.0
    # the grep-like mode finds nothing for the same question: not every word is there
    assert not search(store, "why did the nightly backup fail?", exact=True, deep=True)


def test_stop_words_are_ignored(tmp_path: Path) -> None:
    store = _store(tmp_path)
    bare = search(store, "nightly backup crashing")
    asked = search(store, "what is it with the nightly backup that is crashing?")
    assert _top(bare).id == _top(asked).id
    assert asked.terms == ("nightly", "backup", "crashing")
    # a query of stop words only still ranks by them rather than answering nothing
    assert search(store, "what is it")


def test_stemming_and_word_forms(tmp_path: Path) -> None:
    store = _store(tmp_path)
    # "decision" is not in the memory; "decided" is: the query asks for both forms
    assert "decision" in variants("decided") and "decide" in variants("decision")
    top = _top(search(store, "the decision about sqlite"))
    assert top.tier == "memory" and "decided to keep the index in SQLite" in top.snippet
    # plural and -ing forms meet their stems
    assert "rotation threshold" in _top(search(store, "rotating thresholds")).snippet.lower()


def test_a_short_form_finds_its_full_word_and_back(tmp_path: Path) -> None:
    assert "python" not in variants("py")  # file names would answer every question about the language
    store = store_with_memory(tmp_path / "chat", "# Memory\n")
    write_l1(
        store,
        "2026-11-02_100000_chat0001.l1.jsonl",
        [
            *_filler(8),
            l1_entry(10, "user", text="The gf and I are hitting the beach next month!"),
            l1_entry(11, "assistant", text="Moved the migration to run before the database opens its pool."),
        ],
    )
    # neither entry holds the word asked: each is found by the other form
    assert "hitting the beach" in _top(search(store, "his girlfriend", tiers=["l1"])).snippet
    assert "database opens" in _top(search(store, "the db", tiers=["l1"])).snippet


def test_neighbour_context_finds_a_tool_result_by_its_question(tmp_path: Path) -> None:
    store = _store(tmp_path)
    # the listing itself never says "backup job" or "permission": its prompt does
    results = search(store, "backup job permission listing", tiers=["l1"], types=["tool_result"])
    top = _top(results)
    assert "drwx------ root root backups" in top.snippet
    own = _top(search(store, "backup job permission", tiers=["l1"], types=["user"]))
    assert top.confidence < own.confidence  # words found only next to an entry count half


def test_field_weights_rank_typed_prompts_above_tool_output(tmp_path: Path) -> None:
    store = _store(tmp_path)
    hits = search(store, "rotation threshold tokens", tiers=["l1"]).ranked
    types = [h.type for h in hits[:2]]
    assert types == ["assistant", "tool_result"]


def test_korean_still_works_through_the_trigram_channel(tmp_path: Path) -> None:
    store = _store(tmp_path)
    # "트라이그램" sits inside "트라이그램을"-like words: no space to split at
    top = _top(search(store, "트라이그램"))
    assert "트라이그램 인덱스" in top.snippet
    mixed = _top(search(store, "검색 trigram"))
    assert "검색" in mixed.snippet


def test_confidence_is_high_only_when_the_question_is_covered(tmp_path: Path) -> None:
    store = _store(tmp_path)
    full = _top(search(store, "nightly backup permission error"))
    assert full.confidence >= HIGH_CONFIDENCE and full.tier_of_confidence == "high"
    partial = _top(search(store, "nightly backup dinosaur volcano"))
    assert partial.confidence < HIGH_CONFIDENCE


def test_honest_empty_answer_with_suggestions(tmp_path: Path) -> None:
    store = _store(tmp_path)
    results = search(store, "nihgtly bakcup")
    assert not results and results.mode == "ranked"
    assert "nightly" in results.suggestions and "backup" in results.suggestions
    # a query with any known word returns hits
    assert search(store, "nightly zzzqqq")
    assert edit_distance("wrod", "word") == 1


def test_a_quoted_query_is_exact(tmp_path: Path) -> None:
    store = _store(tmp_path)
    results = search(store, '"backup job"', deep=True)
    assert results.mode == "exact" and results.hits
    assert all("backup job" in h.snippet.lower() for h in results.hits)


def test_quotes_inside_a_question_are_words(tmp_path: Path) -> None:
    store = _store(tmp_path)
    # a quoted title inside a question is not exact mode (which would want every word, "why" too)
    results = search(store, 'why did the "nightly backup" fail?')
    assert results.mode == "ranked"
    assert results.hits and "nightly backup" in _top(results).snippet
    # two quoted phrases are not one phrase either
    assert search(store, '"nightly backup" "permission error"').mode == "ranked"


def test_ranked_without_the_index_reads_the_files(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.search_db.parent.mkdir(parents=True, exist_ok=True)
    store.search_db.write_bytes(b"this is not a database" * 100)
    store.search_db.chmod(0o000)
    try:
        results = search(store, "why did the nightly backup fail?")
    finally:
        store.search_db.chmod(0o600)
    assert results.mode == "ranked"
    assert results.hits and "nightly backup" in _top(results).snippet


def test_an_appended_entry_gets_its_neighbours_from_the_file(tmp_path: Path) -> None:
    store = _store(tmp_path)
    path = store.sessions / "2026-11-21_090000_bbbb2222.l1.jsonl"
    first = [l1_entry(1, "user", text="the quarterly invoice export times out on large accounts")]
    write_l1(store, path.name, first)
    assert search(store, "invoice export")  # indexed: the file is now known
    with open(path, "a", encoding="utf-8") as handle:  # an append, read from its offset
        handle.write(
            json.dumps(l1_entry(2, "tool_result", output="HTTP 504 after 30000 ms", result="ok")) + "\n"
        )
    results = search(store, "invoice export timeout result", tiers=["l1"], types=["tool_result"])
    assert results.hits and "HTTP 504" in _top(results).snippet


def test_a_rewritten_memory_file_leaves_no_stale_words(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert "sqlite" in _top(search(store, "sqlite wal decision", tiers=["memory"])).snippet.lower()
    store.memory.write_text("# Memory\n\n## 2026-11-02_0900\n- [ui]: the sidebar is collapsible\n", "utf-8")
    assert not search(store, "sqlite wal", tiers=["memory"])
    assert "sidebar" in _top(search(store, "collapsing the sidebar", tiers=["memory"])).snippet


def _common_words_store(tmp_path: Path) -> StorePaths:
    """The base store plus short entries holding core, flush and py apart, and one naming core/flush.py."""
    store = _store(tmp_path)
    apart = [l1_entry(i % 60, "user", text=f"py core then flush {i}") for i in range(40)]
    path = [l1_entry(30, "user", text="we fixed the timeout in core/flush.py after a long review of the job")]
    path.append(
        l1_entry(31, "user", text="the focus bug lives in tui/SearchScreen.py where the screen is built")
    )
    apart += [l1_entry(i % 60, "user", text=f"search the screen of the tui {i}") for i in range(20)]
    write_l1(store, "2026-11-21_100000_bbbb2222.l1.jsonl", [*apart[:20], *path, *apart[20:]])
    return store


def test_common_words_are_ranked_without_sqlite_bm25(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Words in more rows than the scoring budget: the newest rows, scored here by field and length."""
    store = _common_words_store(tmp_path)
    monkeypatch.setattr(ranked, "SCORE_BUDGET", 0)  # every word counts as common
    calls: list[str] = []
    real = ranked._top_rows

    def counted(*args: Any) -> Any:
        calls.append(args[2])
        return real(*args)

    monkeypatch.setattr(ranked, "_top_rows", counted)
    hits = search(store, "rotation threshold tokens", tiers=["l1"]).ranked
    assert [h.type for h in hits[:2]] == ["assistant", "tool_result"]  # typed text above tool output
    assert "nightly backup job keeps crashing" in _top(search(store, "nightly backup crashing")).snippet
    assert calls == []


def test_a_path_like_query_finds_the_file_mention(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _common_words_store(tmp_path)
    assert "core/flush.py" in _top(search(store, "core/flush.py")).snippet
    monkeypatch.setattr(ranked, "SCORE_BUDGET", 1)  # the words are common: asked as a phrase
    for query in ("core/flush.py", "why does core/flush.py time out"):
        assert "core/flush.py" in _top(search(store, query)).snippet, query
    assert "tui/SearchScreen.py" in _top(search(store, "tui/SearchScreen.py")).snippet
    # a camelCase word in a path: the phrase is the words as the index holds them, not its parts
    assert ranked.parse_ranked("tui/SearchScreen.py").phrases == (("tui", "searchscreen", "py"),)
    assert ranked.parse_ranked("core/flush.py zephyr-7731 a.b").phrases == (
        ("core", "flush", "py"),
        ("zephyr", "7731"),
        ("a", "b"),
    )


def test_suggestions_skip_hex_ids_and_words_no_entry_holds(tmp_path: Path) -> None:
    store = _store(tmp_path)
    write_l1(
        store,
        "2026-11-21_100000_cccc3333.l1.jsonl",
        [
            l1_entry(1, "tool_result", output="commit eceaed1 and deadbe0 and abcdef"),
            l1_entry(2, "user", text="exceeded"),
        ],
    )
    results = search(store, "exceded")
    assert not results and "exceeded" in results.suggestions
    assert not any(any(c.isdigit() for c in s) or s == "abcdef" for s in results.suggestions)


@pytest.mark.parametrize("budget", [ranked.SCORE_BUDGET, 0], ids=["rare-words", "common-words"])
def test_a_session_added_then_deleted_leaves_the_same_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    """A copy of a session, added then deleted (bench_search's incremental update), leaves its
    rows dead in the index: they must not take the places of the live rows they copy."""
    from memkeeper.core.search import refresh

    store = _store(tmp_path)
    monkeypatch.setattr(ranked, "SCORE_BUDGET", budget)  # 0: every word counts as common
    session = store.sessions / "2026-11-20_100000_aaaa1111.l1.jsonl"

    def hits() -> list[tuple[str, int | None, str]]:
        return [(h.file, h.line, h.snippet) for h in search(store, "passed", limit=100).ranked]

    before = hits()
    assert before
    copy = store.sessions / "2099-01-01_000000_benchnew.l1.jsonl"
    copy.write_bytes(session.read_bytes())
    refresh(store)
    assert any(f == "sessions/" + copy.name for f, _l, _s in hits())
    copy.unlink()
    refresh(store)
    assert hits() == before


def _conversation(tmp_path: Path) -> StorePaths:
    """A chat where the question holds the words asked and the answer after it holds none of them."""
    store = store_with_memory(tmp_path / "chat", "# Memory\n")
    turns = [
        l1_entry(0, "user", text="Morning! The weather finally turned."),
        l1_entry(1, "assistant", text="Great, time for a walk then."),
        l1_entry(2, "user", text="How long have you been practising yoga at that studio?"),
        l1_entry(3, "tool", name="Bash", cmd="date"),
        l1_entry(4, "assistant", text="For about three years now, twice a week."),
        l1_entry(5, "user", text="Nice, I should try yoga too."),
        *_filler(20),
    ]
    write_l1(store, "2026-11-20_100000_chat0001.l1.jsonl", turns)
    return store


def test_a_hit_is_an_exchange_the_question_comes_with_its_answer(tmp_path: Path) -> None:
    store = _conversation(tmp_path)
    results = search(store, "how long practising yoga studio", tiers=["l1"])
    top = results.ranked[0]
    assert "practising yoga" in top.snippet and top.line == 3
    # the turn it answers and the turn that answers it (the tool call in between stepped over)
    assert [(t.type, t.line) for t in top.exchange] == [("assistant", 2), ("assistant", 5)]
    assert "three years" in top.exchange[1].snippet
    # a turn shown in a better hit's exchange is not a hit of its own again
    shown = [h.id for h in results.hits] + [t.id for h in results.hits for t in h.exchange]
    assert len(shown) == len(set(shown))
    # --json carries the exchange's entries, each with its file and line
    data = results.to_dict()["tiers"][-1]["hits"][0]
    assert [(t["file"], t["line"]) for t in data["exchange"]] == [(top.file, 2), (top.file, 5)]


def test_exact_mode_hits_carry_no_exchange(tmp_path: Path) -> None:
    store = _conversation(tmp_path)
    hits = search(store, "yoga", exact=True, deep=True).hits
    assert hits and all(h.exchange == () for h in hits)


def test_confidence_is_high_only_for_a_hit_that_stands_out(tmp_path: Path) -> None:
    store = _store(tmp_path)
    alone = search(store, "nightly backup crashing permission", tiers=["l1"]).ranked
    assert alone[0].tier_of_confidence == "high"  # every word, and nothing else comes close
    assert all(h.tier_of_confidence != "high" for h in alone[1:])
    # the same words held as well by another entry of another session: neither is sure
    write_l1(
        store,
        "2026-11-21_100000_bbbb2222.l1.jsonl",
        [
            *_filler(5),
            l1_entry(1, "user", text="The nightly backup job keeps crashing with a permission error again!"),
            *_filler(5),
        ],
    )
    twice = search(store, "nightly backup crashing permission", tiers=["l1"]).ranked
    assert twice[0].confidence < HIGH_CONFIDENCE and twice[0].confidence >= 0.5 * alone[0].confidence


def test_a_confident_lookup_naming_someone_the_memory_never_met_finds_nothing(tmp_path: Path) -> None:
    from memkeeper.core.search.engine import search_confident

    store = _conversation(tmp_path)
    write_l1(
        store,
        "2026-11-21_100000_chat0002.l1.jsonl",
        [l1_entry(0, "user", text="Rosalind went camping by the lake with her kids last summer.")],
    )
    search(store, "warm up the index")
    assert search_confident(store, "Where did Rosalind go camping with her kids?", 0.5)
    # the same question about someone no entry names is not about this memory
    assert search_confident(store, "Where did Theodora go camping with her kids?", 0.5) == []
    # a capital that begins the sentence is not a name
    assert search_confident(store, "Camping by the lake with kids?", 0.5)


def test_an_exchange_whose_turn_before_is_shown_already_takes_the_next_turn_after(tmp_path: Path) -> None:
    store = store_with_memory(tmp_path / "chat", "# Memory\n")
    said = (
        "Hello there.",
        "The lighthouse keeper retired in spring.",
        "Really, I did not know that.",
        "His niece is the lighthouse keeper now.",
        "She must love it.",
        "She does, every single day.",
    )
    write_l1(store, "2026-11-20_100000_chat0003.l1.jsonl", [*_chat(said), *_filler(10)])
    first, second = search(store, "lighthouse keeper retired", tiers=["l1"]).hits[:2]
    assert (first.line, [t.line for t in first.exchange]) == (2, [1, 3])
    # line 3 is shown with the first hit: the second takes the two turns after it
    assert (second.line, [t.line for t in second.exchange]) == (4, [5, 6])


def test_an_exchange_takes_the_reply_to_a_follow_up_question_instead_of_the_turn_before(
    tmp_path: Path,
) -> None:
    store = store_with_memory(tmp_path / "chat", "# Memory\n")
    said = (
        "Morning, how was your week?",
        "I finished a novel about a lighthouse keeper on a remote island.",
        "Oh nice, what did you take from it?",
        "That patience pays off, and that quiet work matters.",
        "Good lesson.",
    )
    write_l1(store, "2026-11-20_100000_chat0004.l1.jsonl", [*_filler(10), *_chat(said), *_filler(10)])
    top = search(store, "novel lighthouse keeper island", tiers=["l1"]).hits[0]
    assert "lighthouse keeper" in top.snippet and top.line is not None
    # the turn after it asks about it: that question and its reply come, not the greeting before
    assert [t.snippet for t in top.exchange] == [said[2], said[3]]
    assert [t.line for t in top.exchange] == [top.line + 1, top.line + 2]
    # a hit that asks itself keeps the turn before it and its reply
    asked = search(store, "take from it", tiers=["l1"]).hits[0]
    assert asked.line is not None
    assert [t.line for t in asked.exchange] == [asked.line - 1, asked.line + 1]


def test_a_candidate_ranks_with_its_session() -> None:
    def item(file: str, loc: int, score: float) -> scoring.Ranked:
        return scoring.Ranked(Doc("l1", "user", file, str(loc), loc, None, "", "text"), score, 0.5, loc)

    stray = item("sessions/b.l1.jsonl", 1, 1.0)
    answer, other, more = (item("sessions/a.l1.jsonl", n, s) for n, s in ((2, 0.9), (3, 0.5), (4, 0.5)))
    # alone the stray entry scores best; the answer's session holds most of what matched
    ordered = scoring.by_session([stray, answer, other, more])
    assert [r.doc.loc for r in ordered] == ["2", "1", "3", "4"]
    assert ordered[0].score == pytest.approx(0.9 * (1 + scoring.SESSION_WEIGHT))
    assert ordered[1].score == pytest.approx(1.0 * (1 + scoring.SESSION_WEIGHT * 1.0 / 1.9))
    # one session: every score grows alike, the order stays; one candidate is left as it is
    same = scoring.by_session([answer, other, more])
    assert [r.doc.loc for r in same] == ["2", "3", "4"]
    assert scoring.by_session([stray]) == [stray]


def test_the_session_where_a_question_s_words_gather_ranks_its_entry_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = store_with_memory(tmp_path / "chat", "# Memory\n")
    trip = (
        "We went sailing along the coast last weekend.",
        "How was the sailing?",
        "Windy, the sailing was rough near the cliffs.",
        "Did you make it to the harbour?",
        "We sailed into the harbour after the storm had passed.",
        "Glad you are safe.",
    )
    write_l1(store, "2026-11-20_100000_trip0001.l1.jsonl", [*_filler(8), *_chat(trip), *_filler(8)])
    stray = [l1_entry(0, "user", text="Storm, harbour and sailing photos in the new magazine.")]
    write_l1(store, "2026-11-21_100000_misc0002.l1.jsonl", [*_filler(8), *stray, *_filler(8)])
    asked = "sailing harbour after the storm"

    def top_file() -> str:
        return search(store, asked, tiers=["l1"]).hits[0].file

    assert "trip0001" in top_file()
    monkeypatch.setattr(scoring, "SESSION_WEIGHT", 0.0)
    assert "misc0002" in top_file()  # on its own words alone the stray entry wins
