"""``msvcrt.locking`` for the simulated foreign platform, imported as ``msvcrt`` (see ``sitecustomize.py`` here).

Windows locks a byte range of an open file per handle: ``LK_NBLCK`` fails at once with
OSError (EACCES) when another handle holds it, ``LK_LOCK`` retries for about 10 s,
``LK_UNLCK`` releases it. Emulated with the host's ``flock`` (per open file, like a
handle): whole-file, which is what a lock of the first byte of a lock file amounts to.
"""

from __future__ import annotations

import errno
import os
import time

import sitecustomize  # type: ignore[import-not-found]  # (tests/foreign/sitecustomize.py, on PYTHONPATH)

LK_UNLCK, LK_LOCK, LK_NBLCK, LK_RLCK, LK_NBRLCK = 0, 1, 2, 3, 4


def locking(fd: int, mode: int, nbytes: int) -> None:
    if nbytes <= 0:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
    if mode == LK_UNLCK:
        sitecustomize.HOST_FLOCK(fd, sitecustomize.HOST_LOCK_UN)
        return
    tries = 10 if mode in (LK_LOCK, LK_RLCK) else 1
    for attempt in range(tries):
        try:
            sitecustomize.HOST_FLOCK(fd, sitecustomize.HOST_LOCK_EX | sitecustomize.HOST_LOCK_NB)
            return
        except BlockingIOError:
            if attempt + 1 < tries:
                time.sleep(1)
    raise OSError(errno.EACCES if tries == 1 else errno.EDEADLK, "Permission denied")
