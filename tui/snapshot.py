"""The store's state for the tree and the status line, read through core (in thread workers).

Nothing here parses store formats itself: the index comes from :mod:`memkeeper.core.store.memory_index`,
L1 sessions from :mod:`memkeeper.core.capture.l1`, the threshold from the settings. The snapshot
lists L1 file names only and never reads the whole L1 tier; counts are computed per day,
on demand (:func:`count_l1`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core.basics.timestamps import local_time
from ..core.store.names import is_l1, l1_session, l1_started
from ..core.store.paths import NAMED_MEMORY_FILES, StorePaths
from .model import (
    ArchiveInfo,
    BackendHealth,
    SessionCounts,
    SessionInfo,
    StoreSnapshot,
    SummaryState,
)


def session_info(name: str, size: int) -> SessionInfo | None:
    """An L1 file's session, started at the local day and time its (UTC) name says."""
    started = l1_started(name)
    if started is None:
        return None
    day, _, hour = local_time(started, "%Y-%m-%d %H:%M").partition(" ")
    return SessionInfo(
        name=name,
        day=day,
        time=hour,
        session=l1_session(name) or "",
        size=size,
    )


def _summary_state(entry: dict[str, Any]) -> SummaryState:
    from ..core.store.index_entries import summary_state

    state = summary_state(entry)
    return "ok" if state == "generated" else state


def _archive_info(entry: dict[str, Any]) -> ArchiveInfo:
    from ..core.store.index_entries import summary_attempts, summary_error

    found = entry.get("dateRange")
    date_range: dict[str, Any] = found if isinstance(found, dict) else {}
    return ArchiveInfo(
        name=str(entry.get("file")),
        rotated_at=str(entry.get("rotatedAt") or ""),
        first=date_range.get("first"),
        last=date_range.get("last"),
        bytes=int(entry.get("bytes") or 0),
        tokens=int(entry.get("tokens") or 0),
        summary_state=_summary_state(entry),
        error=summary_error(entry),
        attempts=summary_attempts(entry),
    )


def load_snapshot(paths: StorePaths) -> StoreSnapshot:
    """Read the store's state: index, memory size, threshold, file names (no L1 content)."""
    # Stdlib-only core modules here: the snapshot is on the path to the first paint.
    from ..core.config.reader import hook_settings
    from ..core.log.flush_positions import last_flush
    from ..core.log.progress import next_flush
    from ..core.log.rotation import memory_tokens
    from ..core.store.memory_index import read_index, safe_entries

    if not paths.exists():
        return StoreSnapshot(project=paths.project, exists=False)
    settings = hook_settings(paths)
    threshold = settings.threshold_tokens
    due = next_flush(paths, settings.flush_every) if settings.memory_enabled else None
    warnings: list[str] = []
    index = read_index(paths)
    entries, refused = safe_entries(index)
    archives = [_archive_info(entry) for entry in entries]
    archives.sort(key=lambda a: a.name)
    sessions = list_sessions(paths)
    try:
        memory_bytes = paths.memory.stat().st_size
    except OSError:
        memory_bytes = 0
    found_stats = index.get("stats")
    stats: dict[str, Any] = found_stats if isinstance(found_stats, dict) else {}
    return StoreSnapshot(
        project=paths.project,
        exists=True,
        memory_tokens=memory_tokens(paths),
        memory_bytes=memory_bytes,
        threshold=threshold,
        named=tuple(n for n, f in NAMED_MEMORY_FILES.items() if (paths.root / f).is_file()),
        archives=tuple(archives),
        sessions=tuple(sessions),
        last_rotation=stats.get("lastRotation") if isinstance(stats.get("lastRotation"), str) else None,
        last_flush=last_flush(paths, index),
        warnings=tuple(warnings + refused),
        flush_every=settings.flush_every,
        flush_left=due["eventsLeft"] if due and not due["ended"] else None,
        memory_enabled=settings.memory_enabled,
        recall_enabled=settings.recall_enabled,
    )


def backend_health(paths: StorePaths) -> BackendHealth:
    """The summarizer backend as ``memkeeper status`` reports it, with today's model calls and
    tokens against the caps (imports pydantic: keep it off the first paint, in a worker)."""
    from ..core.config.model import load_config_or_default
    from ..core.summarizers import budget_status
    from ..core.summarizers.health import backend_report

    config, _ = load_config_or_default(paths)
    report = backend_report(paths, config)
    budget = budget_status(paths, config)
    return BackendHealth(
        backend=str(report["backend"]),
        in_use=str(report["inUse"]),
        why=str(report.get("why") or ""),
        resting_until=report.get("restingUntil"),
        calls=int(budget["calls"]),
        daily_calls=int(budget["dailyCalls"]),
        tokens=int(budget["tokens"]),
        daily_tokens=int(budget["dailyTokens"]),
    )


def list_sessions(paths: StorePaths) -> list[SessionInfo]:
    """The L1 session files by name and size only: no file is opened (the tier may hold thousands)."""
    sessions: list[SessionInfo] = []
    try:
        entries = list(os.scandir(paths.sessions))
    except OSError:
        return sessions
    for entry in entries:
        if not is_l1(entry.name):
            continue
        try:
            size = entry.stat().st_size
        except OSError:
            continue
        info = session_info(entry.name, size)
        if info is not None:
            sessions.append(info)
    return sorted(sessions, key=lambda s: s.name, reverse=True)


def count_l1(paths: StorePaths, names: Iterable[str]) -> dict[str, SessionCounts]:
    """Messages, tool calls, subagent use and length per L1 session (reads those files only)."""
    counts: dict[str, SessionCounts] = {}
    for name in names:
        try:
            counts[name] = _count_one(paths.sessions / name)
        except (OSError, ValueError):
            continue
    return counts


def _count_one(path: Path) -> SessionCounts:
    from ..core.capture.l1 import count_entries
    from ..core.capture.l1_entries import read_l1

    tally = count_entries(read_l1(path))
    messages, tools = tally.messages, tally.tools
    unreadable = messages + tools == 0 and path.stat().st_size > 0 and not _has_entries(path)
    return SessionCounts(messages, tools, tally.subagent, tally.minutes, unreadable, tally.prompts)


def _has_entries(path: Path) -> bool:
    from ..core.capture.l1_entries import read_l1

    return next(read_l1(path), None) is not None


def file_signature(path: Path | None) -> tuple[int, int] | None:
    """(size, mtime_ns) of ``path``: the viewer reloads only when it changed."""
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns)
