"""Hook counters: tool uses and prompts per session, exact under parallel hooks.

Claude Code runs hook handlers in parallel. Every count is first one line appended to the
log ``.state/counters.pending`` (``session<TAB>tool uses<TAB>messages``, one ``O_APPEND``
write: parallel appends never mix, and no lock is taken). Now and then the log is *folded*
into ``.state/counters.json`` under the counters' own small lock (never the store lock, so
a hook never waits behind a rotation or migration): the totals are added and the log
starts again. This is the hottest path of the plugin: the common count is an append and
one read of the short log, with no lock, no JSON and no settings.

A fold is due when the log says so. Each fold starts the next log with a header line,
``#fold<TAB>N<TAB>session=n...``: the events a session may log before something could be
due for it (its flush, at ``flushEvery`` events since the last one), N for a session not
listed, and never more than :data:`FOLD_EVERY`. The hook that appends the event a session's
budget runs out at folds and decides (:mod:`memkeeper.core.log.activity`); a log without a
header (a new store, or one started by a hook racing a fold) is folded at once. So the
flush of a session starts at exactly the event it did when every count was a locked
read-modify-write, and counts past a held lock are never lost or waited for: they stay in
the log until the next fold.

A fold closes the log (renames it ``counters.pending.<token>.closed``; the next append
starts a new one), adds the whole lines every closed log holds beyond the offset recorded
for it, and replaces ``counters.json`` (atomically, without fsync: losing the last few
counts to a power cut is harmless) with the new offsets in ``folded``. So a count is added
exactly once: across a kill anywhere (the totals and the offsets are one write), and for
a hook that opened the log just before it was closed (its line lands in the closed log,
past the offset, and the next fold adds it). A closed log is removed once read to its end
and unchanged for :data:`QUIET_SECONDS`. Readers (:func:`read_counters`,
:func:`unflushed_at`) add what the logs hold without writing.

``counters.json`` keeps the :data:`MAX_SESSIONS` sessions counted most recently, in the
order they were last counted (no timestamps), so it stays small. A file that does not parse
counts from zero again (``memkeeper doctor`` backs it up and reports it). Stdlib only, no
pathlib: the ``*_at`` functions take the state folder as a string.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .. import store
from ..basics.platform import read_at
from ..store.boundary import open_no_follow
from ..store.layout import COUNTERS_FILE, COUNTERS_LOCK

# The hook path imports this module without ``typing`` (docs/hook-path.md): counters.json is a
# ``dict[str, object]`` narrowed where it is read, and StorePaths is named through its package
# (``store.paths.StorePaths``), which mypy resolves and nothing evaluates at run time.

#: Sessions kept in counters.json: a session's counts matter while it runs (its flush
#: trigger), and far fewer than this run at once in one project. A session dropped and
#: counted again starts from zero, which at worst delays its next flush.
MAX_SESSIONS = 32
#: The most events the log holds before it is folded, whatever the sessions' budgets.
FOLD_EVERY = 64
#: The longest a hook waits for the counters lock; past it the counts stay in the log.
LOCK_WAIT = 1.0
PENDING_FILE = "counters.pending"
CLOSED_SUFFIX = ".closed"
#: A closed log read to its end is removed once unchanged for this long: a hook that opened
#: it just before it was closed has written its line by then (and that line is folded).
QUIET_SECONDS = 2.0
HEADER = b"#fold"
#: A line that makes the next count fold (see fold_soon).
DUE = b"#due\n"
#: A log bigger than this is folded without reading it all (folds keep failing: a held lock).
READ_LIMIT = 1 << 16


class Counts(tuple[int, int, int, int]):
    """A session's counts just after a fold.

    A tuple with named fields, written out: importing ``dataclasses`` (and its ``inspect``) or
    ``typing`` (for ``NamedTuple``) costs a counting hook more than its budget leaves
    (docs/hook-path.md).
    """

    __slots__ = ()

    def __new__(
        cls, tool_uses: int, session_tool_uses: int, session_messages: int, unflushed_messages: int
    ) -> Counts:
        return tuple.__new__(cls, (tool_uses, session_tool_uses, session_messages, unflushed_messages))

    @property
    def tool_uses(self) -> int:
        """Since the last reset, all sessions (the JS ``counter``)."""
        return self[0]

    @property
    def session_tool_uses(self) -> int:
        return self[1]

    @property
    def session_messages(self) -> int:
        return self[2]

    @property
    def unflushed_messages(self) -> int:
        """Prompts + tool uses since this session's last flush."""
        return self[3]


