"""A ranked L1 hit as an exchange: the turn found, with the turn it answers and the turn that answers it.

A question found ("How long has the nightly job been failing?") is only half an answer: the
reply after it holds the rest ("since the upgrade on Monday"). So each L1 hit of a ranked
search carries the conversational turns (typed prompts and replies: ``user`` and ``assistant`` entries)
just before and just after it in its file, tool entries stepped over (at most
:data:`LOOK_ROWS` rows either side): at most :data:`EXCHANGE_ENTRIES` entries per hit,
the hit first. When the hit tells something and the turn after it asks about it ("I moved
the backups to the NAS" → "Which schedule did you give them?"), the reply to that question
comes instead of the turn before (:data:`FOLLOW_UP_ORDER`): it says more of what the hit began.
A candidate already shown in the exchange of a better hit is not shown again as a hit of
its own, so the top hits cover more distinct turns.

The neighbours come from the rowids alone, as in :mod:`.near` (an L1 entry's rowid is
``source id << 36 | byte offset``: the rows of one file are one rowid range in file order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import schema
from .docreader import DocReader
from .scoring import Ranked
from .sources import Doc

if TYPE_CHECKING:
    import sqlite3

#: The hit and at most this many entries in all (the hit, the turn before, the turn after).
EXCHANGE_ENTRIES = 3
#: Rows looked at on each side for a conversational turn (tool calls and results stepped over).
LOOK_ROWS = 4
#: Which turns an exchange takes first, as (side, distance): (0, 0) the turn just before, (1, 0)
#: just after, (1, 1) the one after that, (0, 1) the one before that; the first ones no better
#: hit shows yet (one before and one after unless a better hit shows one of them already).
TURN_ORDER = ((0, 0), (1, 0), (1, 1), (0, 1))
#: The order when the hit does not ask and the turn just after it does (a follow-up question):
#: that turn, then its reply, before the turn before the hit.
FOLLOW_UP_ORDER = ((1, 0), (1, 1), (0, 0), (0, 1))
#: Roles of the turns an exchange is made of.
TURN_TYPES = ("user", "assistant")
#: Candidates looked at to fill the hits asked for: this many times ``limit``.
SPARE = 3

_ROWS = f"{schema.WORDS['l1']}_docsize"
_BEFORE = f"SELECT id FROM {_ROWS} WHERE id < ? AND id >= ? ORDER BY id DESC LIMIT {LOOK_ROWS}"
_AFTER = f"SELECT id FROM {_ROWS} WHERE id > ? AND id < ? ORDER BY id LIMIT {LOOK_ROWS}"


class Exchange:
    """One hit of an exchange search: the ranked entry, the turns around it and their rowids."""

    __slots__ = ("item", "rowid", "turns")

    def __init__(self, item: Ranked, rowid: int, turns: list[tuple[int, Doc]]) -> None:
        self.item = item
        self.rowid = rowid
        self.turns = turns  # (rowid, doc) of the turn before and the turn after, as found

    @property
    def rows(self) -> set[int]:
        return {self.rowid, *(r for r, _doc in self.turns)}

    @property
    def docs(self) -> tuple[Doc, ...]:
        return tuple(doc for _r, doc in self.turns)


def turns_around(conn: sqlite3.Connection, reader: DocReader, rowid: int, hit: Doc) -> list[tuple[int, Doc]]:
    """The conversational turns around the L1 entry ``rowid`` (``hit``) in its file (``user`` or
    ``assistant`` entries within LOOK_ROWS rows either side), as (rowid, doc), in the order an
    exchange takes them (:data:`TURN_ORDER`): the turn just before, just after, the one after
    that, the one before that; after a follow-up question (:func:`follows_up`), the turn just
    after, the one after that, then the turns before (:data:`FOLLOW_UP_ORDER`)."""
    start = (rowid >> schema.OFFSET_BITS) << schema.OFFSET_BITS
    end = ((rowid >> schema.OFFSET_BITS) + 1) << schema.OFFSET_BITS
    sides: list[list[tuple[int, Doc]]] = []
    for sql, bound in ((_BEFORE, start), (_AFTER, end)):
        side: list[tuple[int, Doc]] = []
        for (near,) in conn.execute(sql, (rowid, bound)).fetchall():
            doc = reader.big("l1", near)
            if doc is not None and doc.type in TURN_TYPES:
                side.append((near, doc))
                if len(side) == 2:
                    break
        sides.append(side)
    order = FOLLOW_UP_ORDER if follows_up(hit, sides[1]) else TURN_ORDER
    return [sides[s][i] for s, i in order if i < len(sides[s])]


def asks(doc: Doc) -> bool:
    """Whether a turn asks something (a question mark in it)."""
    return "?" in doc.body


def follows_up(hit: Doc, after: list[tuple[int, Doc]]) -> bool:
    """Whether the turn just after ``hit`` asks about what the hit (which asks nothing) told:
    then the reply to that question says more of it. On LoCoMo, taking that reply instead of
    the turn before the hit lifted R@10 from 85.1 to 87.7 % on the tuning conversations and
    from 77.2 to 78.9 % on the one held aside (docs/recall.md)."""
    return bool(after) and not asks(hit) and asks(after[0][1])


def exchanges(
    conn: sqlite3.Connection, reader: DocReader, items: list[tuple[int, Ranked]], limit: int
) -> list[Exchange]:
    """The best ``limit`` exchanges of ranked L1 ``items`` ((rowid, ranked), best first).

    A candidate already inside a better hit's exchange is not a hit of its own; the turns
    an exchange shows are the ones no better hit shows yet (one place per turn).
    """
    out: list[Exchange] = []
    covered: set[int] = set()
    for rowid, item in items[: limit * SPARE]:
        if rowid in covered:
            continue
        turns = [(r, d) for r, d in turns_around(conn, reader, rowid, item.doc) if r not in covered]
        turns = sorted(turns[: EXCHANGE_ENTRIES - 1])  # in file order
        found = Exchange(item, rowid, turns)
        covered |= found.rows
        out.append(found)
        if len(out) == limit:
            break
    return out
