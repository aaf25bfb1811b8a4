"""The store lock: one ``flock`` around every read-modify-write of the store.

``flock`` locks belong to an open file description, so the kernel drops them when a
process dies, even under SIGKILL: a killed process can never leave the store stuck.
Named locks (``jobs.flush``, ``jobs.summary`` ...) give single-flight background jobs.
"""

from __future__ import annotations

import fcntl
import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    StrPath = str | os.PathLike[str]


class LockTimeout(TimeoutError):
    """The lock was held by another process for longer than we were willing to wait."""


def _open_lock_file(path: StrPath) -> int:
    from memkeeper.core.atomic import open_no_follow
    from memkeeper.core.boundary import check_path

    check_path(path)  # never create a folder, or a lock file, through a link in the store
    folder = os.path.dirname(os.fspath(path))
    if folder:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    return open_no_follow(path, os.O_RDWR | os.O_CREAT, 0o600)


class _Expired(Exception):
    """Raised by the SIGALRM handler to end a blocking ``flock`` at its deadline."""


def _expire(_signum: int, _frame: object) -> None:
    raise _Expired


def _acquire_queued(fd: int, timeout: float) -> bool | None:
    """Wait in the kernel's queue for the lock, at most ``timeout`` (SIGALRM ends the wait).

    A queued waiter is served in turn, where a polling one can be overtaken again and again
    by busy neighbours (16 hooks at once). True when locked, False at the deadline, None when
    this thread cannot use SIGALRM (not the main thread, or the alarm is already in use).
    """
    import signal

    try:
        previous = signal.signal(signal.SIGALRM, _expire)
    except (ValueError, OSError):
        return None
    try:
        if previous not in (signal.SIG_DFL, signal.SIG_IGN, None) or signal.getitimer(signal.ITIMER_REAL)[0]:
            return None  # someone else's alarm: do not disturb it
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return True
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Expired:
        return False  # if it struck just after flock succeeded, closing fd releases the lock
    finally:
        signal.signal(signal.SIGALRM, previous)


def _try_flock(fd: int) -> bool:
    """flock ``fd`` exclusively if nobody holds it: False when another process does."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        import errno  # (only when the lock is held: an uncontended hook never needs it)

        if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            raise
        return False


def _acquire(fd: int, path: StrPath, timeout: float) -> None:
    """flock ``fd`` exclusively within ``timeout`` seconds; LockTimeout after that."""
    if _try_flock(fd):
        return
    if timeout > 0:
        try:
            queued = _acquire_queued(fd, timeout)
        except _Expired:  # the alarm's handler ran late, after it was disarmed
            queued = False
        if queued is not None:
            if queued:
                return
            raise LockTimeout(f"{path} is held by another process")
    _acquire_polling(fd, path, timeout)


def _acquire_polling(fd: int, path: StrPath, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    poll = 0.002
    while not _try_flock(fd):
        if time.monotonic() >= deadline:
            raise LockTimeout(f"{path} is held by another process")
        time.sleep(poll)
        poll = min(poll * 2, 0.05)


def _open_locked(path: StrPath, timeout: float, shown: StrPath) -> int:
    """A descriptor of the lock file ``path`` holding its lock (LockTimeout names ``shown``)."""
    fd = _open_lock_file(path)
    try:
        _acquire(fd, shown, timeout)
    except BaseException:
        os.close(fd)
        raise
    return fd


class _FileLock:
    __slots__ = ("fd", "path", "timeout")

    def __init__(self, path: StrPath, timeout: float) -> None:
        self.path, self.timeout, self.fd = path, timeout, -1

    def __enter__(self) -> None:
        self.fd = _open_locked(self.path, self.timeout, self.path)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # closing the descriptor releases the lock
        self.fd = -1


def file_lock(path: StrPath, timeout: float = 30.0) -> _FileLock:
    """Hold an exclusive lock on ``path`` (created 0600), waiting up to ``timeout`` seconds.

    The context managers here are small classes, not ``contextlib`` generators: importing
    contextlib costs the hook path ~3 ms.
    """
    return _FileLock(path, timeout)


class _TryLock:
    __slots__ = ("fd", "path")

    def __init__(self, path: StrPath) -> None:
        self.path, self.fd = path, -1

    def __enter__(self) -> bool:
        fd = _open_lock_file(self.path)
        try:
            acquired = _try_flock(fd)
        except BaseException:
            os.close(fd)
            raise
        if not acquired:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def try_lock(path: StrPath) -> _TryLock:
    """Take ``path`` without waiting; the ``with`` value is False (and nothing is held) if taken."""
    return _TryLock(path)


def is_locked(path: StrPath) -> bool:
    """True if another process holds ``path`` right now (False if it does not exist)."""
    if not os.path.exists(path):
        return False
    with try_lock(path) as acquired:
        return not acquired


class _Held:
    __slots__ = ("depth", "fd", "thread_lock")

    def __init__(self) -> None:
        import threading  # only for the store lock, which the plain hook path never takes

        self.thread_lock = threading.RLock()
        self.depth = 0
        self.fd = -1


_held: dict[str, _Held] = {}


class _ReentrantLock:
    __slots__ = ("held", "key", "path", "timeout")

    def __init__(self, path: StrPath, timeout: float) -> None:
        self.path, self.timeout = path, timeout
        self.key = os.path.abspath(path)
        held = _held.get(self.key)
        if held is None:
            held = _held.setdefault(self.key, _Held())
        self.held = held

    def __enter__(self) -> None:
        held = self.held
        if not held.thread_lock.acquire(timeout=self.timeout):
            raise LockTimeout(f"{self.path} is held by another thread")
        try:
            if held.depth == 0:
                held.fd = _open_locked(self.key, self.timeout, self.path)
            held.depth += 1
        except BaseException:
            held.thread_lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        held = self.held
        try:
            held.depth -= 1
            if held.depth == 0:
                os.close(held.fd)
                held.fd = -1
        finally:
            held.thread_lock.release()


def reentrant_lock(path: StrPath, timeout: float = 30.0) -> _ReentrantLock:
    """Like :func:`file_lock`, but a thread that holds it may take it again.

    Two ``flock`` calls on two descriptors of one file block each other even inside one
    process, so nested store operations (rotation updating the index) share one hold.
    """
    return _ReentrantLock(path, timeout)