# --- counting: the hook path ------------------------------------------------------------


def bump_at(
    state_dir: str,
    session_id: str | None,
    *,
    tool_uses: int = 0,
    messages: int = 0,
    flush_every: Callable[[], int | None] | None = None,
    fold: bool = False,
) -> Counts | None:
    """Count an event of ``session_id`` in the store whose ``.state`` folder is ``state_dir``.

    The event is appended to the log; when the log says a fold is due (or ``fold``), it is
    folded and the session's counts are returned, else None: nothing can be due for any
    session before its next fold. ``flush_every`` gives, when a fold is done, the store's
    ``flushEvery`` (None when memory is off) for the next log's budgets; it is called at
    most once. Waits at most :data:`LOCK_WAIT` for the lock, returning None past it (the
    counts stay in the log for the next fold).
    """
    sid = session_id or "unknown"
    if _loggable(sid):
        due = _append(state_dir, f"{sid}\t{tool_uses}\t{messages}\n".encode(), sid)
        event = None
    else:  # a session id the log's lines cannot hold: counted directly into counters.json
        due, event = True, (sid, tool_uses, messages)
    if not (due or fold):
        return None
    from ..store.lock import LockTimeout

    try:
        with _lock_at(state_dir):
            return _fold_locked(state_dir, sid, event, flush_every)
    except LockTimeout:
        _log_held(state_dir, f"the counts of {sid} stay in {PENDING_FILE}")
        return None


def _loggable(sid: str) -> bool:
    return "\t" not in sid and "\n" not in sid and "\r" not in sid and "=" not in sid


def _append(state_dir: str, line: bytes, sid: str) -> bool:
    """Append ``line`` to the log; True when a fold is due for ``sid`` (see the module's doc)."""
    fd = open_no_follow(os.path.join(state_dir, PENDING_FILE), os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)
        log = read_at(fd, READ_LIMIT, 0)
    finally:
        os.close(fd)
    return len(log) >= READ_LIMIT or fold_due(log, sid)


def fold_due(log: bytes, sid: str) -> bool:
    """Whether the log ``log`` (its bytes) holds as many events of ``sid`` as its budget, or
    :data:`FOLD_EVERY` in all, or asks for a fold (:func:`fold_soon`), or has no header."""
    header, _, lines = log.partition(b"\n")
    fields = header.split(b"\t")
    if fields[0] != HEADER or len(fields) < 2 or not fields[1].isdigit():
        return True
    key = sid.encode("utf-8", "surrogatepass")
    budget = int(fields[1])
    for field in fields[2:]:
        name, _, left = field.rpartition(b"=")
        if name == key and left.isdigit():
            budget = int(left)
    own = lines.count(b"\n" + key + b"\t") + lines.startswith(key + b"\t")
    return own >= budget or lines.count(b"\n") >= FOLD_EVERY or DUE in lines


def fold_soon(state_dir: str) -> None:
    """Make the next count fold the log (a rotation was due but the store was busy: retry it then)."""
    fd = open_no_follow(os.path.join(state_dir, PENDING_FILE), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, DUE)
    finally:
        os.close(fd)


# --- folding: under the counters lock ---------------------------------------------------


def _lock_at(state_dir: str) -> store.lock._FileLock:
    from ..store.lock import file_lock

    return file_lock(os.path.join(state_dir, COUNTERS_LOCK), timeout=LOCK_WAIT)


