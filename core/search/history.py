"""Activity over time: sessions, prompts and tool calls per day, rotations, and every decision and issue.

Plain functions over the store's files for ``memkeeper-tui``'s activity screen (and any
other reader). Prompts and tool calls per day come from the search index for every L1 file
it has current (the indexer counts the lines it reads: :mod:`memkeeper.core.search.l1days`);
the other L1 files are scanned as bytes by the same rule (:mod:`memkeeper.core.capture.l1_counts`: a
role and a timestamp per line, no JSON parse). Decisions and issues are read from the L3
summaries by the summary model's field rules (:mod:`memkeeper.core.summaries.fields`), without
building the models. Files read are remembered, keyed by (inode, size, mtime), in an
:class:`ActivityCache` the caller keeps between calls and may save in the store
(``.state/activity-cache.json``, derived data: a missing or unreadable cache only costs one
full read), so an open reads only the files that changed since the last one. Stdlib only.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..capture.l1_counts import Tally, count_lines, finish
from ..store.names import is_l1, is_l1_gz, l1_date
from ..store.paths import StorePaths

if TYPE_CHECKING:
    import sqlite3


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


class Finding(NamedTuple):
    """A decision or an open issue from an L3 summary, with the archive it came from (a tuple:
    a large store has tens of thousands, made on every first open)."""

    kind: str  # "decision" | "issue"
    text: str
    date: str
    archive: str
    detail: str = ""


Signature = tuple[int, int, int]
"""(inode, size, mtime_ns) of a file: a cached reading of it holds while this is unchanged."""

CACHE_NAME = "activity-cache.json"
CACHE_VERSION = 2


@dataclass
class ActivityCache:
    """Per-file readings: ``files`` {L1 name: (signature, {day: (prompts, tools)})} and
    ``summaries`` {summary name: (signature, findings)}; ``dirty`` once anything was re-read."""

    files: dict[str, tuple[Signature, dict[str, tuple[int, int]]]] = field(default_factory=dict)
    summaries: dict[str, tuple[Signature, list[Finding]]] = field(default_factory=dict)
    dirty: bool = False


def _signature(stat: os.stat_result) -> Signature:
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def load_cache(paths: StorePaths) -> ActivityCache:
    """The cache saved by :func:`save_cache` (an empty one if it is missing, unreadable or old)."""
    from ..store.atomic import open_no_follow

    try:
        fd = open_no_follow(paths.state / CACHE_NAME, os.O_RDONLY)
        with os.fdopen(fd, "rb") as handle:
            data = json.loads(handle.read())
        if data.get("version") != CACHE_VERSION:
            return ActivityCache()
        files = {
            name: (_sig(sig), {day: (int(c[0]), int(c[1])) for day, c in days.items()})
            for name, (sig, days) in data["files"].items()
        }
        summaries = {
            name: (_sig(sig), _findings_of(name, listed)) for name, (sig, listed) in data["summaries"].items()
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return ActivityCache()
    return ActivityCache(files, summaries)


def _findings_of(summary: str, listed: list[list[str]]) -> list[Finding]:
    """The findings saved for ``summary`` as [kind, text, date, detail] lists."""
    from ..store.names import archive_of_summary

    archive = archive_of_summary(summary)
    return [
        Finding(str(kind), str(text), str(date), archive, str(detail)) for kind, text, date, detail in listed
    ]


def _sig(value: Any) -> Signature:
    inode, size, mtime = value
    return (int(inode), int(size), int(mtime))


def save_cache(paths: StorePaths, cache: ActivityCache) -> bool:
    """Write ``cache`` atomically if it changed (skipped while another process writes it)."""
    from ..store.atomic import atomic_write_json
    from ..store.lock import try_lock

    if not cache.dirty or not paths.state.is_dir():
        return False
    data = {
        "version": CACHE_VERSION,
        "files": {name: [list(sig), days] for name, (sig, days) in cache.files.items()},
        "summaries": {
            name: [list(sig), [[f.kind, f.text, f.date, f.detail] for f in listed]]
            for name, (sig, listed) in cache.summaries.items()
        },
    }
    with try_lock(paths.state / "activity-cache.lock") as locked:
        if not locked:
            return False
        atomic_write_json(paths.state / CACHE_NAME, data, durable=False)
    cache.dirty = False
    return True


def _scan(path: Path) -> dict[str, tuple[int, int]]:
    """{day: (prompts, tools)} of one L1 file (gzip files are read whole), read in blocks of
    whole lines."""
    import gzip

    opener = gzip.open if is_l1_gz(path.name) else open
    days: Tally = {}
    rest = b""
    with opener(path, "rb") as handle:
        while block := handle.read(SCAN_BLOCK):
            cut = block.rfind(b"\n") + 1
            if not cut:
                rest += block
                continue
            count_lines(rest + block[:cut], days)
            rest = block[cut:]
    count_lines(rest, days)
    return finish(days)


#: Bytes of an L1 file scanned at a time.
SCAN_BLOCK = 1 << 22


Progress = Callable[[list["DayActivity"], int, int], None]
"""Called now and then while counting: the days so far, files read, files in all."""


def daily_activity(
    paths: StorePaths, cache: ActivityCache | None = None, progress: Progress | None = None
) -> list[DayActivity]:
    """Sessions, prompts and tool calls per day, oldest first (days with nothing left out).

    The counts of a file come from the search index while it has the file current (the
    indexer counts every line it reads), else from ``cache`` while the file's signature is
    unchanged, else from reading it; ``progress`` gets the partial result every 0.2 s.
    """
    cache = cache if cache is not None else ActivityCache()
    indexed = _indexed_counts(paths)
    totals: dict[str, list[int]] = {}
    try:
        entries = [e for e in os.scandir(paths.sessions) if is_l1(e.name)]
    except OSError:
        entries = []
    seen: set[str] = set()
    shown = time.monotonic()
    for done, entry in enumerate(entries, start=1):
        days = _file_days(entry, cache, indexed)
        if days is None:
            continue
        seen.add(entry.name)
        started = l1_date(entry.name) or entry.name[:10]
        totals.setdefault(started, [0, 0, 0])[0] += 1
        for day, (prompts, tools) in days.items():
            counts = totals.setdefault(day, [0, 0, 0])
            counts[1] += prompts
            counts[2] += tools
        if progress is not None and time.monotonic() - shown >= 0.2:
            shown = time.monotonic()
            progress(_days(totals), done, len(entries))
    for gone in set(cache.files) - seen:
        del cache.files[gone]
        cache.dirty = True
    return _days(totals)


def _days(totals: dict[str, list[int]]) -> list[DayActivity]:
    return [DayActivity(day, *totals[day]) for day in sorted(totals)]


def _indexed_counts(paths: StorePaths) -> dict[str, tuple[Signature, str]]:
    """{L1 file name: (signature, counts as text)} of the files the search index has counted
    whole (none when there is no index of this version, or it cannot be read now)."""
    from . import l1days

    return _from_index(paths, l1days.counted)


def _from_index(
    paths: StorePaths, read: Callable[[sqlite3.Connection], dict[str, tuple[Signature, str]]]
) -> dict[str, tuple[Signature, str]]:
    """What ``read`` reads from the search index: nothing when there is no index of this
    version, or it cannot be read now (made before the table read, or busy: the files are)."""
    import sqlite3

    from . import schema

    if os.path.islink(paths.search_db):
        return {}  # the store never reads through a link
    conn = schema.connect_readonly(paths.search_db, timeout=0.5)
    if conn is None:
        return {}
    try:
        return read(conn)
    except sqlite3.Error:
        return {}
    finally:
        conn.close()


def read_ahead(paths: StorePaths) -> None:
    """Ask the OS to read the index's lists and day counts into its cache, without waiting
    (a cold cache would make the first open wait for their pages one at a time)."""
    import sqlite3

    from . import readahead, schema

    if os.path.islink(paths.search_db):
        return
    conn = schema.connect_readonly(paths.search_db, timeout=0.5)
    if conn is None:
        return
    try:
        readahead.prefetch_tables(conn, paths.search_db, (schema.L3_FINDINGS, schema.L1_DAYS))
    except (sqlite3.Error, OSError):
        pass  # a hint only
    finally:
        conn.close()


def _file_days(
    entry: os.DirEntry[str], cache: ActivityCache, indexed: dict[str, tuple[Signature, str]]
) -> dict[str, tuple[int, int]] | None:
    """{day: (prompts, tools)} of one L1 file: from the index or the cache while the file is
    as they saw it, else read."""
    from ..capture.l1_counts import from_text

    try:
        signature = _signature(entry.stat(follow_symlinks=False))
    except OSError:
        return None
    found = indexed.get(entry.name)
    if found is not None and found[0] == signature:
        try:
            return from_text(found[1])
        except (ValueError, TypeError, IndexError):
            pass  # read below
    cached = cache.files.get(entry.name)
    if cached is not None and cached[0] == signature:
        return cached[1]
    try:
        days = _scan(Path(entry.path))
    except (OSError, EOFError):
        return None
    cache.files[entry.name] = (signature, days)
    cache.dirty = True
    return days


def rotations(paths: StorePaths) -> list[Rotation]:
    """Every archive in the index, oldest first, with its size in tokens when rotated."""
    from ..store.memory_index import read_index, safe_entries

    entries, _ = safe_entries(read_index(paths))
    out = [
        Rotation(str(e.get("file")), str(e.get("rotatedAt") or ""), int(e.get("tokens") or 0))
        for e in entries
    ]
    return sorted(out, key=lambda r: (r.rotated_at, r.archive))


def findings(
    paths: StorePaths, cache: ActivityCache | None = None, archives: list[Rotation] | None = None
) -> list[Finding]:
    """Every key decision and every issue not resolved, across all L3 summaries, newest first
    (``archives``: :func:`rotations`, if the caller has read them already).

    The list of a summary comes from the search index while it has the file current (the
    indexer reads every summary it indexes by the same rule), else from ``cache`` while the
    file's signature is unchanged, else from reading it."""
    from ..store.names import summary_name

    cache = cache if cache is not None else ActivityCache()
    indexed = _indexed_findings(paths)
    found: list[Finding] = []
    seen: set[str] = set()
    root = os.fspath(paths.root)
    for rotation in rotations(paths) if archives is None else archives:
        name = summary_name(rotation.archive)
        seen.add(name)
        found.extend(_summary_findings(root, name, rotation.archive, cache, indexed))
    for gone in set(cache.summaries) - seen:
        del cache.summaries[gone]
        cache.dirty = True
    return sorted(found, key=attrgetter("date", "archive"), reverse=True)


