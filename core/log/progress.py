"""What a store has captured so far and when its next flush runs: the newcomer's two questions.

``memkeeper status`` and the TUI's status line both ask :func:`capture_progress`. A session
reaches the store in two steps: its transcript is copied into ``sessions/*.l1.jsonl`` (L1)
by the flush job and at SessionEnd, and the flush turns new L1 entries into ``memory.md``
bullets (L2) every ``memory.flushEvery`` prompts and tool uses of a session, at the end of a
turn that reached it, before a compaction and when the session ends. Stdlib only (the TUI
reads it on its first paint).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..basics.timestamps import iso_from_epoch
from ..store.names import is_l1
from . import counters

if TYPE_CHECKING:
    from ..store.paths import StorePaths


def _newest_l1(paths: StorePaths) -> tuple[int, float | None]:
    """(L1 files, the newest one's modification time) without opening any."""
    count, newest = 0, None
    try:
        entries = list(os.scandir(paths.sessions))
    except OSError:
        return 0, None
    for entry in entries:
        if not is_l1(entry.name):
            continue
        count += 1
        try:
            mtime = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        newest = mtime if newest is None else max(newest, mtime)
    return count, newest


def read_counters(paths: StorePaths) -> dict[str, Any]:
    """counters.json with the counts still in the counters' log added (nothing is written): for
    status, the TUI and tests. (The hooks count through :mod:`memkeeper.core.log.counters`,
    which stays free of ``typing``.)"""
    return counters.read_all_at(os.fspath(paths.state))


def next_flush(paths: StorePaths, flush_every: int) -> dict[str, Any] | None:
    """The session counted last: its events since its last flush and how many more make it due."""
    sessions = read_counters(paths).get("sessions")
    if not isinstance(sessions, dict) or not sessions:
        return None
    session_id, entry = list(sessions.items())[-1]  # kept in the order they were last counted
    unflushed = entry.get("unflushed") if isinstance(entry, dict) else 0
    unflushed = unflushed if isinstance(unflushed, int) and unflushed > 0 else 0
    from ..capture.live_sessions import read_sessions

    seen = read_sessions(paths).get(session_id)
    return {
        "session": session_id,
        "ended": bool(isinstance(seen, dict) and seen.get("ended")),
        "unflushed": unflushed,
        "every": flush_every,
        "eventsLeft": max(0, flush_every - unflushed),
    }


def capture_progress(paths: StorePaths, flush_every: int, memory_enabled: bool = True) -> dict[str, Any]:
    """``captured`` (any session copied yet), ``sessions``, ``lastCaptureAt``, ``flushEvery`` and
    ``nextFlush`` (None while memory is off)."""
    count, newest = _newest_l1(paths)
    return {
        "captured": count > 0,
        "flushEvery": flush_every,
        "sessions": count,
        "lastCaptureAt": iso_from_epoch(newest) if newest is not None else None,
        "nextFlush": next_flush(paths, flush_every) if memory_enabled else None,
    }


def next_flush_text(progress: dict[str, Any]) -> str:
    """One line for people: when the next flush runs (the CLI's ``status``)."""
    due = progress.get("nextFlush")
    if due is None:
        return f"after the first {progress['flushEvery']} prompts and tool uses of a session, or when it ends"
    left = due["eventsLeft"]
    if due.get("ended"):
        return (
            f"session {due['session'][:8]} ended and was flushed; the next one flushes after "
            f"{due['every']} prompts and tool uses, or when it ends"
        )
    if left <= 0:
        return f"due now for session {due['session'][:8]} (at the end of its turn)"
    return (
        f"after {left} more prompt{'s' if left != 1 else ''} or tool use{'s' if left != 1 else ''} "
        f"in session {due['session'][:8]} (every {due['every']}), or when it ends"
    )


def captured_text(progress: dict[str, Any], when: str | None) -> str:
    """One line for people: what is captured (``when``: the last capture, formatted by the caller)."""
    if not progress["captured"]:
        return (
            "nothing yet: start `claude` in this project; a session is copied after its first "
            f"{progress['flushEvery']} prompts and tool uses, and when it ends"
        )
    count = progress["sessions"]
    return f"{count} session{'s' if count != 1 else ''}, last {when or progress['lastCaptureAt']}"
