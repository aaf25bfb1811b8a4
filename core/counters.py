"""Hook counters: tool uses and prompts per session, exact under parallel hooks.

Claude Code runs hook handlers in parallel, so every bump is a locked read-modify-write
of ``.state/counters.json`` under its own small lock (never the store lock, so a hook
never waits behind a rotation or migration). This is the hottest path: stdlib only, no
pathlib (the ``*_at`` functions take the state folder as a string), and the file is
replaced atomically but without fsync: losing the last few counts to a power cut is
harmless, and fsync costs more than the rest of the hook. A file that does not parse
counts from zero again (``memkeeper doctor`` backs it up and reports it).
"""

from __future__ import annotations

import os

from memkeeper.core import fastjson
from memkeeper.core.atomic import atomic_write_text
from memkeeper.core.layout import COUNTERS_FILE, COUNTERS_LOCK
from memkeeper.core.lock import LockTimeout, file_lock
from memkeeper.core.plain import Plain
from memkeeper.core.timefmt import iso_now

TYPE_CHECKING = False  # typing is not imported at run time: this is the hottest path
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.core.store import StorePaths

MAX_SESSIONS = 200


class Counts(Plain):
    """Counts after a bump."""

    __slots__ = ("tool_uses", "session_tool_uses", "session_messages", "unflushed_messages")

    def __init__(
        self, tool_uses: int, session_tool_uses: int, session_messages: int, unflushed_messages: int
    ) -> None:
        self.tool_uses = tool_uses  # since the last reset, all sessions (the JS ``counter``)
        self.session_tool_uses = session_tool_uses
        self.session_messages = session_messages
        self.unflushed_messages = unflushed_messages  # prompts + tool uses since this session's last flush


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _read_at(state_dir: str) -> dict[str, Any]:
    try:
        with open(os.path.join(state_dir, COUNTERS_FILE), "rb") as handle:
            data = fastjson.loads(handle.read())
        if isinstance(data, dict) and isinstance(data.get("sessions"), dict):
            return data
    except (OSError, ValueError, RecursionError):
        pass
    return {"toolUses": 0, "sessions": {}}


def _write_at(state_dir: str, data: dict[str, Any]) -> None:
    # Counts and session ids only: nothing to redact (the hook path skips importing privacy).
    atomic_write_text(
        os.path.join(state_dir, COUNTERS_FILE), fastjson.dumps(data), durable=False, redact=False
    )


#: The longest a hook waits for the counters lock; past it the count is deferred (see bump_at).
LOCK_WAIT = 1.0
PENDING_FILE = "counters.pending"


def _lock_at(state_dir: str) -> Any:
    return file_lock(os.path.join(state_dir, COUNTERS_LOCK), timeout=LOCK_WAIT)


def _log_lost(state_dir: str, what: str) -> None:
    """One line in the store's log: a count lost because the lock stayed held (never waited for)."""
    try:
        from pathlib import Path

        from memkeeper.core.jobs import log_error
        from memkeeper.core.store import StorePaths

        root = Path(state_dir).parent  # <project>/.claude/memory/.state
        log_error(
            StorePaths(root.parent.parent), f"counters: {what} lost, counters.lock held over {LOCK_WAIT:g} s"
        )
    except Exception:  # the log itself failed: nothing else to do on the hook path
        pass


def read_counters(paths: StorePaths) -> dict[str, Any]:
    """The counters, with the counts deferred to ``counters.pending`` added (nothing is written)."""
    state_dir = os.fspath(paths.state)
    data = _read_at(state_dir)
    for name in (PENDING_FILE + ".folding", PENDING_FILE):
        try:
            with open(os.path.join(state_dir, name), "rb") as handle:
                lines = handle.read().decode("utf-8", "replace").splitlines()
        except OSError:
            continue
        _add_lines(data, lines)
    return data


def unflushed_at(state_dir: str, session_id: str | None) -> int:
    """Events (prompts + tool uses) of ``session_id`` since its last flush; 0 if unknown."""
    entry = _read_at(state_dir)["sessions"].get(session_id or "unknown")
    return _int(entry.get("unflushed")) if isinstance(entry, dict) else 0


def _session(data: dict[str, Any], session_id: str) -> dict[str, Any]:
    sessions: dict[str, Any] = data["sessions"]
    entry = sessions.get(session_id)
    if not isinstance(entry, dict):
        entry = {"toolUses": 0, "messages": 0, "unflushed": 0}
        sessions[session_id] = entry
    return entry


def bump_at(
    state_dir: str,
    session_id: str | None,
    *,
    tool_uses: int = 0,
    messages: int = 0,
    token: str | None = None,
) -> Counts:
    """:func:`bump` for a store whose folders exist, given its ``.state`` folder.

    ``token``: the event's own mark, for an event two processes may both count (a prompt
    the resident recall server counted, whose reply its hook never got): a token the
    session has already counted (one of its last :data:`TOKENS_KEPT`) adds nothing, and the
    counts are returned as they are.

    Waits at most :data:`LOCK_WAIT` for the lock. Past that the count is not waited for: it
    is appended to ``counters.pending`` (one small O_APPEND write, no lock) and logged, the
    next bump that gets the lock folds it in, and zero counts are returned (nothing is
    triggered by a deferred count).
    """
    sid = session_id or "unknown"
    try:
        with _lock_at(state_dir):
            return _bump_locked(state_dir, sid, tool_uses, messages, token)
    except LockTimeout:
        _defer(state_dir, sid, tool_uses, messages, token)
        return Counts(0, 0, 0, 0)


