"""What a query means: parsing, matching, ranking and snippets (shared by index and scan).

A query is words, ANDed, and ``"quoted phrases"``; each is a case-insensitive substring
of an entry, so Korean and other text without spaces matches inside words. Nothing of
the user's text ever reaches SQL as syntax: the index is only asked for trigrams, quoted.
A word of one or two characters (``검색``, ``db``) has no trigram of its own: it is looked
up as the trigrams that begin with it, which the engine lists from the index.
Ranking is a BM25-style term-frequency score with a mild bonus for recent entries,
computed here so the index and the full scan rank identically.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

MAX_QUERY_CHARS = 1000
MAX_TERMS = 32
TRIGRAM = 3
#: A short word that begins more trigrams than this narrows nothing worth the lookup.
SHORT_GRAM_LIMIT = 4000
SNIPPET_CHARS = 160

#: Okapi BM25's parameters (SQLite's bm25() uses the same), for every score computed in Python.
BM25_K1 = 1.2
BM25_B = 0.75
_AVG_CHARS = 400.0
_RECENCY_WEIGHT = 0.3
_RECENCY_DAYS = 30.0
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_TOKEN_RE = re.compile(r'"([^"]*)"?|(\S+)')
_SPACE_RE = re.compile(r"\s+")
_DATE_ARG_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class QueryError(ValueError):
    """A query or filter that cannot be run, with a message for a person."""


class Query(NamedTuple):
    """A parsed query: lowercased terms (words or phrases), all required."""

    text: str
    terms: tuple[str, ...]

    @property
    def pieces(self) -> tuple[str, ...]:
        """The terms' parts between whitespace: the index holds each distinct piece of a
        text once (see ``schema.trigram_text``), so it is asked for trigrams within pieces."""
        return tuple(dict.fromkeys(p for t in self.terms for p in t.split()))

    @property
    def long_terms(self) -> tuple[str, ...]:
        """Pieces the trigram index can look up (3 characters or more)."""
        return tuple(t for t in self.pieces if len(t) >= TRIGRAM)

    @property
    def short_terms(self) -> tuple[str, ...]:
        """Pieces of one or two characters: looked up as the trigrams they begin."""
        return tuple(t for t in self.pieces if len(t) < TRIGRAM)


def parse_query(text: str) -> Query:
    """Parse a query; QueryError for an empty, too long or all-blank one."""
    if not isinstance(text, str):
        raise QueryError("the query must be text")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is too long ({len(text):,} characters; at most {MAX_QUERY_CHARS:,})")
    cleaned = _CONTROL_RE.sub(" ", text)
    terms: list[str] = []
    for match in _TOKEN_RE.finditer(cleaned):
        phrase, word = match.group(1), match.group(2)
        term = _SPACE_RE.sub(" ", phrase).strip() if phrase is not None else word
        if term:
            term = term.lower()
            if term not in terms:
                terms.append(term)
    if not terms:
        raise QueryError("the query is empty: give at least one word")
    if len(terms) > MAX_TERMS:
        raise QueryError(f"too many words in the query ({len(terms)}; at most {MAX_TERMS})")
    # a term inside another one adds nothing to matching: keep the longer one
    kept = tuple(t for t in terms if not any(t != o and t in o for o in terms))
    return Query(text=cleaned.strip(), terms=kept)


def parse_date_arg(value: str | None, name: str) -> str | None:
    """``YYYY-MM-DD`` (or an ISO timestamp) as ``YYYY-MM-DD``; QueryError otherwise."""
    if value is None or value == "":
        return None
    day = value.strip()[:10]
    if not _DATE_ARG_RE.match(day):
        raise QueryError(f"--{name} wants a date like 2026-01-31, not {value!r:.40}")
    from datetime import date  # only with --since / --until

    try:
        date.fromisoformat(day)
    except ValueError:
        raise QueryError(f"--{name}: {day} is not a real date") from None
    return day


def fts_expression(query: Query, short_grams: Sequence[Sequence[str]] = ()) -> str | None:
    """An FTS5 MATCH expression selecting a superset of the matches, or None (nothing to narrow by).

    Each long term contributes the trigrams that cover it; each entry of ``short_grams``
    (the trigrams a short term begins, see ``prefix_range``) one of them, ORed. Every
    trigram is a quoted string, so FTS syntax in the user's text (``"``, ``*``, ``NEAR``,
    ``-``, ``:``) is inert. An empty entry in ``short_grams`` would match nothing: the
    caller answers that without asking.
    """
    grams: list[str] = []
    for term in query.long_terms:
        for gram in covering_trigrams(term):
            if gram not in grams:
                grams.append(gram)
    parts = [quoted(g) for g in grams]
    for alternatives in short_grams:
        if len(alternatives) == 1:
            parts.append(quoted(alternatives[0]))
        elif alternatives:
            parts.append("(" + " OR ".join(quoted(g) for g in alternatives) + ")")
    if not parts:
        return None
    return " AND ".join(parts)


def quoted(text: str) -> str:
    """``text`` as an FTS5 string: its syntax inert."""
    return '"' + text.replace('"', '""') + '"'


def prefix_range(term: str) -> tuple[str, str]:
    """The first and last possible trigram beginning with a one- or two-character term.

    Index terms compare as UTF-8 bytes, which order like code points.
    """
    return term, term + "\U0010ffff" * (TRIGRAM - len(term))


def covering_trigrams(term: str) -> list[str]:
    """Non-overlapping trigrams of ``term`` plus its last one: enough to narrow the candidates."""
    n = len(term)
    starts = list(range(0, n - TRIGRAM + 1, TRIGRAM))
    if starts[-1] != n - TRIGRAM:
        starts.append(n - TRIGRAM)
    return [term[i : i + TRIGRAM] for i in starts]


def matches(lowered: str, terms: tuple[str, ...]) -> bool:
    return all(t in lowered for t in terms)


def bm25_norm(length: float, average: float) -> float:
    """BM25's length normalisation of a document of ``length`` (``average`` the collection's):
    k1 (1 - b + b length / average)."""
    return BM25_K1 * (1.0 - BM25_B + BM25_B * length / average)


def bm25_term(idf: float, tf: float, norm: float) -> float:
    """One term's BM25 score, as SQLite's bm25() computes it: idf tf (k1 + 1) / (tf + norm), where
    ``tf`` is the term's frequency with each column's weight applied and ``norm`` is :func:`bm25_norm`.
    The one BM25 of every score computed in Python (the index's own is SQLite's, the same formula)."""
    return idf * tf * (BM25_K1 + 1.0) / (tf + norm)


def relevance(lowered: str, terms: tuple[str, ...]) -> float:
    """BM25 of the exact mode: substring counts, normalised by length; longer terms weigh more
    (in place of an idf: the exact mode ranks without the index's statistics)."""
    norm = bm25_norm(len(lowered), _AVG_CHARS)
    return sum(bm25_term(1.0 + min(len(t), 12) / 12.0, lowered.count(t), norm) for t in terms)


#: Days before each month, and each month's length, in a common year (the proleptic
#: Gregorian calendar, as ``datetime`` counts it).
_DAYS_BEFORE_MONTH = (0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def day_number(value: str | None) -> int | None:
    """The day ``value`` starts with (``YYYY-MM-DD``) as ``date.toordinal()`` counts it, or None
    when it starts with no real date: computed here, as ``datetime`` is not worth importing for it
    (and remembered: a ranking asks for the same few days over and over)."""
    if not value or len(value) < 10:
        return None
    return _day_number(value[:10])


@lru_cache(maxsize=4096)
def _day_number(day: str) -> int | None:
    digits = day[:4] + day[5:7] + day[8:]
    if day[4] != "-" or day[7] != "-" or not (digits.isascii() and digits.isdigit()):
        return _iso_day_number(day)  # another ISO form (20240131, 2024-W05-3): datetime's reading
    year, month, mday = int(day[:4]), int(day[5:7]), int(day[8:])
    if year < 1 or not 1 <= month <= 12:
        return None
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= mday <= _MONTH_DAYS[month] + (month == 2 and leap):
        return None
    before = year - 1
    days = before * 365 + before // 4 - before // 100 + before // 400 + _DAYS_BEFORE_MONTH[month]
    return days + (month > 2 and leap) + mday


def _iso_day_number(day: str) -> int | None:
    from datetime import date

    try:
        return date.fromisoformat(day).toordinal()
    except ValueError:
        return None


def recency_bonus(day: int | None, newest: int | None) -> float:
    """A mild bonus, at most ``_RECENCY_WEIGHT``, that halves after a month behind the newest hit."""
    if day is None or newest is None:
        return 0.0
    age = max(0, newest - day)
    return _RECENCY_WEIGHT / (1.0 + age / _RECENCY_DAYS)


def snippet(
    body: str, terms: tuple[str, ...], width: int = SNIPPET_CHARS
) -> tuple[str, list[tuple[int, int]]]:
    """A one-line window of ``body`` around the first match, and the (start, end) of each match in it."""
    flat = _SPACE_RE.sub(" ", _CONTROL_RE.sub(" ", body)).strip()
    lowered = flat.lower()
    if len(lowered) != len(flat):  # a character whose lowercase is longer: match on the text as is
        lowered = flat
    first = min((i for i in (lowered.find(t) for t in terms) if i >= 0), default=0)
    start = max(0, first - width // 3)
    end = min(len(flat), start + width)
    start = max(0, min(start, end - width))
    text = flat[start:end]
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(flat) else ""
    window = lowered[start:end]
    spans: list[tuple[int, int]] = []
    for term in terms:
        pos = window.find(term)
        while pos >= 0 and term:
            spans.append((pos + len(prefix), pos + len(prefix) + len(term)))
            pos = window.find(term, pos + len(term))
    return prefix + text + suffix, merge_spans(spans)


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
