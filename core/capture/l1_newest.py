"""The newest L1 session files, without listing a sessions folder of 50,000 names each time.

SessionStart shows what the most recent sessions did, so it needs the newest few plain L1
files. Their names start with the UTC time the session began, so the newest are the
greatest names; but finding them means listing the whole folder (about 15 ms at 50,000
sessions), and a hook must not grow with the store.

``.state/l1-newest.json`` keeps the :data:`KEEP` greatest plain L1 names together with the
sessions folder's identity and modification time when they were listed. Creating,
renaming or removing a file changes that time (appending to one does not, and does not
change the newest names), so while it is unchanged the saved names are the answer: one
``stat`` and one small read. When the folder changed (a new session's first L1 write, a
compress, a forget, the JavaScript plugin, a person), :func:`newest_l1_names` lists it once
and saves the result under ``.state/l1-newest.lock`` if the lock is free (a hook never
waits for it). The L1 writer calls it after each refinement, so the next SessionStart
usually finds the file fresh. Names read from the file are checked as any other name; the
file is a cache of the folder, so an unreadable one is simply written again.

The kernel stamps a folder's time with a coarse clock (one tick is a few milliseconds), so
a file created in the same tick as a listing would leave the time unchanged. A listing is
therefore saved only when the folder's time is at least
:data:`memkeeper.core.store.derived.SETTLE_SECONDS` old when the listing starts: a hook that
finds it younger answers from its listing without saving it, and the L1 writer (a background
job) waits those few milliseconds first.

Stdlib ``os`` only: the SessionStart hook imports this module.
"""

from __future__ import annotations

import os
import time

from ..store import derived
from ..store.layout import SESSIONS_DIR, STATE_DIR
from ..store.names import L1_SUFFIX
from ..store.paths import is_safe_basename

NEWEST_FILE = "l1-newest.json"
NEWEST_LOCK = "l1-newest.lock"
#: Names kept: more than SessionStart reads, so a few removed files still leave enough.
KEEP = 32


def _is_plain_l1(name: str) -> bool:
    return name.endswith(L1_SUFFIX) and is_safe_basename(name)


def _folder_stamp(sessions: str) -> list[int] | None:
    try:
        info = os.stat(sessions)
    except OSError:
        return None
    return [info.st_dev, info.st_ino, info.st_mtime_ns]


def _saved(state_dir: str, stamp: list[int]) -> list[str] | None:
    """The saved names when they were listed at ``stamp``, else None."""
    data = derived.saved(os.path.join(state_dir, NEWEST_FILE), "folder", stamp)
    found = None if data is None else data.get("names")
    if not isinstance(found, list):
        return None
    names = [n for n in found if isinstance(n, str) and _is_plain_l1(n)]
    return sorted(names, reverse=True)


def _save(state_dir: str, stamp: list[int], names: list[str]) -> None:
    derived.save(  # names only: nothing to redact
        os.path.join(state_dir, NEWEST_FILE),
        os.path.join(state_dir, NEWEST_LOCK),
        {"folder": stamp, "names": names},
        redact=False,
    )


def newest_l1_names(root: str, limit: int = KEEP, settle: bool = False) -> list[str]:
    """The ``limit`` (at most :data:`KEEP`) greatest plain L1 names of the store at ``root``, newest first.

    ``settle`` (for a writer, never a hook): when the folder has just changed, wait until
    its time is :data:`.derived.SETTLE_SECONDS` old, so the listing can be saved.
    """
    sessions = os.path.join(root, SESSIONS_DIR)
    state_dir = os.path.join(root, STATE_DIR)
    stamp = _folder_stamp(sessions)
    if stamp is None:
        return []
    names = _saved(state_dir, stamp)
    if names is not None:
        return names[:limit]
    if settle and 0 <= derived.age(stamp[2]) < derived.SETTLE_SECONDS:
        time.sleep(derived.SETTLE_SECONDS - derived.age(stamp[2]))
        stamp = _folder_stamp(sessions) or stamp
    settled = derived.settled(stamp[2])
    try:
        listed = [n for n in os.listdir(sessions) if _is_plain_l1(n)]
    except OSError:
        return []
    names = sorted(listed, reverse=True)[:KEEP]
    if settled and os.path.isdir(state_dir) and _folder_stamp(sessions) == stamp:  # unchanged while listed
        try:
            _save(state_dir, stamp, names)
        except OSError:
            pass  # the next reader lists again
    return names[:limit]
