"""The sessions the hooks have seen recently, with their transcript paths.

A background job may be asked to run while another instance of it runs; the rerun
then gets the *first* caller's options, so a flush can never rely on its options alone
to know which transcripts to read. The hooks therefore note every session they see in
``.state/live-sessions.json`` (``{session_id: {transcript, seen, ended}}``), and the
flush brings every recently seen transcript's L1 copy up to date before it reads
entries after the watermark. That also keeps the one global watermark honest when two
sessions of the same project run at once, and picks up a session that was killed
before its SessionEnd. Stdlib only: SessionStart and SessionEnd call it.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from ..store.atomic import atomic_write_json
from ..store.lock import LockTimeout, file_lock
from ..store.paths import StorePaths, ensure_store

if TYPE_CHECKING:
    from typing import Any

FILE_NAME = "live-sessions.json"
MAX_SESSIONS = 50
#: Sessions not seen for this long are dropped from the list (their L1 is complete).
FORGET_AFTER_SECONDS = 3 * 24 * 3600


def _read(paths: StorePaths) -> dict[str, Any]:
    try:
        data = json.loads((paths.state / FILE_NAME).read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def read_sessions(paths: StorePaths) -> dict[str, dict[str, Any]]:
    """``{session_id: {"transcript": str, "seen": epoch, "ended": bool}}`` (no lock)."""
    return {k: v for k, v in _read(paths).items() if isinstance(v, dict)}


#: The longest a hook waits for the live-sessions lock; past it the note is skipped and logged.
LOCK_WAIT = 1.0


def note_session(paths: StorePaths, session_id: str, transcript: str | None, *, ended: bool = False) -> bool:
    """Record that ``session_id`` (with its transcript) is alive, or has ended.

    False (and one line in the log) when the lock stayed held for :data:`LOCK_WAIT`: the
    caller goes on (SessionEnd still starts its jobs, which are given the transcript).
    """
    if not session_id:
        return False
    ensure_store(paths)
    try:
        _note(paths, session_id, transcript, ended)
    except LockTimeout:
        from ..store.jobs import log_error

        log_error(paths, f"live sessions: {session_id} not noted, the lock was held over {LOCK_WAIT:g} s")
        return False
    return True


def _note(paths: StorePaths, session_id: str, transcript: str | None, ended: bool) -> None:
    now = time.time()
    with file_lock(paths.state / "live-sessions.lock", timeout=LOCK_WAIT):
        data = read_sessions(paths)
        entry = data.get(session_id, {})
        if transcript:
            entry["transcript"] = transcript
        entry["seen"] = now
        entry["ended"] = ended
        data[session_id] = entry
        fresh = {
            k: v
            for k, v in data.items()
            if now - float(v.get("seen") or 0) < FORGET_AFTER_SECONDS and isinstance(v.get("transcript"), str)
        }
        newest = sorted(fresh, key=lambda k: float(fresh[k].get("seen") or 0), reverse=True)[:MAX_SESSIONS]
        # Atomic, not fsynced (SessionStart's cost): a power cut loses at most this note, whose session's
        # transcript stays and is flushed by its own SessionEnd or the next stale-session flush.
        atomic_write_json(paths.state / FILE_NAME, {k: fresh[k] for k in newest}, durable=False)


def unfinished_sessions(paths: StorePaths, exclude: str | None = None) -> list[str]:
    """Sessions seen without a SessionEnd (killed, or still running elsewhere)."""
    return [k for k, v in read_sessions(paths).items() if k != exclude and not v.get("ended")]
