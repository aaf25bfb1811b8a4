"""The store lock: one ``flock`` around every read-modify-write of the store.

``flock`` locks belong to an open file description, so the kernel drops them when a
process dies, even under SIGKILL: a killed process can never leave the store stuck.
Named locks (``jobs.flush``, ``jobs.summary`` ...) give single-flight background jobs.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time (hook path)
if TYPE_CHECKING:
    from collections.abc import Iterator


class LockTimeout(TimeoutError):
    """The lock was held by another process for longer than we were willing to wait."""


def _open_lock_file(path: Path) -> int:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def _acquire(fd: int, path: Path, timeout: float) -> None:
    """flock ``fd`` exclusively, polling until ``timeout``; LockTimeout after that."""
    deadline = time.monotonic() + timeout
    poll = 0.002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            if time.monotonic() >= deadline:
                raise LockTimeout(f"{path} is held by another process") from None
            time.sleep(poll)
            poll = min(poll * 2, 0.05)


@contextmanager
def file_lock(path: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created 0600), waiting up to ``timeout`` seconds."""
    fd = _open_lock_file(path)
    try:
        _acquire(fd, path, timeout)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextmanager
def try_lock(path: Path) -> Iterator[bool]:
    """Take ``path`` without waiting; yields False (and holds nothing) if it is taken."""
    fd = _open_lock_file(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            yield False
            return
        yield True
    finally:
        os.close(fd)


def is_locked(path: Path) -> bool:
    """True if another process holds ``path`` right now (False if it does not exist)."""
    if not path.exists():
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


@contextmanager
def reentrant_lock(path: Path, timeout: float = 30.0) -> Iterator[None]:
    """Like :func:`file_lock`, but a thread that holds it may take it again.

    Two ``flock`` calls on two descriptors of one file block each other even inside one
    process, so nested store operations (rotation updating the index) share one hold.
    """
    key = os.path.abspath(path)
    held = _held.setdefault(key, _Held())
    if not held.thread_lock.acquire(timeout=timeout):
        raise LockTimeout(f"{path} is held by another thread")
    try:
        if held.depth == 0:
            fd = _open_lock_file(Path(key))
            try:
                _acquire(fd, path, timeout)
            except BaseException:
                os.close(fd)
                raise
            held.fd = fd
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0:
                os.close(held.fd)
                held.fd = -1
    finally:
        held.thread_lock.release()
