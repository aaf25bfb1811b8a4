"""Prompts and tool calls per UTC day in L1 lines: the one rule they are counted by.

The activity screen (:mod:`memkeeper.core.history`) counts a file it has no reading of with
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
    after = start  # the end of the last line counted
    find, rfind = data.find, data.rfind
    for role in ROLE.finditer(data, start, stop):
        first = rfind(b"\n", start, role.start()) + 1
        if first < start:
            first = start
        if first < after:
            continue
        last = find(b"\n", role.end(), stop)
        after = last = stop if last < 0 else last
        day = TS.search(data, first, last)
        user = role.group(1) == b"user"
        if day is None or (user and SIDE.search(data, first, last)):
            continue
        counts = days.get(day.group(1))
        if counts is None:
            counts = days[day.group(1)] = [0, 0]
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
