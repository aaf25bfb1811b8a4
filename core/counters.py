"""Hook counters: tool uses and prompts per session, exact under parallel hooks.

Claude Code runs hook handlers in parallel, so every bump is a locked read-modify-write
of ``.state/counters.json`` under its own small lock (never the store lock, so a hook
never waits behind a rotation or migration). Stdlib only: this is the hottest path. The file is replaced atomically but without
fsync: losing the last few counts to a power cut is harmless, and fsync costs more than
the rest of the hook.
"""

from __future__ import annotations

import json
import time

from memkeeper.core.atomic import atomic_write_json
from memkeeper.core.lock import file_lock
from memkeeper.core.store import StorePaths, ensure_store

TYPE_CHECKING = False  # typing is not imported at run time: this is the hottest path
if TYPE_CHECKING:
    from typing import Any

MAX_SESSIONS = 200


class Counts:
    """Counts after a bump (a plain class: no dataclasses import on the hook path)."""

    __slots__ = ("session_messages", "session_tool_uses", "tool_uses", "unflushed_messages")

    def __init__(
        self, tool_uses: int, session_tool_uses: int, session_messages: int, unflushed_messages: int
    ) -> None:
        self.tool_uses = tool_uses  # since the last reset, all sessions (the JS ``counter``)
        self.session_tool_uses = session_tool_uses
        self.session_messages = session_messages
        self.unflushed_messages = unflushed_messages  # prompts + tool uses since this session's last flush

    def _key(self) -> tuple[int, int, int, int]:
        return (self.tool_uses, self.session_tool_uses, self.session_messages, self.unflushed_messages)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Counts) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "Counts(tool_uses={}, session_tool_uses={}, session_messages={}, unflushed_messages={})".format(
            *self._key()
        )


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
        entry["lastSeen"] = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        sessions: dict[str, Any] = data["sessions"]
        if len(sessions) > MAX_SESSIONS:
            oldest = sorted(sessions, key=lambda k: str(sessions[k].get("lastSeen", "")))
            for key in oldest[: len(sessions) - MAX_SESSIONS]:
                del sessions[key]
        atomic_write_json(paths.counters, data, durable=False)
        return Counts(data["toolUses"], entry["toolUses"], entry["messages"], entry["unflushed"])


def mark_flushed(paths: StorePaths, session_id: str | None) -> None:
    """Zero the unflushed count of a session (after its flush job ran)."""
    with file_lock(paths.state / "counters.lock"):
        data = _read(paths)
        _session(data, session_id or "unknown")["unflushed"] = 0
        atomic_write_json(paths.counters, data, durable=False)


def reset(paths: StorePaths) -> None:
    """Counter := 0 (the JS ``reset`` command), keeping per-session totals."""
    ensure_store(paths)
    with file_lock(paths.state / "counters.lock"):
        data = _read(paths)
        data["toolUses"] = 0
        for entry in data["sessions"].values():
            if isinstance(entry, dict):
                entry["unflushed"] = 0
        atomic_write_json(paths.counters, data, durable=False)
