"""One event of work in a session: count it, then rotate ``memory.md`` if it is due.

This is the only place that does "count, then rotate if due": the PostToolUse and
UserPromptSubmit hooks and ``memkeeper check`` (the JS ``counter.js check``) all call
:func:`record`. It runs on every tool call, so it stays on the lean layer: the store's
folders as strings (:mod:`memkeeper.core.layout`), counters and hook settings read with
:mod:`memkeeper.core.fastjson`, no pathlib, json or typing. The common case is one small
lock, one small JSON file rewritten, two config reads and one ``stat``; only a due
rotation imports the rotation machinery (and starts the summary job for the new archive).
"""

from __future__ import annotations

import os

from memkeeper.core import counters
from memkeeper.core.layout import CONFIG_FILE, MEMORY_FILE, STATE_DIR, ensure_dirs, store_root
from memkeeper.core.settings import hook_settings_at
from memkeeper.core.tokens import tokens_for_bytes

TYPE_CHECKING = False  # typing is not imported at run time: this runs on every tool call
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.core.counters import Counts
    from memkeeper.core.rotation import RotationResult
    from memkeeper.core.settings import HookSettings
    from memkeeper.core.store import StorePaths

#: The longest a hook waits for the store lock before leaving a due rotation to the next event.
ROTATE_LOCK_TIMEOUT = 1.0


class Recorded:
    """What :func:`record` did (a plain class: no dataclasses import on the hook path)."""

    __slots__ = ("busy", "counts", "rotation", "settings")

    def __init__(
        self, counts: Counts, settings: HookSettings, rotation: RotationResult | None, busy: bool
    ) -> None:
        self.counts = counts
        self.settings = settings
        self.rotation = rotation  # the rotation done now, if any
        self.busy = busy  # a rotation was due but another process held the store


def record(
    project: str,
    session_id: str | None,
    *,
    tool_uses: int = 0,
    messages: int = 0,
    lock_timeout: float = ROTATE_LOCK_TIMEOUT,
    settings: HookSettings | None = None,
    token: str | None = None,
) -> Recorded:
    """Count the event for ``session_id`` in the store of ``project``, then rotate if due.

    ``settings``: the store's hook settings when the caller has read them already;
    ``token``: the event's count token (:func:`memkeeper.core.counters.bump_at`).
    """
    root = store_root(project)
    ensure_dirs(root)
    counts = counters.bump_at(
        os.path.join(root, STATE_DIR), session_id, tool_uses=tool_uses, messages=messages, token=token
    )
    return settle(project, counts, settings, lock_timeout)


def settle(
    project: str,
    counts: Counts,
    settings: HookSettings | None = None,
    lock_timeout: float = ROTATE_LOCK_TIMEOUT,
) -> Recorded:
    """The second half of :func:`record`, after the count: rotate if due."""
    root = store_root(project)
    if settings is None:
        settings = hook_settings_at(os.path.join(root, CONFIG_FILE))
    rotation: RotationResult | None = None
    busy = False
    if settings.rotation_enabled and rotation_due(root, settings.threshold_tokens):
        rotation, busy = _rotate(project, settings, lock_timeout)
    return Recorded(counts, settings, rotation, busy)


def flush_due(done: Recorded) -> bool:
    """Has this session gathered enough unflushed events for its flush job?"""
    return done.settings.memory_enabled and done.counts.unflushed_messages >= done.settings.flush_every


def start_flush(paths: StorePaths, session_id: str | None, options: dict[str, Any]) -> None:
    """Start the ``flush`` job (``options``: why, for which session/transcript)."""
    from memkeeper.core.jobs import start_job

    # Zero the count first, so the next events do not spawn the job again meanwhile.
    counters.mark_flushed(paths, session_id)
    start_job(paths, "flush", options)


def rotation_due(root: str, threshold_tokens: int) -> bool:
    """One ``stat``: is ``memory.md`` at or over the threshold?"""
    try:
        size = os.stat(os.path.join(root, MEMORY_FILE)).st_size
    except OSError:
        return False
    return tokens_for_bytes(size) >= threshold_tokens


def _rotate(project: str, settings: HookSettings, lock_timeout: float) -> tuple[RotationResult | None, bool]:
    """Rotate now and start the summary job; (None, True) if the store stayed held elsewhere."""
    from pathlib import Path

    from memkeeper.core import rotation
    from memkeeper.core.jobs import start_job
    from memkeeper.core.lock import LockTimeout, is_locked
    from memkeeper.core.store import StorePaths

    paths = StorePaths(Path(project))
    if is_locked(paths.lock):
        return None, True  # held now (a flush, a rotation): not waited for, the next event rotates
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
