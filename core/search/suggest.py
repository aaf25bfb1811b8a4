"""Honest empty answers: words of the index close to a query's words that occur nowhere."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import schema, terms, words
from .docreader import DocReader
from .query import quoted
from .question import RankedQuery

if TYPE_CHECKING:
    import sqlite3

MAX_SUGGESTIONS = 3
#: Close-word suggestions read the index pages of the terms with the word's first letter, or
#: its first two (three) when those span more than SUGGEST_PAGES pages; never more than SUGGEST_MAX_PAGES.
SUGGEST_PAGES = 8
SUGGEST_MAX_PAGES = 64
SUGGEST_PREFIX = 3
#: Endings tried to turn a stem back into a word that stems to it.
_ENDINGS = ("", "e", "ed", "ing", "s", "es", "ion", "ation", "y", "al", "er", "ment", "ly", "ity", "ness")
#: Hashes and hex ids (``9f3a0c``, ``eceaed``) are no word to suggest.
_HEXLIKE = re.compile(r"(?=[a-f]*\d)[0-9a-f]+|[a-f]{6,}")


def suggestions(reader: DocReader, query: RankedQuery, indexes: Sequence[str]) -> list[str]:
    """Words of the index close to the query's words (edit distance ≤ 2), most frequent first.

    The candidates are the index's terms that begin with the word's first letter (its first
    two, or three, when the shorter prefix's terms span more than SUGGEST_PAGES pages), read from the
    index's pages (:mod:`.terms`): a no-hit query costs a few milliseconds, not a walk of
    every posting of those terms.
    """
    conn = reader.conn
    found: dict[str, tuple[int, int]] = {}
    for group in query.groups:
        stem = group.stem
        if len(stem) < 3 or group.spaceless:
            continue
        cap = 2 if len(stem) >= 5 else 1
        for index in indexes:
            for term, size in _close_terms(conn, schema.WORDS[index], stem, cap).items():
                dist = words.edit_distance(term, stem, cap + 1)
                old = found.get(term)
                if dist <= cap and (old is None or (dist, -size) < old):
                    found[term] = (dist, -size)
    shown: list[str] = []
    for term in sorted(found, key=lambda t: found[t]):
        word = _readable(reader, term, indexes)
        if word is not None and word not in shown:
            shown.append(word)
            if len(shown) == MAX_SUGGESTIONS:
                break
    return shown


def _close_terms(conn: sqlite3.Connection, table: str, stem: str, cap: int) -> dict[str, int]:
    """Terms of ``table`` that may be within ``cap`` edits of ``stem`` and look like words."""
    low = stem[0]
    while len(low) < SUGGEST_PREFIX and len(terms.pages(conn, table, low, _next(low))) > SUGGEST_PAGES:
        low = stem[: len(low) + 1]  # too many terms begin so: one more letter in common
    found = terms.between(conn, table, low, _next(low), SUGGEST_MAX_PAGES)
    return {
        t: size
        for t, size in found.items()
        if t != stem and abs(len(t) - len(stem)) <= cap and not _HEXLIKE.fullmatch(t)
    }


def _next(prefix: str) -> str:
    """The first string after every string beginning with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _readable(reader: DocReader, stem: str, indexes: Sequence[str]) -> str | None:
    """A word of the store whose Porter stem is ``stem`` (the index keeps stems; a person reads words);
    None when no entry holds it any more.

    The index is asked with a word that stems to ``stem`` (a query is stemmed again, and
    Porter's stem of a stem is not always itself: ``exceed`` → ``excee``).
    """
    asked = next((w for w in (stem + end for end in _ENDINGS) if words.porter(w) == stem), None)
    if asked is None:
        return stem  # no form of it to ask for: shown as the index holds it
    for index in indexes:
        table = schema.WORDS[index]
        row = reader.conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT 1", ("{hi lo} : " + quoted(asked),)
        ).fetchone()
        if row is None:
            continue
        if index == "small":
            found = reader.conn.execute("SELECT body FROM docs WHERE rowid = ?", (row[0],)).fetchone()
            body = found[0] if found else ""
        else:
            doc = reader.big(index, row[0])
            body = doc.body if doc else ""
        for word in words.plain_words(body):
            if words.porter(word) == stem:
                return word
        return stem
    return None
