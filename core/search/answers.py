"""What kind of answer a question asks for, and whether an entry holds one.

A question beginning "Who …?" is answered by an entry naming someone the question does not
("my colleague Rob invited me"); one beginning "How many …?" by an entry holding a number
("three kids", "12 tests"). Such an entry scores more (``scoring.WHO_BOOST``,
``scoring.COUNT_BOOST``): the words of the question find the topic, the kind of answer picks
the entry that answers among the many on it. (A question asking when is the same idea for
time: :func:`.timewords.asks_when`.) English, ASCII patterns compiled when first needed.
"""

from __future__ import annotations

import re
from functools import lru_cache

_FLAGS = re.IGNORECASE | re.ASCII


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        "who": re.compile(r"\s*(?:who|whom|with whom)\b", _FLAGS),
        "count": re.compile(r"\s*how many\b", _FLAGS),
        "number": re.compile(
            r"\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|both|couple|several|another)\b",
            _FLAGS,
        ),
        # a capitalised word inside a sentence (after a lowercase letter or a comma): a name, not
        # the first word of a sentence (case-sensitive: "Rob", not "rob")
        "name": re.compile(r"[a-z,] ([A-Z][a-z]{2,})\b"),
        "word": re.compile(r"[A-Za-z]+"),
    }


def asks_who(question: str) -> bool:
    """Whether a question asks who ("Who did she go with?", "With whom …?")."""
    return _patterns()["who"].match(question) is not None


def names_someone(body: str, question: str) -> bool:
    """Whether an entry names someone (a capitalised word inside a sentence) the question does not."""
    asked = _words_of(question)
    return any(found.group(1) not in asked for found in _patterns()["name"].finditer(body))


@lru_cache(maxsize=16)
def _words_of(question: str) -> frozenset[str]:
    """The words of a question, as written (read once per question, not once per entry scored)."""
    return frozenset(_patterns()["word"].findall(question))


def asks_count(question: str) -> bool:
    """Whether a question asks how many."""
    return _patterns()["count"].match(question) is not None


def tells_count(body: str) -> bool:
    """Whether an entry holds a number (in digits or in words)."""
    return _patterns()["number"].search(body) is not None
