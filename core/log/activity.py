"""One event of work in a session: count it, then start its flush or rotate ``memory.md`` if due.

This is the only place that does "count, then rotate if due": the PostToolUse and
UserPromptSubmit hooks and ``memkeeper check`` (the JS ``counter.js check``) all call
:func:`record`. It runs on every tool call: the store's folders are strings
(:mod:`memkeeper.core.store.layout`), no pathlib.

The common event is one line appended to the counters' log (:mod:`memkeeper.core.log.counters`),
which says whether anything can be due yet: nothing is until the session's flush budget or
the log's length runs out. Then the log is folded, and only then are the hook settings read
(two small config files), the flush decided and ``memory.md``'s size looked at (one
``stat``): it grows only when a flush job appends to it, so a rotation is noticed at the
next fold after that flush, as before at the next event after it. Only a due rotation
imports the rotation machinery (and starts the summary job for the new archive).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .. import config, log, store
from ..store.layout import CONFIG_FILE, MEMORY_FILE, STATE_DIR, ensure_dirs, store_root
from . import counters

# The hook path imports this module without ``typing`` (docs/hook-path.md): the classes of
# modules it loads only when needed are named through their packages (``store.paths.StorePaths``),
# which mypy resolves and nothing evaluates at run time.

#: The longest a hook waits for the store lock before leaving a due rotation to the next event.
ROTATE_LOCK_TIMEOUT = 1.0


class Recorded:
    """What :func:`record` did. (A small slotted class: a dataclass's or a ``NamedTuple``'s import
    costs a counting hook more than its budget leaves, docs/hook-path.md.)"""

    __slots__ = ("busy", "counts", "flush_due", "rotation", "settings")

    def __init__(
        self,
        counts: counters.Counts | None,
        settings: config.reader.HookSettings | None,
        rotation: log.rotation.RotationResult | None = None,
        busy: bool = False,
        flush_due: bool = False,
    ) -> None:
        self.counts = counts  # the session's counts when the log was folded now, else None
        self.settings = settings  # the store's hook settings, when they were read
        self.rotation = rotation  # the rotation done now, if any
        self.busy = busy  # a rotation was due but another process held the store
        self.flush_due = flush_due  # the session has ``flushEvery`` unflushed events (memory on)


def record(
    project: str,
    session_id: str | None,
    *,
    tool_uses: int = 0,
    messages: int = 0,
    lock_timeout: float = ROTATE_LOCK_TIMEOUT,
    settings: config.reader.HookSettings | None = None,
    guard: Callable[[], None] | None = None,
) -> Recorded:
    """Count the event for ``session_id`` in the store of ``project``; when the counts were
    folded, say whether its flush is due and rotate if due.

    ``settings``: the store's hook settings when the caller has read them already;
    ``guard``: run when the counts are folded, before the settings are read or anything is
    decided (it raises to stop there): a caller that checked only what the count writes
    checks the rest then.
    """
    root = store_root(project)
    if ensure_dirs(root):  # (rare: a count imports the stamp's module only then)
        from ..store.state_stamp import mark_made_here

        mark_made_here(root)
    read: list[config.reader.HookSettings] = []
    checks = [guard] if guard is not None else []

    def flush_every() -> int | None:
        """The flush budget, when the log is folded: the guard first, then the settings."""
        while checks:
            checks.pop()()
        if not read:
            from ..config.reader import hook_settings_at

            read.append(settings or hook_settings_at(os.path.join(root, CONFIG_FILE)))
        return read[0].flush_every if read[0].memory_enabled else None

    counts = counters.bump_at(
        os.path.join(root, STATE_DIR),
        session_id,
        tool_uses=tool_uses,
        messages=messages,
        flush_every=flush_every,
    )
    if counts is None:
        return Recorded(None, settings)  # only logged: nothing is due before the next fold
    every = flush_every()  # (asked by the fold already: this returns the same)
    settings = read[0]
    rotation: log.rotation.RotationResult | None = None
    busy = False
    if settings.rotation_enabled and rotation_due(root, settings.threshold_tokens):
        rotation, busy = _rotate(project, settings, lock_timeout)
        if busy:
            counters.fold_soon(os.path.join(root, STATE_DIR))  # the next event tries again
    flush_due = every is not None and counts.unflushed_messages >= every
    return Recorded(counts, settings, rotation, busy, flush_due)


def start_flush(
    paths: store.paths.StorePaths,
    session_id: str | None,
    options: dict[str, object],
    settings: config.reader.HookSettings | None = None,
) -> None:
    """Start the ``flush`` job of a session (``options``: why, for which session/transcript)."""
    from ..store.jobs import start_job

    # Zero the count first, so the next events do not spawn the job again meanwhile.
    every = settings.flush_every if settings is not None and settings.memory_enabled else None
    counters.mark_flushed(paths, session_id, every)
    start_job(paths, "flush", options)


def rotation_due(root: str, threshold_tokens: int) -> bool:
    """One ``stat``: is ``memory.md`` at or over the threshold?"""
    from ..basics.tokens import tokens_for_bytes

    try:
        size = os.stat(os.path.join(root, MEMORY_FILE)).st_size
    except OSError:
        return False
    return tokens_for_bytes(size) >= threshold_tokens


def _rotate(
    project: str, settings: config.reader.HookSettings, lock_timeout: float
) -> tuple[log.rotation.RotationResult | None, bool]:
    """Rotate now and start the summary job; (None, True) if the store stayed held elsewhere."""
    from pathlib import Path

    from ..store.jobs import start_job
    from ..store.lock import LockTimeout, is_locked
    from ..store.paths import StorePaths
    from . import rotation

    paths = StorePaths(Path(project))
    if is_locked(paths.lock):
        return None, True  # held now (a flush, a rotation): not waited for, the next event rotates
    from ..store.boundary import refuse_links

    # A hook's fold looked at the root entries it reads (guard); a rotation reads and writes
    # archives, memory.md and the index: every entry of the root first (StoreLinkError).
    refuse_links(paths.root, ())
    if rotation.far_over(rotation.memory_tokens(paths), settings.threshold_tokens):
        start_job(paths, "migrate")  # legacy content: split by date in the background, not inline
        return None, False
    try:
        result = rotation.rotate(
            paths, settings.threshold_tokens, settings.carryover_tokens, lock_timeout=lock_timeout
        )
    except LockTimeout:
        return None, True  # held longer than we wait: the next event rotates
    if result is not None:
        start_job(paths, "summary")
    return result, False
