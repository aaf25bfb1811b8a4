"""Time words: a question naming a date finds what was said then, by an entry's date or its own time words."""

from __future__ import annotations

from pathlib import Path

from memkeeper.core.search import search
from memkeeper.core.search.query import day_number
from memkeeper.core.search.timewords import (
    TOLD_WITHIN,
    asks_when,
    in_window,
    month_of,
    question_window,
    tells_when,
)
from tests.l1_data import store_with_memory, write_l1


def _day(text: str) -> int:
    day = day_number(text)
    assert day is not None
    return day


def test_a_question_names_days() -> None:
    seventh = _day("2023-07-07")
    for asked in ("on 7 July, 2023", "on July 7, 2023", "on the 7th of July 2023", "on 2023-07-07"):
        window, month = question_window(f"What happened {asked}?")
        assert window is not None and window[0] == seventh and month is None, asked
    window, _ = question_window("What did she start in December 2023?")
    assert window is not None and window[0] == _day("2023-12-01") and window[1] >= _day("2023-12-31")
    assert question_window("When did she go camping in June?") == (None, 6)
    assert question_window("What did we decide about the cache?") == (None, None)


def test_an_entry_speaks_of_the_days_before_its_own() -> None:
    window = (_day("2023-05-07"), _day("2023-05-07"))
    # said on 8 May: "yesterday" is 7 May; the same words on 9 May are another day
    assert in_window(window, None, "2023-05-08T13:56:00Z", "I went to a support group yesterday.")
    assert not in_window(window, None, "2023-05-09T13:56:00Z", "I went to a support group yesterday.")
    assert in_window(window, None, "2023-05-07T10:00:00Z", "No time words here.")
    assert not in_window(window, None, None, "yesterday")
    assert month_of(_day("2023-06-30")) == 6 and month_of(_day("2024-01-01")) == 1
    assert in_window(
        None, 6, "2023-07-03T10:00:00Z", "We went camping last week."
    )  # told in July, done in June


def test_a_question_naming_a_date_ranks_what_was_said_then_first(tmp_path: Path) -> None:
    store = store_with_memory(tmp_path / "chat", "# Memory\n")
    for day in ("2023-05-08", "2023-06-20", "2023-08-14"):
        write_l1(
            store,
            f"{day}_100000_chat{day[5:7]}.l1.jsonl",
            [
                {"ts": f"{day}T10:00:00.000Z", "role": "user", "text": "We painted the fence with the kids."},
                {"ts": f"{day}T10:00:01.000Z", "role": "assistant", "text": "That sounds like a lovely day."},
            ],
        )
    for asked, month in (("on June 20, 2023", "06"), ("in May 2023", "05"), ("in August", "08")):
        top = search(store, f"What did they paint with the kids {asked}?", tiers=["l1"]).hits[0]
        assert top.date is not None and top.date[5:7] == month, asked


def test_a_question_asking_when_is_told_by_the_entry_that_says_when(tmp_path: Path) -> None:
    assert asks_when("When did they paint the fence?") and asks_when("  when, exactly?")
    assert not asks_when("Whenever it rains, what do they do?") and not asks_when("What did they paint?")
    assert tells_when("We painted it last Friday.") and tells_when("Back in May, with the kids.")
    assert not tells_when("We painted the fence with the kids.")
    store = store_with_memory(tmp_path / "chat", "# Memory\n")
    said = [
        "We painted the fence blue with the kids.",
        "The kids loved painting the fence blue.",
        "We painted the blue fence last Saturday.",
    ]
    write_l1(
        store,
        "2023-05-08_100000_chat0001.l1.jsonl",
        [
            {"ts": f"2023-05-08T10:00:0{i}.000Z", "role": ("user", "assistant")[i % 2], "text": text}
            for i, text in enumerate([*said, *(f"Unrelated note number {n}." for n in range(20))])
        ],
    )
    asked = search(store, "When did they paint the fence blue with the kids?", tiers=["l1"]).hits
    assert "last Saturday" in asked[0].snippet
    # the same words without "when": the entry holding more of them comes first
    plain = search(store, "They paint the fence blue with the kids", tiers=["l1"]).hits
    assert "last Saturday" not in plain[0].snippet


def test_questions_asking_which_year_or_how_long_ago_ask_when() -> None:
    for asked in (
        "Which year did she adopt her first dog?",
        "In what month did they move?",
        "How long ago was her birthday?",
        "How long has it been since he adopted the puppy?",
        "How many weeks passed between the two trips?",
    ):
        assert asks_when(asked), asked
    # a duration of an activity is not a time: "how long did it take" is answered by hours
    assert not asks_when("How long did the hike take?") and not asks_when("How many dogs does she have?")
    assert tells_when("I've had them for 3 years!") and tells_when("We met a couple of weeks back.")
    assert not tells_when("I have three dogs and a cat.")


def test_a_date_after_as_of_before_or_since_is_a_bound() -> None:
    end_of_september = _day("2023-09-30")
    assert question_window("How many pets did he have as of September 2023?") == ((0, end_of_september), None)
    assert question_window("What had she built by 2022?") == ((0, _day("2022-12-31")), None)
    assert question_window("What had she built before 2022?") == ((0, _day("2022-01-01")), None)
    # every bound word works before a bare year as before a month or a date
    assert question_window("What had she built prior to 2022?") == ((0, _day("2022-01-01")), None)
    assert question_window("What had she built till 2022?") == ((0, _day("2022-12-31")), None)
    window, _ = question_window("What has he cooked since 3 May, 2023?")
    assert window is not None and window[0] == _day("2023-05-03") and window[1] > _day("2100-01-01")
    # "the weekend before" a date: the days just before it, not everything before it
    fourth = _day("2023-10-04")
    assert question_window("What did she do the weekend before 4th October, 2023?") == (
        (fourth - TOLD_WITHIN, fourth),
        None,
    )
    # a date with no such word is the days of the date (and the few after, when it was told)
    assert question_window("What happened on 4 October, 2023?") == ((fourth, fourth + TOLD_WITHIN), None)


def test_as_of_a_date_does_not_favour_what_was_said_on_it(tmp_path: Path) -> None:
    store = store_with_memory(tmp_path / "chat", "# Memory\n")
    for day, text in (
        ("2023-05-08", "We adopted two rescue animals from the shelter."),
        ("2023-09-20", "We adopted a rescue kitten from the shelter."),
    ):
        write_l1(
            store,
            f"{day}_100000_chat{day[5:7]}.l1.jsonl",
            [{"ts": f"{day}T10:00:00.000Z", "role": "user", "text": text}],
        )
    # "in September" favours what was said then; "as of September" asks for what was true by
    # then: both entries are, and the one holding more of the question's words comes first
    asked = "Which rescue animals had they adopted from the shelter {} September 2023?"
    assert "kitten" in search(store, asked.format("in"), tiers=["l1"]).hits[0].snippet
    assert "two rescue animals" in search(store, asked.format("as of"), tiers=["l1"]).hits[0].snippet
