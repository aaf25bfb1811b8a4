"""What a tier's word index says about a query without scoring a row: its rows, how many hold
each query word (and so each word's idf), and the token lengths FTS5 keeps per row.

Read from FTS5's own records (the averages record, ``docsize``) and bounded walks, never a
scan of every posting of a common word.
"""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from . import schema
from .indexer import vocab_cached
from .question import Group, RankedQuery, group_expr
from .terms import varint

if TYPE_CHECKING:
    import sqlite3

DF_COUNT_CAP = 5000


class TierStats(NamedTuple):
    rows: int
    df: dict[str, int]  # stem -> rows holding it (0: nowhere)


def _averages(conn: sqlite3.Connection, table: str) -> bytes:
    """FTS5's averages record of a word index (its rows, then the tokens of each column, as
    varints); empty when it has none."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    return bytes(row[0]) if row and row[0] else b""


def _rows(conn: sqlite3.Connection, table: str) -> int:
    """Rows of a word index, from FTS5's averages record (no scan)."""
    data = _averages(conn, table)
    return varint(data, 0)[0] if data else 0


def tier_stats(conn: sqlite3.Connection, index: str, query: RankedQuery) -> TierStats:
    """The rows of ``index``'s word table and the rows holding each of the query's groups."""
    table = schema.WORDS[index]
    rows = _rows(conn, table)
    df = {
        g.stem: vocab_cached(conn, ("df", table, g.forms), partial(_doc_count, conn, table, g, rows))
        for g in query.groups
    }
    return TierStats(rows, df)


def _doc_count(conn: sqlite3.Connection, table: str, group: Group, rows: int) -> int:
    """Rows holding the group's words: counted up to DF_COUNT_CAP, estimated beyond.

    fts5vocab would walk every row of a common word (100 ms and more at 1 GB); this walks
    at most DF_COUNT_CAP rowids, newest first, and extrapolates from the share of the
    rowid range they span (rowids grow with the files, so the share is about the rows').
    """
    expr = group_expr(group)
    cap = conn.execute(
        f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (expr, DF_COUNT_CAP),
    ).fetchone()
    if cap is None:
        found = conn.execute(
            f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ?)", (expr,)
        ).fetchone()
        return int(found[0])
    low = conn.execute(f"SELECT min(id) FROM {table}_docsize").fetchone()[0]  # one each: both are
    high = conn.execute(f"SELECT max(id) FROM {table}_docsize").fetchone()[0]  # one b-tree seek
    span = max(1, int(high) - int(cap[0]))
    estimate = DF_COUNT_CAP * (int(high) - int(low)) / span
    return int(min(max(rows, DF_COUNT_CAP), max(DF_COUNT_CAP, estimate)))


def idf_of(stats: TierStats, group: Group) -> float:
    df = stats.df.get(group.stem, 0)
    rows = max(stats.rows, df, 1)
    return math.log(1.0 + (rows - df + 0.5) / (df + 0.5))


def newest_lengths(conn: sqlite3.Connection, table: str, expr: str, limit: int) -> dict[int, float | None]:
    """The newest ``limit`` live rows ``expr`` matches, newest first, each with its tokens (all columns)
    from FTS5's ``docsize`` table (None when it has no record): one statement, the rowids
    never sent back to SQLite."""
    rows = conn.execute(
        f"SELECT m.r, d.id, d.sz FROM (SELECT rowid AS r FROM {table} WHERE {table} MATCH ?{schema.live_only(conn, table)}"
        f" ORDER BY rowid DESC LIMIT {int(limit)}) m"
        f" LEFT JOIN {table}_docsize d ON d.id = m.r ORDER BY m.r DESC",
        (expr,),
    )
    return {rowid: None if known is None else float(_varint_sum(blob or b"")) for rowid, known, blob in rows}


def average_length(conn: sqlite3.Connection, table: str) -> float:
    """Mean tokens per row (all columns), from FTS5's averages record."""
    data = _averages(conn, table)
    if not data:
        return 0.0
    rows, pos = varint(data, 0)
    return _varint_sum(data[pos:]) / max(1, rows)


def _varint_sum(data: bytes) -> int:
    """The sum of the varints ``data`` holds (one byte each, mostly)."""
    if data.isascii():  # every byte below 0x80: one byte per varint
        return sum(data)
    pos, total = 0, 0
    while pos < len(data):
        value, pos = varint(data, pos)
        total += value
    return total
