"""Prompts and tool calls per UTC day in L1 lines: the one rule they are counted by.

The activity screen (:mod:`memkeeper.core.search.history`) counts a file it has no reading of with
:func:`count_lines`, and the search indexer counts the same bytes with it as it reads them
(:mod:`memkeeper.core.search.l1days`), so both give the same numbers. A line counts by its
first ``"role"`` of ``user`` (a typed prompt or command: not a subagent's, which carries
``"sidechain": true``) or ``tool`` (a tool call), on the day of its first ``"ts"``; lines
are read as bytes (no JSON parse): the keys are written unquoted only at the top level.

Stdlib only and lean (the indexer's readers import it): no dataclasses or typing.
"""

from __future__ import annotations

import json
import re

ROLE = re.compile(rb'"role": ?"(user|tool)"')
TS = re.compile(rb'"ts": ?"(\d{4}-\d{2}-\d{2})')
SIDE = re.compile(rb'"sidechain": ?true')
_ROLE_TO_END = re.compile(ROLE.pattern + rb"[^\n]*")  # a line's first role, and the rest of it

DayCounts = dict[str, tuple[int, int]]
"""{UTC day: (prompts, tool calls)}."""
Tally = dict[bytes, list[int]]
"""The same while counting: {day: [prompts, tool calls]}."""


def count_lines(data: bytes, days: Tally, start: int = 0, end: int | None = None) -> None:
    """Add the prompts and tool calls of the whole lines in ``data[start:end]`` to ``days``.

    Only the lines with a role are looked at (found in one pass); a line's later roles are
    not its own. ``start`` and ``end`` must fall on line starts (or the end of ``data``).
    """
    stop = len(data) if end is None else end
    rfind, ts, side = data.rfind, TS.search, SIDE.search
    # each match runs on to the end of its line: the next one is on a later line
    for role in _ROLE_TO_END.finditer(data, start, stop):
        first = rfind(b"\n", start, role.start()) + 1
        if first < start:
            first = start
        last = role.end()
        day = ts(data, first, last)
        if day is None:
            continue
        user = role[1] == b"user"
        if user and side(data, first, last):
            continue
        counts = days.get(day[1])
        if counts is None:
            counts = days[day[1]] = [0, 0]
        counts[0 if user else 1] += 1


def day_counts(data: bytes, start: int = 0, end: int | None = None) -> DayCounts:
    """{day: (prompts, tool calls)} of the whole lines in ``data[start:end]``."""
    days: Tally = {}
    count_lines(data, days, start, end)
    return finish(days)


def finish(days: Tally) -> DayCounts:
    return {day.decode(): (c[0], c[1]) for day, c in days.items()}


def merged(into: DayCounts, more: DayCounts) -> DayCounts:
    """The counts of two parts of one file (an append: the lines read before, then the new ones)."""
    out = dict(into)
    for day, (prompts, tools) in more.items():
        had = out.get(day, (0, 0))
        out[day] = (had[0] + prompts, had[1] + tools)
    return out


def to_text(days: DayCounts) -> str:
    """The counts as compact JSON (``{"2026-03-01":[2,5]}``), days in order."""
    return json.dumps({day: list(days[day]) for day in sorted(days)}, separators=(",", ":"))


def from_text(text: str) -> DayCounts:
    """What :func:`to_text` wrote; ValueError if it is not that."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("day counts are not an object")
    return {str(day): (int(c[0]), int(c[1])) for day, c in value.items()}