def _fold_locked(
    state_dir: str,
    sid: str,
    event: tuple[str, int, int] | None,
    flush_every: Callable[[], int | None] | None,
) -> Counts:
    """Fold the log into counters.json (the caller holds the lock) and start the next log."""
    data, readable = _load_at(state_dir)
    gone = _fold_logs(state_dir, data, readable)
    if event is not None:
        _add(data, *event)
    entry = _session(data, sid)
    _keep_latest(_sessions(data))
    _write_at(state_dir, data)
    _remove(gone)
    _start_log(state_dir, data, flush_every() if flush_every else None)
    return Counts(
        _int(data.get("toolUses")), _int(entry["toolUses"]), _int(entry["messages"]), _int(entry["unflushed"])
    )


def _fold_logs(state_dir: str, data: dict[str, object], readable: bool = True) -> list[str]:
    """Close the log and add every closed log's new lines to ``data``, recording how far each
    was read in ``data["folded"]``; the closed logs to remove once ``data`` is written.

    When counters.json did not parse (``readable`` false: its counts start from zero again),
    the logs closed before are not added: their counts were in the file that was lost.
    """
    closed = f"{PENDING_FILE}.{os.urandom(6).hex()}{CLOSED_SUFFIX}"
    try:
        os.rename(os.path.join(state_dir, PENDING_FILE), os.path.join(state_dir, closed))
    except FileNotFoundError:
        pass
    import time

    marks = _marks(data)
    if not readable:
        marks = {name: _size(path) for name, path in _closed_logs(state_dir) if name != closed}
    folded: dict[str, int] = {}
    gone: list[str] = []
    for name, path in _closed_logs(state_dir):
        try:
            with open(path, "rb") as handle:
                log = handle.read()
                changed = os.fstat(handle.fileno()).st_mtime
        except OSError:
            continue
        start = marks.get(name, 0)
        end = log.rfind(b"\n") + 1  # whole lines only: a line being written is read next time
        if end > start:
            _add_lines(data, log[start:end].decode("utf-8", "replace").splitlines())
        folded[name] = max(start, end)
        if folded[name] == len(log) and time.time() - changed >= QUIET_SECONDS:
            gone.append(path)  # read to its end and quiet: no hook is still appending to it
    data["folded"] = folded
    return gone


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _marks(data: dict[str, object]) -> dict[str, int]:
    marks = data.get("folded")
    if not isinstance(marks, dict):
        return {}
    return {name: _int(offset) for name, offset in marks.items()}


def _closed_logs(state_dir: str) -> list[tuple[str, str]]:
    """(name, path) of the logs closed by a fold (or left by an earlier version), oldest name first."""
    prefix = PENDING_FILE + "."
    try:
        names = os.listdir(state_dir)
    except OSError:
        return []
    return [(name, os.path.join(state_dir, name)) for name in sorted(names) if name.startswith(prefix)]


def tidy_at(state_dir: str) -> None:
    """Remove the closed logs read to their end and quiet (see :func:`_fold_logs`), without a
    fold: for a natural point (SessionStart) after a burst of folds, each of which closed a
    log too fresh to remove then, so they waited for the next fold. Skipped, leaving them,
    when the counters lock stays held or counters.json does not parse."""
    import time

    from ..store.lock import LockTimeout

    if not _closed_logs(state_dir):
        return
    try:
        with _lock_at(state_dir):
            data, readable = _load_at(state_dir)
            marks = _marks(data) if readable else {}
            gone: list[str] = []
            for name, path in _closed_logs(state_dir):
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if marks.get(name) == info.st_size and time.time() - info.st_mtime >= QUIET_SECONDS:
                    gone.append(path)
            _remove(gone)
    except LockTimeout:
        pass


def _remove(paths: list[str]) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _start_log(state_dir: str, data: dict[str, object], flush_every: int | None) -> None:
    """Start the next log with its budgets, unless a hook has started one meanwhile (that
    one has no header, so the next event folds it; so has a log whose first line a racing
    append got in before the header: a fold too early is harmless, never one too late)."""
    default = min(flush_every or FOLD_EVERY, FOLD_EVERY)
    budgets = [b"%s\t%d" % (HEADER, default)]
    if flush_every:
        for sid, entry in _sessions(data).items():
            left = max(1, flush_every - (_int(entry.get("unflushed")) if isinstance(entry, dict) else 0))
            if left < default and _loggable(sid):
                budgets.append(b"%s=%d" % (sid.encode("utf-8", "surrogatepass"), left))
    try:
        fd = open_no_follow(
            os.path.join(state_dir, PENDING_FILE), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL
        )
    except FileExistsError:
        return
    try:
        os.write(fd, b"\t".join(budgets) + b"\n")
    finally:
        os.close(fd)


