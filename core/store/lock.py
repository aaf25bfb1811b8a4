"""The store lock: one exclusive file lock around every read-modify-write of the store.

The lock belongs to an open file (``flock`` on POSIX, ``msvcrt.locking`` on Windows: see
:mod:`memkeeper.core.basics.platform`), so the system drops it when a process dies, even killed
outright: a killed process can never leave the store stuck.
Named locks (``jobs.flush``, ``jobs.summary`` ...) give single-flight background jobs.

A waiter waits in the kernel's queue where there is one (POSIX: served in turn, never
overtaken again and again by busy neighbours, 16 hooks at once), in a thread bounded by
:mod:`memkeeper.core.basics.waits`; elsewhere it polls. ``filelock`` was measured for this and
not taken (docs/platform.md): it polls, opens through links, and costs the hook ~90 ms
of imports.
"""

from __future__ import annotations

import os
import time

from ..basics import platform
from ..basics.platform import StrPath

platform.queued_lock_wait()  # the lock primitive loads with this module, not at the first lock


class LockTimeout(TimeoutError):
    """The lock was held by another process for longer than we were willing to wait."""


def _open_lock_file(path: StrPath) -> int:
    from .atomic import open_no_follow
    from .boundary import check_path

    check_path(path)  # never create a folder, or a lock file, through a link in the store
    folder = os.path.dirname(os.fspath(path))
    if folder:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    return open_no_follow(path, os.O_RDWR | os.O_CREAT, 0o600)


def _wait_queued(fd: int, timeout: float) -> bool:
    """Wait in the kernel's queue for ``fd``'s lock, at most ``timeout``; True once locked.

    The wait blocks in a thread on a duplicate of ``fd`` (made here, before the thread runs),
    which the thread closes once the wait ends. The lock belongs to the open file both
    descriptors share: it stays with ``fd`` when the wait ends in time, and when the waiter
    gave up (``fd`` closed) closing the duplicate lets go of a lock that came too late. The
    duplicate is the thread's alone, so no descriptor number is ever used after its close.
    """
    from ..basics.waits import Bounded

    waiting = os.dup(fd)

    def wait() -> None:
        try:
            platform.wait_lock(waiting)
        finally:
            os.close(waiting)

    try:
        job = Bounded(wait, "memkeeper-lock-wait")
    except BaseException:
        os.close(waiting)
        raise
    if not job.wait(timeout):
        return False
    job.result()  # (what the wait raised)
    return True


def _acquire(fd: int, path: StrPath, timeout: float) -> None:
    """Lock ``fd`` exclusively within ``timeout`` seconds; LockTimeout after that."""
    if platform.try_lock(fd):
        return
    if timeout > 0 and platform.queued_lock_wait():
        if _wait_queued(fd, timeout):
            return
        raise LockTimeout(f"{path} is held by another process")
    _acquire_polling(fd, path, timeout)


def _acquire_polling(fd: int, path: StrPath, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    poll = 0.002
    while not platform.try_lock(fd):
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


def _release(fd: int) -> None:
    """Let go of the lock ``fd`` holds and close it."""
    platform.unlock(fd)
    os.close(fd)


class _FileLock:
    __slots__ = ("fd", "path", "timeout")

    def __init__(self, path: StrPath, timeout: float) -> None:
        self.path, self.timeout, self.fd = path, timeout, -1

    def __enter__(self) -> None:
        self.fd = _open_locked(self.path, self.timeout, self.path)

    def __exit__(self, *exc: object) -> None:
        _release(self.fd)
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
            acquired = platform.try_lock(fd)
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
            _release(self.fd)
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
                _release(held.fd)
                held.fd = -1
        finally:
            held.thread_lock.release()


def reentrant_lock(path: StrPath, timeout: float = 30.0) -> _ReentrantLock:
    """Like :func:`file_lock`, but a thread that holds it may take it again.

    Two locks on two descriptors of one file block each other even inside one process, so nested store operations (rotation updating the index) share one hold.
    """
    return _ReentrantLock(path, timeout)
