"""An L1 entry's context at query time: the entries next to it and the prompt of its turn.

One entry rarely holds every word of the question it answers: the reply says "switched
to orjson", the prompt before it asked why the build was slow. A query word held by the
entry just before or just after an entry, or by the typed prompt of its turn, is that
entry's context: it makes the entry a candidate (as if a field weighted CONTEXT_WEIGHT
held it) and counts for part of its coverage (``scoring.CONTEXT_CREDIT``).

The index keeps no copy of the neighbours' words (copying them made the L1 word index
three times its entries' text, and the build that much slower). The entries holding a
word are asked of the word index; their neighbours follow from the rowids alone: every
entry's rowid (``source id << 36 | byte offset``) is in ``words_l1_docsize``, so the
entries of one file are one rowid range in file order, and ``prompts_l1`` tells which
of them are typed prompts. Only words held by at most CONTEXT_MAX_ROWS entries are
followed: a common word next to an entry says little about it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import schema
from .query import BM25_K1, bm25_term
from .question import Group, RankedQuery, group_expr

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Collection, Iterable, Mapping

#: Words held by more entries than this are not followed to their neighbours.
CONTEXT_MAX_ROWS = 3000
#: A word its context holds scores an entry as in a field of this bm25() weight (hi 3, lo 1).
CONTEXT_WEIGHT = 0.6
#: Entries of a turn, after its prompt, that take the prompt's words as context.
TURN_ROWS = 200
#: What one word of its context adds to an entry's BM25 per unit of idf: held once in a field
#: weighted CONTEXT_WEIGHT, of average length (tf (k1 + 1) / (tf + k1)).
_CONTEXT_BOOST = bm25_term(1.0, CONTEXT_WEIGHT, BM25_K1)

_ROWS = f"{schema.WORDS['l1']}_docsize"
_START = f"({{0}} >> {schema.OFFSET_BITS}) << {schema.OFFSET_BITS}"  # the file's first rowid
_FILE = f"(({{0}} >> {schema.OFFSET_BITS}) + 1) << {schema.OFFSET_BITS}"  # the next file's first rowid
_BEFORE = f"(SELECT id FROM {_ROWS} WHERE id < m.value AND id >= {_START.format('m.value')} ORDER BY id DESC LIMIT 1)"
_AFTER = f"(SELECT id FROM {_ROWS} WHERE id > m.value AND id < {_FILE.format('m.value')} ORDER BY id LIMIT 1)"
_SIDES = f"SELECT {_BEFORE}, {_AFTER} FROM json_each(?) m"
#: Each entry's neighbours the other way round: before, after, and the last prompt before it
#: in its file (none for a prompt), which is its turn's (see _WITHIN).
_AROUND = (
    f"SELECT m.value, {_BEFORE}, {_AFTER}, (SELECT id FROM {schema.PROMPTS} WHERE id < m.value"
    f" AND id >= {_START.format('m.value')} AND NOT EXISTS (SELECT 1 FROM {schema.PROMPTS} WHERE id = m.value)"
    " ORDER BY id DESC LIMIT 1) FROM json_each(?) m"
)
#: Fewer than TURN_ROWS entries between a prompt and an entry: the prompt's words are its context.
_WITHIN = f"SELECT count(*) < ? FROM (SELECT 1 FROM {_ROWS} WHERE id > ? AND id < ? LIMIT ?)"
_TURNS = (
    "SELECT id FROM (SELECT d.id AS id, row_number() OVER (PARTITION BY p.id ORDER BY d.id) AS n"
    f" FROM json_each(?) m JOIN {schema.PROMPTS} p ON p.id = m.value"
    f" JOIN {_ROWS} d ON d.id > p.id AND d.id < coalesce((SELECT q.id FROM {schema.PROMPTS} q"
    f" WHERE q.id > p.id AND q.id < {_FILE.format('p.id')} ORDER BY q.id LIMIT 1), {_FILE.format('p.id')}))"
    " WHERE n <= ?"
)


class Near:
    """The L1 entries holding each rare word of a query, and the entries each is context of."""

    __slots__ = ("context", "held")

    def __init__(self) -> None:
        self.held: dict[str, set[int]] = {}  # stem -> the entries holding it
        self.context: dict[int, set[str]] = {}  # entry -> the stems only its neighbours hold

    def context_score(self, rowid: int, idf: Mapping[str, float]) -> float:
        """What the entry's context adds to its BM25 score (see _CONTEXT_BOOST)."""
        return sum(idf.get(stem, 0.0) for stem in self.context.get(rowid, ())) * _CONTEXT_BOOST