def _log_held(state_dir: str, what: str) -> None:
    """One line in the store's log: the counters lock stayed held (it is never waited for long)."""
    try:
        from pathlib import Path

        from ..store.jobs import log_error
        from ..store.paths import StorePaths

        root = Path(state_dir).parent  # <project>/.claude/memory/.state
        log_error(
            StorePaths(root.parent.parent), f"counters: {what}, counters.lock held over {LOCK_WAIT:g} s"
        )
    except Exception:  # the log itself failed: nothing else to do on the hook path
        pass


# --- the file and its entries -----------------------------------------------------------


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _read_at(state_dir: str) -> dict[str, object]:
    return _load_at(state_dir)[0]


def _load_at(state_dir: str) -> tuple[dict[str, object], bool]:
    """counters.json (empty counts when missing or unusable), and False when it was there but
    did not parse: the counts it held are lost."""
    from ..basics import fastjson

    try:
        with open(os.path.join(state_dir, COUNTERS_FILE), "rb") as handle:
            data = fastjson.loads(handle.read())
        if isinstance(data, dict) and isinstance(data.get("sessions"), dict):
            return data, True
    except FileNotFoundError:
        return {"toolUses": 0, "sessions": {}}, True
    except (OSError, ValueError, RecursionError):
        pass
    return {"toolUses": 0, "sessions": {}}, False


def _write_at(state_dir: str, data: dict[str, object]) -> None:
    from ..basics import fastjson
    from ..store.atomic import atomic_write_text

    # Counts and session ids only: nothing to redact (the hook path skips importing privacy).
    atomic_write_text(
        os.path.join(state_dir, COUNTERS_FILE), fastjson.dumps(data), durable=False, redact=False
    )


def _read_lines(path: str, start: int = 0) -> list[str]:
    """The whole lines of the file at ``path`` from byte ``start``."""
    try:
        with open(path, "rb") as handle:
            log = handle.read()
    except OSError:
        return []
    return log[start : log.rfind(b"\n") + 1].decode("utf-8", "replace").splitlines()


def _add_lines(data: dict[str, object], lines: list[str]) -> None:
    for line in lines:
        parts = line.split("\t")
        # (an earlier version's line may end with a fourth field, a count token: counted as any line)
        if len(parts) in (3, 4) and parts[1].isdigit() and parts[2].isdigit() and not line.startswith("#"):
            _add(data, parts[0], int(parts[1]), int(parts[2]))


def _add(data: dict[str, object], sid: str, tool_uses: int, messages: int) -> None:
    entry = _session(data, sid, latest=True)
    entry.pop("tokens", None)  # (count tokens an earlier version kept)
    data["toolUses"] = _int(data.get("toolUses")) + tool_uses
    entry["toolUses"] = _int(entry.get("toolUses")) + tool_uses
    entry["messages"] = _int(entry.get("messages")) + messages
    entry["unflushed"] = _int(entry.get("unflushed")) + tool_uses + messages
    entry.pop("lastSeen", None)  # written by earlier versions; the order says it now


def _sessions(data: dict[str, object]) -> dict[str, object]:
    """The sessions' entries of counters.json (made empty if it has none)."""
    sessions = data.get("sessions")
    if not isinstance(sessions, dict):
        sessions = data["sessions"] = {}
    return sessions


def _session(data: dict[str, object], session_id: str, *, latest: bool = False) -> dict[str, object]:
    """The entry of ``session_id`` (made if missing); ``latest``: moved to the end, as counted last."""
    sessions = _sessions(data)
    entry = sessions.pop(session_id, None) if latest else sessions.get(session_id)
    if not isinstance(entry, dict):
        entry = {}
    if latest or session_id not in sessions:
        sessions[session_id] = entry
    for key in ("toolUses", "messages", "unflushed"):
        entry[key] = _int(entry.get(key))
    return entry