def _defer(state_dir: str, sid: str, tool_uses: int, messages: int, token: str | None = None) -> None:
    from memkeeper.core.atomic import append_text

    line = f"{sid}\t{tool_uses}\t{messages}" + (f"\t{token}" if token else "")
    try:
        append_text(os.path.join(state_dir, PENDING_FILE), line + "\n")
        what = "deferred to counters.pending"
    except OSError:
        what = "lost"
    _log_lost(state_dir, f"{tool_uses} tool use(s) and {messages} message(s) of {sid} {what}")


def _fold_pending(state_dir: str, data: dict[str, Any]) -> None:
    """Add the counts deferred by hooks that could not wait (the caller holds the lock)."""
    pending = os.path.join(state_dir, PENDING_FILE)
    folding = pending + ".folding"
    try:
        os.replace(pending, folding)  # later deferrals start a new file
    except FileNotFoundError:
        if not os.path.exists(folding):
            return
    try:
        with open(folding, "rb") as handle:
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return
    _add_lines(data, lines)
    data["_folded"] = folding


def _add_lines(data: dict[str, Any], lines: list[str]) -> None:
    for line in lines:
        parts = line.split("\t")
        if len(parts) in (3, 4) and parts[1].isdigit() and parts[2].isdigit():
            _add(data, parts[0], int(parts[1]), int(parts[2]), parts[3] if len(parts) == 4 else None)


#: The tokens of its last counted events a session keeps (see :func:`bump_at`).
TOKENS_KEPT = 2


def _add(
    data: dict[str, Any], sid: str, tool_uses: int, messages: int, token: str | None = None
) -> dict[str, Any]:
    entry = _session(data, sid)
    if token:
        seen = entry.get("tokens")
        seen = [t for t in seen if isinstance(t, str)] if isinstance(seen, list) else []
        if token in seen:
            return entry  # counted already, by the other process that had it
        entry["tokens"] = [*seen[1 - TOKENS_KEPT :], token]
    data["toolUses"] = _int(data.get("toolUses")) + tool_uses
    entry["toolUses"] = _int(entry.get("toolUses")) + tool_uses
    entry["messages"] = _int(entry.get("messages")) + messages
    entry["unflushed"] = _int(entry.get("unflushed")) + tool_uses + messages
    entry["lastSeen"] = iso_now()
    return entry


def _bump_locked(state_dir: str, sid: str, tool_uses: int, messages: int, token: str | None) -> Counts:
    data = _read_at(state_dir)
    _fold_pending(state_dir, data)
    folded = data.pop("_folded", None)
    entry = _add(data, sid, tool_uses, messages, token)
    sessions: dict[str, Any] = data["sessions"]
    if len(sessions) > MAX_SESSIONS:
        oldest = sorted(sessions, key=lambda k: str(sessions[k].get("lastSeen", "")))
        for key in oldest[: len(sessions) - MAX_SESSIONS]:
            del sessions[key]
    _write_at(state_dir, data)
    if folded:
        os.unlink(folded)
    return Counts(data["toolUses"], entry["toolUses"], entry["messages"], entry["unflushed"])


def bump(paths: StorePaths, session_id: str | None, *, tool_uses: int = 0, messages: int = 0) -> Counts:
    """Add to the counters of ``session_id`` and return the new counts."""
    from memkeeper.core.store import ensure_store

    ensure_store(paths)
    return bump_at(os.fspath(paths.state), session_id, tool_uses=tool_uses, messages=messages)


def mark_flushed(paths: StorePaths, session_id: str | None) -> None:
    """Zero the unflushed count of a session (after its flush job ran)."""
    state_dir = os.fspath(paths.state)
    try:
        with _lock_at(state_dir):
            data = _read_at(state_dir)
            _session(data, session_id or "unknown")["unflushed"] = 0
            _write_at(state_dir, data)
    except LockTimeout:  # the count stays: the next event starts the (single-flight) job again
        _log_lost(state_dir, f"the flush mark of {session_id or 'unknown'} skipped")


def reset(paths: StorePaths) -> None:
    """Counter := 0 (the JS ``reset`` command), keeping per-session totals."""
    from memkeeper.core.store import ensure_store

    ensure_store(paths)
    state_dir = os.fspath(paths.state)
    with _lock_at(state_dir):
        data = _read_at(state_dir)
        data["toolUses"] = 0
        for entry in data["sessions"].values():
            if isinstance(entry, dict):
                entry["unflushed"] = 0
        _write_at(state_dir, data)