def followed(query: RankedQuery, df: Mapping[str, int]) -> list[Group]:
    """The query's words followed to their neighbours: those rarer than CONTEXT_MAX_ROWS."""
    return [g for g in query.groups if not g.spaceless and 0 < df.get(g.stem, 0) <= CONTEXT_MAX_ROWS]


def near_words(conn: sqlite3.Connection, groups: Iterable[Group]) -> Near:
    """The entries holding each of ``groups`` (see :func:`followed`), and the entries next to them."""
    near = Near()
    table = schema.WORDS["l1"]
    live = schema.live_only(conn, table)  # a dead row's neighbours are dead too
    for group in groups:
        held = {
            r
            for (r,) in conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ?{live}", (group_expr(group),)
            )
        }
        near.held[group.stem] = held
        for rowid in neighbours(conn, held):
            if rowid not in held:
                near.context.setdefault(rowid, set()).add(group.stem)
    return near


def neighbours(conn: sqlite3.Connection, rowids: Iterable[int]) -> set[int]:
    """The entries just before and after each entry in its file, and the entries of the turns
    the typed prompts among them begin (at most TURN_ROWS each)."""
    listed = _listed(rowids)
    if listed == "[]":
        return set()
    found = {r for pair in conn.execute(_SIDES, (listed,)) for r in pair if r is not None}
    found.update(r for (r,) in conn.execute(_TURNS, (listed, TURN_ROWS)))
    return found


def context_marks(
    conn: sqlite3.Connection, rowids: Collection[int], groups: Iterable[Group]
) -> dict[int, set[str]]:
    """For a few entries, the stems of ``groups`` only their neighbours hold: what
    :func:`near_words` finds of them, asked the other way round (each entry's neighbours,
    then which of those hold each word), at the cost of a few entries rather than of every
    entry holding the words."""
    if not rowids:
        return {}
    around = {
        r: (before, after, prompt) for r, before, after, prompt in conn.execute(_AROUND, (_listed(rowids),))
    }
    asked = _listed({n for near in around.values() for n in near if n is not None} | set(rowids))
    table = schema.WORDS["l1"]
    within: dict[int, bool] = {}  # entry -> one of the TURN_ROWS after its prompt (asked when it matters)
    marks: dict[int, set[str]] = {}
    for group in groups:
        held = {
            r
            for (r,) in conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid IN (SELECT value FROM json_each(?))",
                (group_expr(group), asked),
            )
        }
        for rowid, (before, after, prompt) in around.items():
            if rowid in held:
                continue
            if before in held or after in held or (prompt in held and _within(conn, within, prompt, rowid)):
                marks.setdefault(rowid, set()).add(group.stem)
    return marks


def _within(conn: sqlite3.Connection, known: dict[int, bool], prompt: int, rowid: int) -> bool:
    if rowid not in known:
        ((known[rowid],),) = conn.execute(_WITHIN, (TURN_ROWS, prompt, rowid, TURN_ROWS)).fetchall()
    return known[rowid]


def _listed(rowids: Iterable[int]) -> str:
    """Rowids as a JSON array, for ``json_each``."""
    return "[" + ",".join(map(str, rowids)) + "]"
