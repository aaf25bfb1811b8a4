"""A small tier's matches (memory, L3) newest first, given out one by one as they are found.

Exact mode ranks a tier's newest ``cap`` matches, taken in the order the index path has
always used: by file name, newest first, then by position in the file (rowid). Sorting
every match for that order cost 8 ms for a Korean syllable and 50–90 ms for a common
letter at 1 GB, where only the first 60 or 200 are wanted. The small index numbers each
file's docs in a row (a file is indexed whole), mostly in name order, so the matches are
walked by rowid, newest first, and each is given out as soon as no match not yet walked
can come before it: a common word's newest matches cost a few hundred rows.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from functools import partial
from heapq import heappop, heappush
from typing import TYPE_CHECKING, NamedTuple

from .indexer import vocab_cached, vocab_peek

if TYPE_CHECKING:
    import sqlite3

_BATCH = 256


class Spans(NamedTuple):
    """A tier's files by their first rowid: where each one's docs start and end, its place by
    name (0 = first), and the highest place among it and the files starting before it."""

    starts: list[int]
    ends: list[int]
    places: list[int]
    highest: list[int]


_SPANS_KEY = ("small-spans",)


def spans(conn: sqlite3.Connection, tier: str) -> Spans | None:
    """The tier's spans (remembered until the index changes); None when some file's docs are
    not numbered in a row, or the tier holds none."""
    return vocab_cached(conn, _SPANS_KEY, partial(_small_spans, conn)).get(tier)


def known_spans(conn: sqlite3.Connection, tier: str) -> Spans | None:
    """The tier's spans if this process has them already for the index as it is, else None.

    Reading them costs 6–13 ms at 1 GB: worth it in a process that searches again (the TUI
    reads them in its warm-up), not for one search of a word with few matches (a one-shot
    ``memkeeper search``), whose sort of matches costs less than that."""
    held = vocab_peek(conn, _SPANS_KEY)
    return held.get(tier) if isinstance(held, dict) else None


def _small_spans(conn: sqlite3.Connection) -> dict[str, Spans | None]:
    """Both small tiers' spans from one walk of the docs' file index (no doc is read)."""
    files = conn.execute("SELECT src, min(rowid), max(rowid), count(*) FROM docs GROUP BY src").fetchall()
    names = {
        src: (rel, tier)
        for src, rel, tier in conn.execute("SELECT id, rel, tier FROM sources WHERE tier IN ('memory', 'l3')")
    }
    by_tier: dict[str, list[tuple[str, int, int, int]]] = {}
    for src, low, high, count in files:
        if src in names:
            rel, tier = names[src]
            by_tier.setdefault(tier, []).append((rel, low, high, count))
    return {tier: _spans(rows) for tier, rows in by_tier.items()}


def _spans(rows: list[tuple[str, int, int, int]]) -> Spans | None:
    """Spans of (name, first rowid, last rowid, docs) per file; None unless each file's are in a row."""
    if any(count != high - low + 1 for _rel, low, high, count in rows):
        return None
    place = {rel: n for n, rel in enumerate(sorted(rel for rel, _low, _high, _count in rows))}
    rows = sorted(rows, key=lambda row: row[1])
    highest: list[int] = []
    for rel, _low, _high, _count in rows:
        highest.append(max(place[rel], highest[-1] if highest else -1))
    return Spans([r[1] for r in rows], [r[2] for r in rows], [place[r[0]] for r in rows], highest)


def newest_matches(conn: sqlite3.Connection, tier: str, expr: str) -> Iterator[int] | None:
    """The rowids of the tier's docs the small index matches for ``expr``, by file name newest
    first, then rowid newest first; None when the tier's spans cannot tell or are not read yet
    (see :func:`known_spans`): the caller sorts the matches then."""
    known = known_spans(conn, tier)
    return None if known is None else _walk(conn, known, expr)


def newest_docs(conn: sqlite3.Connection, tier: str) -> Iterator[int] | None:
    """Every doc of the tier in that order (a word too common to ask the index for), from the
    spans alone; None when they cannot tell."""
    known = spans(conn, tier)
    if known is None:
        return None
    files = sorted(zip(known.places, known.starts, known.ends, strict=True), reverse=True)
    return (rowid for _place, start, end in files for rowid in range(end, start - 1, -1))


def _walk(conn: sqlite3.Connection, known: Spans, expr: str) -> Iterator[int]:
    cur = conn.execute(
        "SELECT rowid FROM fts_small WHERE fts_small MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rowid DESC",
        (expr, known.starts[0], known.ends[-1]),
    )
    waiting: list[tuple[int, int]] = []  # (-place, -rowid): the next to give out first
    try:
        while True:
            batch = cur.fetchmany(_BATCH)
            for (rowid,) in batch:
                i = bisect_right(known.starts, rowid) - 1
                if i >= 0 and rowid <= known.ends[i]:  # else a doc of another tier
                    heappush(waiting, (-known.places[i], -rowid))
            # every match from the last row walked up is known: the rest lie in files starting
            # below it, none of which comes before the place ``bound`` by name
            files_below = bisect_left(known.starts, batch[-1][0]) if batch else 0
            bound = known.highest[files_below - 1] if files_below else -1
            while waiting and -waiting[0][0] >= bound:
                yield -heappop(waiting)[1]
            if not batch:
                return
    finally:
        cur.close()
