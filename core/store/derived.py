"""Small files derived from a bigger source, kept in ``.state`` so that a hook need not read the source.

A derived file records the *stamp* of what it was derived from (``stat``: device, inode, size and
modification time) and is used only while the source's stamp is the same: replacing the source (an
atomic rename gives it a new inode) or rewriting it in place (a new time, and usually a new size)
makes it stale, and the reader derives it again. It is a cache: a missing, unparsable or stale one
is made again, never trusted. It lives in ``.state``, which a store made on another machine or by
another user has set aside before any use (:mod:`memkeeper.core.store.state_stamp`), and what it
names is checked as anything read from the source is.

The kernel stamps times with a coarse clock (one tick is a few milliseconds), so a change in the
tick of a reading could leave the stamp as it was. A reader therefore saves what it derived only
when the source's time was at least :data:`SETTLE_SECONDS` old before it read it (:func:`settled`).
A writer that has just replaced the source saves what it wrote at once, under the stamp of the
file it made: only a program that rewrites the file in place, within the same tick and to the
same size, would go unseen (until its next change).

Used by :mod:`memkeeper.core.capture.l1_newest` (the newest names of the sessions folder) and
:mod:`memkeeper.core.store.index_glance` (what SessionStart needs of ``memory-index.json``).
Stdlib ``os`` only: the SessionStart hook imports it.
"""

from __future__ import annotations

import os
import time

from ..basics import fastjson, platform

#: Longer than the coarse clock's tick (1-10 ms): see the module's note.
SETTLE_SECONDS = 0.05


def age(mtime_ns: int) -> float:
    """How many seconds ago a time of the file system (``st_mtime_ns``) was."""
    return time.time() - mtime_ns / 1e9


def settled(mtime_ns: int) -> bool:
    """True when a time of the file system (``st_mtime_ns``) is :data:`SETTLE_SECONDS` old or older."""
    return age(mtime_ns) >= SETTLE_SECONDS


def saved(path: str, key: str, stamp: list[int]) -> dict[str, object] | None:
    """The derived file at ``path`` when its ``key`` records ``stamp``; None when it is missing,
    unparsable, not an object or stale (its values are the caller's to check)."""
    try:
        with os.fdopen(platform.open_no_follow(path, os.O_RDONLY), "rb") as handle:
            data = fastjson.loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and data.get(key) == stamp else None


def save(path: str, lock: str, data: dict[str, object], redact: bool = True) -> bool:
    """Write ``data`` to ``path`` atomically under ``lock``, when the lock is free (never waiting:
    another process saving now saves the same or newer); True when written.

    Not fsynced: a cache, whose loss to a power cut costs one derivation. Redacted as every file
    of the store unless ``redact`` is False (for names only)."""
    from .atomic import atomic_write_text
    from .lock import try_lock

    with try_lock(lock) as held:
        if held:
            atomic_write_text(path, fastjson.dumps(data), durable=False, redact=redact)
        return bool(held)


def file_stamp(info: os.stat_result) -> list[int]:
    """The stamp of a file from its ``stat``: device, inode, size, modification time."""
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns]
