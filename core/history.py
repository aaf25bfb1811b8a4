"""Activity over time: sessions, prompts and tool calls per day, rotations, and every decision and issue.

Plain functions over the store's files for ``memkeeper-tui``'s activity screen (and any
other reader). L1 files are scanned as bytes (a role and a timestamp per line; no JSON
parse), with a cache keyed by (name, size, mtime) that the caller may keep between calls,
so a refresh re-reads only the sessions that grew. Stdlib only, apart from the summary
models read for decisions and issues.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from memkeeper.core.names import is_l1, is_l1_gz, l1_date
from memkeeper.core.store import StorePaths

_ROLE = re.compile(rb'"role": ?"(user|tool)"')
_TS = re.compile(rb'"ts": ?"(\d{4}-\d{2}-\d{2})')
_SIDE = re.compile(rb'"sidechain": ?true')


@dataclass(frozen=True)
class DayActivity:
    """One UTC day: sessions started, prompts typed, tool calls made."""

    day: str
    sessions: int = 0
    prompts: int = 0
    tools: int = 0


@dataclass(frozen=True)
class Rotation:
    """An archive: when memory.md was rotated into it and how big it was."""

    archive: str
    rotated_at: str
    tokens: int


@dataclass(frozen=True)
class Finding:
    """A decision or an open issue from an L3 summary, with the archive it came from."""

    kind: str  # "decision" | "issue"
    text: str
    date: str
    archive: str
    detail: str = ""


@dataclass
class ActivityCache:
    """Per-file counts from earlier scans: ``{name: ((size, mtime_ns), {day: (prompts, tools)})}``."""

    files: dict[str, tuple[tuple[int, int], dict[str, tuple[int, int]]]] = field(default_factory=dict)


def _scan(path: Path) -> dict[str, tuple[int, int]]:
    """{day: (prompts, tools)} of one L1 file (gzip files are read whole)."""
    import gzip

    opener = gzip.open if is_l1_gz(path.name) else open
    days: dict[str, list[int]] = {}
    with opener(path, "rb") as handle:
        for line in handle:
            role = _ROLE.search(line)
            day = _TS.search(line)
            if role is None or day is None or (role.group(1) == b"user" and _SIDE.search(line)):
                continue
            counts = days.setdefault(day.group(1).decode(), [0, 0])
            counts[0 if role.group(1) == b"user" else 1] += 1
    return {day: (c[0], c[1]) for day, c in days.items()}


def daily_activity(paths: StorePaths, cache: ActivityCache | None = None) -> list[DayActivity]:
    """Sessions, prompts and tool calls per day, oldest first (days with nothing left out)."""
    cache = cache if cache is not None else ActivityCache()
    totals: dict[str, list[int]] = {}
    try:
        entries = [e for e in os.scandir(paths.sessions) if is_l1(e.name)]
    except OSError:
        entries = []
    seen: set[str] = set()
    for entry in entries:
        try:
            stat = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        seen.add(entry.name)
        signature = (stat.st_size, stat.st_mtime_ns)
        cached = cache.files.get(entry.name)
        if cached is None or cached[0] != signature:
            try:
                cached = (signature, _scan(Path(entry.path)))
            except (OSError, EOFError):
                continue
            cache.files[entry.name] = cached
        started = l1_date(entry.name) or entry.name[:10]
        totals.setdefault(started, [0, 0, 0])[0] += 1
        for day, (prompts, tools) in cached[1].items():
            counts = totals.setdefault(day, [0, 0, 0])
            counts[1] += prompts
            counts[2] += tools
    for gone in set(cache.files) - seen:
        del cache.files[gone]
    return [DayActivity(day, *totals[day]) for day in sorted(totals)]


def rotations(paths: StorePaths) -> list[Rotation]:
    """Every archive in the index, oldest first, with its size in tokens when rotated."""
    from memkeeper.core.index import read_index, safe_entries

    entries, _ = safe_entries(read_index(paths))
    out = [
        Rotation(str(e.get("file")), str(e.get("rotatedAt") or ""), int(e.get("tokens") or 0))
        for e in entries
    ]
    return sorted(out, key=lambda r: (r.rotated_at, r.archive))


def findings(paths: StorePaths) -> list[Finding]:
    """Every key decision and every issue not resolved, across all L3 summaries, newest first."""
    from memkeeper.core.names import summary_name
    from memkeeper.core.summary import SummaryError, load_summary

    found: list[Finding] = []
    for rotation in rotations(paths):
        path = paths.archive(summary_name(rotation.archive))
        if not path.is_file():
            continue
        try:
            summary = load_summary(path)
        except (SummaryError, OSError, ValueError):
            continue
        for decision in summary.keyDecisions:
            text = str(getattr(decision, "decision", "") or "")
            if text:
                reason = str(getattr(decision, "reason", "") or "")
                date = str(getattr(decision, "date", "") or "")
                found.append(Finding("decision", text, date, rotation.archive, reason))
        for issue in summary.issues:
            if issue.issue and issue.status != "resolved":
                found.append(Finding("issue", issue.issue, issue.date, rotation.archive, issue.status))
    return sorted(found, key=lambda f: (f.date, f.archive), reverse=True)
