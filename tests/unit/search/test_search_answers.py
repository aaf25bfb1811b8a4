"""The kind of answer a question asks for: who (a name the question lacks), how many (a number)."""

from __future__ import annotations

from pathlib import Path

from memkeeper.core.search import search
from memkeeper.core.search.answers import asks_count, asks_who, names_someone, tells_count
from memkeeper.core.search.engine import iter_all_docs
from memkeeper.core.search.question import parse_ranked
from memkeeper.core.search.scoring import scan_rank
from memkeeper.core.store.paths import StorePaths
from tests.l1_data import store_with_memory, write_l1


def test_who_and_how_many_are_recognised() -> None:
    assert asks_who("Who did John go to yoga with?") and asks_who("  with whom did she travel?")
    assert not asks_who("Whose idea was the yoga class?") and not asks_who("What did John do?")
    assert asks_count("How many dogs does she have?") and not asks_count("How much did it cost?")
    # a name inside a sentence that the question does not hold; not the first word of a sentence
    asked = "Who did John go to yoga with?"
    assert names_someone("My colleague Rob invited me to a yoga class.", asked)
    assert not names_someone("John: Yoga was great. Stretching helps.", asked)
    assert not names_someone("I went with John, it was fun.", asked)
    assert tells_count("We have three kids.") and tells_count("12 tests passed")
    assert not tells_count("We have kids and a dog.")


def _store(tmp_path: Path, said: list[str]) -> StorePaths:
    """The entries ``said``, each in its own session among unrelated turns (so no hit shows
    another in its exchange)."""
    store = store_with_memory(tmp_path / "chat", "# Memory\n")
    for n, text in enumerate(said):
        turns = [f"Unrelated note number {n}{k}." for k in range(6)]
        turns.insert(3, text)
        write_l1(
            store,
            f"2023-05-0{n + 1}_100000_chat000{n}.l1.jsonl",
            [
                {
                    "ts": f"2023-05-0{n + 1}T10:00:{i:02d}.000Z",
                    "role": ("user", "assistant")[i % 2],
                    "text": t,
                }
                for i, t in enumerate(turns)
            ],
        )
    return store


def test_a_question_asking_who_ranks_the_entry_naming_someone_first(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        [
            "The yoga class at the studio downtown.",
            "The yoga class at the studio was great, I was there with Rob from work this morning.",
            "Yoga class at the studio, my favourite.",
        ],
    )
    asked = search(store, "Who was at the yoga class at the studio?", tiers=["l1"]).hits
    assert "Rob" in asked[0].snippet
    # the same words without "who": the shorter entries holding them come first
    plain = search(store, "the yoga class at the studio", tiers=["l1"]).hits
    assert "Rob" not in plain[0].snippet


def test_a_question_asking_how_many_ranks_the_entry_with_a_number_first(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        [
            "The kids loved the beach trip with the dog.",
            "All three kids came to the beach.",
            "The beach trip with the kids and the dog was lovely.",
        ],
    )
    assert (
        "three"
        in search(store, "How many kids came on the beach trip with the dog?", tiers=["l1"]).hits[0].snippet
    )
    assert "three" not in search(store, "kids beach trip with the dog", tiers=["l1"]).hits[0].snippet


def test_the_scan_without_the_index_weighs_what_is_asked_for_as_the_index_does(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        [
            "The yoga class at the studio downtown.",
            "The yoga class at the studio was great, I was there with Rob from work this morning.",
            "Yoga class at the studio, my favourite.",
        ],
    )
    asked = "Who was at the yoga class at the studio?"
    docs = [d for d in iter_all_docs(store) if d.tier == "l1"]
    assert (
        "Rob" in scan_rank(docs, parse_ranked(asked))[0].doc.body
    )  # the fallback when the index cannot answer
    assert "Rob" in search(store, asked, tiers=["l1"]).hits[0].snippet
