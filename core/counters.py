"""Hook counters: tool uses and prompts per session, exact under parallel hooks.

Claude Code runs hook handlers in parallel, so every bump is a locked read-modify-write
of ``.state/counters.json`` under its own small lock (never the store lock, so a hook
never waits behind a rotation or migration). Stdlib only: this is the hottest path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memkeeper.core.atomic import atomic_write_json
from memkeeper.core.lock import file_lock
from memkeeper.core.store import StorePaths, ensure_store

MAX_SESSIONS = 200


@dataclass(frozen=True)
class Counts:
    tool_uses: int  # since the last reset, all sessions (the JS ``counter``)
    session_tool_uses: int
    session_messages: int
    unflushed_messages: int  # prompts + tool uses since the last flush of this session


def _read(paths: StorePaths) -> dict[str, Any]:
    try:
        data = json.loads(paths.counters.read_bytes().decode("utf-8"))
        if isinstance(data, dict) and isinstance(data.get("sessions"), dict):
            return data
    except (OSError, ValueError):
        pass
    return {"toolUses": 0, "sessions": {}}


def read_counters(paths: StorePaths) -> dict[str, Any]:
    return _read(paths)


def _session(data: dict[str, Any], session_id: str) -> dict[str, Any]:
    sessions: dict[str, Any] = data["sessions"]
    entry = sessions.get(session_id)
    if not isinstance(entry, dict):
        entry = {"toolUses": 0, "messages": 0, "unflushed": 0}
        sessions[session_id] = entry
    return entry


def bump(paths: StorePaths, session_id: str | None, *, tool_uses: int = 0, messages: int = 0) -> Counts:
    """Add to the counters of ``session_id`` and return the new counts."""
    ensure_store(paths)
    sid = session_id or "unknown"
    with file_lock(paths.state / "counters.lock"):
        data = _read(paths)
        data["toolUses"] = int(data.get("toolUses") or 0) + tool_uses
        entry = _session(data, sid)
        entry["toolUses"] = int(entry.get("toolUses") or 0) + tool_uses
        entry["messages"] = int(entry.get("messages") or 0) + messages
        entry["unflushed"] = int(entry.get("unflushed") or 0) + tool_uses + messages
        entry["lastSeen"] = datetime.now(UTC).isoformat(timespec="seconds")
        sessions: dict[str, Any] = data["sessions"]
        if len(sessions) > MAX_SESSIONS:
            oldest = sorted(sessions, key=lambda k: str(sessions[k].get("lastSeen", "")))
            for key in oldest[: len(sessions) - MAX_SESSIONS]:
                del sessions[key]
        atomic_write_json(paths.counters, data)
        return Counts(data["toolUses"], entry["toolUses"], entry["messages"], entry["unflushed"])


def mark_flushed(paths: StorePaths, session_id: str | None) -> None:
    """Zero the unflushed count of a session (after its flush job ran)."""
    with file_lock(paths.state / "counters.lock"):
        data = _read(paths)
        _session(data, session_id or "unknown")["unflushed"] = 0
        atomic_write_json(paths.counters, data)


def reset(paths: StorePaths) -> None:
    """Counter := 0 (the JS ``reset`` command), keeping per-session totals."""
    ensure_store(paths)
    with file_lock(paths.state / "counters.lock"):
        data = _read(paths)
        data["toolUses"] = 0
        for entry in data["sessions"].values():
            if isinstance(entry, dict):
                entry["unflushed"] = 0
        atomic_write_json(paths.counters, data)