def _indexed_findings(paths: StorePaths) -> dict[str, tuple[Signature, str]]:
    """{summary file name: (signature, its list as text)} of the summaries the search index
    has read (none when there is no index of this version, or it cannot be read now)."""
    from . import l3findings

    return _from_index(paths, l3findings.listed)


def _summary_findings(
    root: str, name: str, archive: str, cache: ActivityCache, indexed: dict[str, tuple[Signature, str]]
) -> list[Finding]:
    """The decisions and open issues of one summary: from the index or the cache while its
    file is as they saw it, else read."""
    path = os.path.join(root, name)
    try:
        signature = _signature(os.stat(path, follow_symlinks=False))
    except OSError:
        return []
    listed = indexed.get(name)
    if listed is not None and listed[0] == signature:
        try:
            return [
                Finding(kind, text, date, archive, detail)
                for kind, text, date, detail in json.loads(listed[1])
            ]
        except (ValueError, TypeError):
            pass  # read below
    cached = cache.summaries.get(name)
    if cached is not None and cached[0] == signature:
        return cached[1]
    found = _read_findings(path, archive)
    cache.summaries[name] = (signature, found)
    cache.dirty = True
    return found


def _read_findings(path: str, archive: str) -> list[Finding]:
    """The decisions and open issues of a summary file, read as ``core.summary.load_summary``
    reads them (by the same field rules, :func:`memkeeper.core.summaries.fields.findings_of`),
    without building its models: importing them and validating thousands of files took most
    of a first open's time. None of an unreadable file or one the model refuses."""
    from ..store.atomic import open_no_follow
    from ..summaries.fields import findings_of

    try:
        with os.fdopen(open_no_follow(path, os.O_RDONLY), "rb") as handle:
            data = handle.read()
    except OSError:
        return []
    return [Finding(kind, text, date, archive, detail) for kind, text, date, detail in findings_of(data)]
