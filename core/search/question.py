"""A ranked query: the words of a question, their forms and stems, and the FTS5 expressions asking for them.

The query's words (stop words left out) each with the forms Porter's stemmer keeps apart
(``decision`` → also ``decide``), each pair of adjacent words (asked for as a phrase: a bonus
where they stand together) and the words of each path-like token (``core/log/flush.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

from . import answers, timewords, words
from .query import quoted

_PATHLIKE = re.compile(r"[^\W_][/._:-]+[^\W_]")


class Group(NamedTuple):
    """One query word: its forms (ORed in the index), its stem, and whether it has no spaces to split on."""

    word: str
    forms: tuple[str, ...]
    stem: str
    spaceless: bool


class RankedQuery(NamedTuple):
    text: str
    groups: tuple[Group, ...]
    pairs: tuple[tuple[str, str], ...]
    #: The words of each path-like token (``core/log/flush.py``, ``zephyr-7731``): asked for as a phrase.
    phrases: tuple[tuple[str, ...], ...] = ()
    #: The days the question names (see :mod:`.timewords`), or a month named without its year.
    window: tuple[int, int] | None = None
    month: int | None = None
    #: The question asks when something happened ("When did …?", see :func:`.timewords.asks_when`).
    when: bool = False
    #: The question asks who, or how many (see :mod:`.answers`).
    who: bool = False
    how_many: bool = False

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(g.word for g in self.groups)

    @property
    def spaceless(self) -> tuple[str, ...]:
        return tuple(g.word for g in self.groups if g.spaceless)


def _fold(word: str) -> str:
    """Latin letters without their accents (as the index's ``remove_diacritics``); other scripts as they are."""
    if word.isascii():
        return word
    folded = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return folded if folded.isascii() else word


def _is_spaceless(word: str) -> bool:
    return any(
        "\u1100" <= c <= "\u11ff"  # Hangul Jamo
        or "\u2e80" <= c <= "\u9fff"  # CJK, kana
        or "\uac00" <= c <= "\ud7af"  # Hangul syllables
        or "\uf900" <= c <= "\ufaff"
        for c in word
    )


def parse_ranked(text: str) -> RankedQuery:
    """The query's words (each once, stop words left out unless nothing else is left)."""
    raw = [_fold(w) for w in words.plain_words(text)]
    groups: list[Group] = []
    seen: set[str] = set()
    for word in raw:
        stem = words.stem(word)
        if not stem or stem in seen:
            continue
        seen.add(stem)
        forms = (word, *words.variants(word))
        groups.append(Group(word, forms, stem, _is_spaceless(word)))
    if not groups:  # only stop words: rank by them rather than answer nothing
        for word in dict.fromkeys(raw):
            groups.append(Group(word, (word,), words.porter(word), _is_spaceless(word)))
    pairs: list[tuple[str, str]] = []
    kept = [w for w in raw if words.stem(w)]
    for a, b in zip(kept, kept[1:], strict=False):
        if a != b and (a, b) not in pairs:
            pairs.append((a, b))
    # a path's words in the order the index holds them (lowercased first: no camelCase parts added)
    phrases = [
        tuple(w)
        for w in (words.plain_words(t.lower()) for t in text.split() if _PATHLIKE.search(t))
        if len(w) > 1
    ]
    window, month = timewords.question_window(text)
    return RankedQuery(
        text,
        tuple(groups[: words.MAX_QUERY_WORDS]),
        tuple(pairs[:8]),
        tuple(dict.fromkeys(phrases))[:4],
        window,
        month,
        timewords.asks_when(text),
        answers.asks_who(text),
        answers.asks_count(text),
    )


def group_expr(group: Group) -> str:
    """An FTS5 expression for one group: its forms ORed."""
    if len(group.forms) == 1:
        return quoted(group.forms[0])
    return "(" + " OR ".join(quoted(f) for f in group.forms) + ")"


def match_expression(groups: Sequence[Group], pairs: Sequence[tuple[str, str]]) -> str:
    """An FTS5 expression: the groups ORed, plus the adjacent pairs of their words as phrases."""
    parts = [group_expr(g) for g in groups]
    wanted = {g.word for g in groups}
    parts.extend(quoted(f"{a} {b}") for a, b in pairs if a in wanted or b in wanted)
    return " OR ".join(parts)