def _keep_latest(sessions: dict[str, object]) -> None:
    """Drop all but the :data:`MAX_SESSIONS` sessions counted last (the dict's last keys).

    Entries an earlier version wrote carry a ``lastSeen`` time instead: they come first,
    oldest first, so a file that version left over the limit loses its least recent ones.
    """
    excess = len(sessions) - MAX_SESSIONS
    if excess <= 0:
        return
    seen = {
        key: str(entry["lastSeen"])
        for key, entry in sessions.items()
        if isinstance(entry, dict) and "lastSeen" in entry
    }
    stamped = sorted(seen, key=seen.__getitem__)
    old = set(stamped)
    others = [key for key in sessions if key not in old]
    for key in (stamped + others)[:excess]:
        del sessions[key]


# --- readers and the other writers ------------------------------------------------------


def read_all_at(state_dir: str) -> dict[str, object]:
    """counters.json with the lines the logs hold beyond what was folded; nothing is written."""
    data = _read_at(state_dir)
    marks = _marks(data)
    for name, path in _closed_logs(state_dir):
        _add_lines(data, _read_lines(path, marks.get(name, 0)))
    _add_lines(data, _read_lines(os.path.join(state_dir, PENDING_FILE)))
    return data


def unflushed_at(state_dir: str, session_id: str | None) -> int:
    """Events (prompts + tool uses) of ``session_id`` since its last flush; 0 if unknown."""
    entry = _sessions(read_all_at(state_dir)).get(session_id or "unknown")
    return _int(entry.get("unflushed")) if isinstance(entry, dict) else 0


def bump(
    paths: store.paths.StorePaths, session_id: str | None, *, tool_uses: int = 0, messages: int = 0
) -> Counts:
    """Add to the counters of ``session_id`` and return the new counts (folded now)."""
    from ..store.paths import ensure_store

    ensure_store(paths)
    counts = bump_at(os.fspath(paths.state), session_id, tool_uses=tool_uses, messages=messages, fold=True)
    return counts if counts is not None else Counts(0, 0, 0, 0)


def _rewrite(
    paths: store.paths.StorePaths, change: Callable[[dict[str, object]], None], flush_every: int | None
) -> bool:
    """Fold the log, apply ``change`` to the counters and write them, under the lock; False
    when the lock stayed held."""
    from ..store.lock import LockTimeout

    state_dir = os.fspath(paths.state)
    try:
        with _lock_at(state_dir):
            data, readable = _load_at(state_dir)
            gone = _fold_logs(state_dir, data, readable)
            change(data)
            _write_at(state_dir, data)
            _remove(gone)
            _start_log(state_dir, data, flush_every)
    except LockTimeout:
        return False
    return True


def mark_flushed(
    paths: store.paths.StorePaths, session_id: str | None, flush_every: int | None = None
) -> None:
    """Zero the unflushed count of a session (its flush job is starting); ``flush_every``
    for the next log's budgets (None: the next event folds again)."""

    def zero(data: dict[str, object]) -> None:
        _session(data, session_id or "unknown")["unflushed"] = 0

    if not _rewrite(paths, zero, flush_every):  # the count stays: the next fold starts the job again
        _log_held(os.fspath(paths.state), f"the flush mark of {session_id or 'unknown'} skipped")


def reset(paths: store.paths.StorePaths) -> None:
    """Counter := 0 (the JS ``reset`` command), keeping per-session totals."""
    from ..store.lock import LockTimeout
    from ..store.paths import ensure_store

    def zero(data: dict[str, object]) -> None:
        data["toolUses"] = 0
        for entry in _sessions(data).values():
            if isinstance(entry, dict):
                entry["unflushed"] = 0

    ensure_store(paths)
    if not _rewrite(paths, zero, None):
        raise LockTimeout(f"{paths.state / COUNTERS_LOCK} is held by another process")
