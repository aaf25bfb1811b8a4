"""The one place that asks which operating system this is.

Every ``os.name`` / ``sys.platform`` branch and every probe of a POSIX-only facility
(``fcntl``, ``os.pread``, ``O_NOFOLLOW``, SIGKILL, SIGHUP ...) lives here, each branch a few
lines; the rest of memkeeper calls these functions and is portable by construction.

Two kinds of decision, on purpose:

- **By capability** where the portable branch also runs on Linux: file locks (``fcntl``
  if it imports, else ``msvcrt``), reads at an offset (``os.pread`` or seek + read), reading
  a pipe without waiting (``os.set_blocking``, on Windows from Python 3.12), opening without
  following a link (``O_NOFOLLOW`` or lstat + compare after open), SIGKILL and SIGHUP. A simulated foreign platform (``tests/foreign/``: those facilities removed) runs
  the Windows-side branches on Linux.
- **By** ``os.name`` where the other branch can only run on that system: Popen's
  ``creationflags`` (refused by Python on POSIX) and whether files have permission modes.

Stdlib ``os`` only at import: the hook path imports this module.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable

#: A path as the standard library takes it. The hook path's modules (this one among them) name
#: their types without importing ``typing`` (docs/hook-path.md): plain aliases, ``object``,
#: ``collections.abc`` and ``types``.
StrPath = str | os.PathLike[str]

#: POSIX systems have permission modes (0600/0700); on Windows only a read-only bit.
HAS_FILE_MODES = os.name == "posix"

# --- file locks: one exclusive lock per open file, dropped by the OS when the holder dies

_fcntl: types.ModuleType | bool | None = None  # the module once looked for; False where it does not exist


def _flock() -> types.ModuleType | None:
    """``fcntl`` where it exists (POSIX), else None (Windows, the simulated foreign platform);
    imported at first use: a count that only appends to its log never takes a lock."""
    global _fcntl
    if _fcntl is None:
        try:
            import fcntl

            _fcntl = fcntl
        except ImportError:
            _fcntl = False
    return _fcntl if isinstance(_fcntl, types.ModuleType) else None


def queued_lock_wait() -> bool:
    """True where :func:`wait_lock` waits in the kernel's queue (served in turn); elsewhere
    a waiter polls :func:`try_lock`."""
    return _flock() is not None


def try_lock(fd: int) -> bool:
    """Lock the open file ``fd`` exclusively if nobody holds it; False when another holder does.

    POSIX: ``flock`` (per open file description, released when its last descriptor closes).
    Windows: ``msvcrt.locking`` of the first byte (per handle, released when it closes).
    """
    fcntl = _flock()
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        except PermissionError:  # EACCES: some systems say "held" this way
            return False
    import msvcrt

    os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks from the current position
    try:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined,unused-ignore]
        return True
    except OSError:
        return False


def wait_lock(fd: int) -> None:
    """Block until ``fd`` is locked, in the kernel's queue (only where :func:`queued_lock_wait`)."""
    fcntl = _flock()
    if fcntl is None:
        raise NotImplementedError("no queued lock wait here: poll try_lock")
    fcntl.flock(fd, fcntl.LOCK_EX)


def unlock(fd: int) -> None:
    """Release ``fd``'s lock before it is closed (POSIX: closing does it; Windows: say so first)."""
    if _flock() is not None:
        return
    import msvcrt

    try:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined,unused-ignore]
    except OSError:
        pass  # not locked (or already closed): closing releases it anyway


# --- files


def read_at(fd: int, size: int, offset: int) -> bytes:
    """Up to ``size`` bytes of ``fd`` from ``offset`` (``pread``; elsewhere seek + read, which
    moves the file position: callers never share such a descriptor between threads)."""
    pread = getattr(os, "pread", None)
    if pread is not None:
        data: bytes = pread(fd, size, offset)
        return data
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


def read_now(fd: int, limit: int) -> tuple[list[bytes], bool] | None:
    """What ``fd`` holds now, read without waiting (up to ``limit`` bytes), and whether its end
    came (EOF, the limit or an error); None where a pipe cannot be read without waiting
    (``os.set_blocking`` is missing: Windows before Python 3.12)."""
    set_blocking = getattr(os, "set_blocking", None)
    if set_blocking is None:
        return None
    try:
        was = os.get_blocking(fd)
        set_blocking(fd, False)
    except OSError:
        return None
    chunks: list[bytes] = []
    size = 0
    try:
        while size < limit:
            data = os.read(fd, 1 << 16)
            if not data:
                break
            chunks.append(data)
            size += len(data)
    except BlockingIOError:
        return chunks, False  # the writer has not finished (or not closed) yet
    except OSError:
        pass
    finally:
        try:
            set_blocking(fd, was)
        except OSError:
            pass
    return chunks, True


_O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_O_BINARY: int = getattr(os, "O_BINARY", 0)  # Windows: no newline translation


def open_no_follow(path: StrPath, flags: int, mode: int = 0o600) -> int:
    """``os.open`` that refuses a symbolic link at ``path`` (OSError ELOOP).

    With ``O_NOFOLLOW`` the kernel refuses it. Without: a new file (``O_CREAT | O_EXCL``)
    never goes through a link; otherwise ``lstat`` before (a link is refused before it is
    opened, so ``O_TRUNC`` never reaches its target) and after the open, the file opened
    compared with the one at the path (device and inode). A link there now is refused; another
    file there (renamed in meanwhile: the counters' log is, by design) means opening again,
    a few times, then refusing.
    """
    target = os.fspath(path)
    flags |= _O_CLOEXEC | _O_BINARY
    if _O_NOFOLLOW:
        return os.open(target, flags | _O_NOFOLLOW, mode)
    new_file = os.O_CREAT | os.O_EXCL
    if flags & new_file == new_file:
        return os.open(target, flags, mode)
    import stat

    for _attempt in range(3):
        before = _lstat(target)
        if before is not None and stat.S_ISLNK(before.st_mode):
            raise _link_error(target)
        fd = os.open(target, flags, mode)
        try:
            opened, here = os.fstat(fd), _lstat(target)
        except BaseException:
            os.close(fd)
            raise
        if here is not None and (here.st_dev, here.st_ino) == (opened.st_dev, opened.st_ino):
            return fd
        os.close(fd)
        if here is not None and stat.S_ISLNK(here.st_mode):
            break
    raise _link_error(target)


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _link_error(path: str) -> OSError:
    import errno

    return OSError(errno.ELOOP, "a symbolic link, not followed", path)


# --- processes


def detached_popen_options() -> tuple[bool, int]:
    """Popen's ``start_new_session`` and ``creationflags`` for a child detached from us: its own
    session (POSIX) or its own process group with no console (Windows), so it outlives the hook
    that started it and Claude Code closing the hook's console or group does not end it."""
    if os.name == "nt":
        import subprocess

        flags = (
            subprocess.DETACHED_PROCESS  # type: ignore[attr-defined,unused-ignore]
            | subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined,unused-ignore]
            | subprocess.CREATE_NO_WINDOW  # type: ignore[attr-defined,unused-ignore]
        )
        return False, flags
    return True, 0


def kill(process: object) -> None:
    """End ``process`` (a ``subprocess.Popen`` or ``psutil.Process``) at once: ``kill()``
    (SIGKILL) where there is SIGKILL, else ``terminate()`` (Windows: TerminateProcess, the same)."""
    import signal

    getattr(process, "kill" if getattr(signal, "SIGKILL", None) is not None else "terminate")()


def die_now() -> None:
    """End this process at once, as a crash would: no cleanup, no ``finally``, no flush.

    SIGKILL where it exists; elsewhere ``os._exit`` (which skips the same things)."""
    import signal

    kill = getattr(signal, "SIGKILL", None)
    if kill is not None:
        os.kill(os.getpid(), kill)
    os._exit(137)


def on_hangup(handler: Callable[[int, types.FrameType | None], None]) -> bool:
    """Call ``handler`` when the terminal closes (SIGHUP); False where there is no such signal."""
    import signal

    hangup = getattr(signal, "SIGHUP", None)
    if hangup is None:
        return False
    signal.signal(hangup, handler)
    return True


def free_bytes(path: StrPath) -> int:
    """The space free for this user on the disk holding ``path``, as ``shutil.disk_usage(path).free``
    gives it: from ``os.statvfs`` where the system has it, without importing ``shutil`` (3-4 ms
    of SessionStart's CPU, with the compression modules it imports); OSError when it cannot tell."""
    statvfs = getattr(os, "statvfs", None)
    if statvfs is None:
        import shutil

        return shutil.disk_usage(path).free
    info = statvfs(path)
    return int(info.f_bavail * info.f_frsize)


def owned_by_me(info: os.stat_result) -> bool:
    """True when the current user owns the file ``info`` describes (always, where files have no POSIX owner)."""
    return os.name != "posix" or info.st_uid == os.geteuid()


def user_and_machine() -> str:
    """Who and where: the user's id and the machine's name (``uid@host`` on POSIX)."""
    if os.name == "posix":
        return f"{os.geteuid()}@{os.uname().nodename}"
    return f"{os.environ.get('USERNAME', '')}@{os.environ.get('COMPUTERNAME', '')}"


def private_to_me(info: os.stat_result) -> bool:
    """True when the file ``info`` describes is the current user's and no one else's (owner
    and mode, where the OS has them; on Windows the per-user folder is the guard)."""
    if os.name != "posix":
        return True
    return info.st_uid == os.geteuid() and not info.st_mode & 0o077


def user_runtime_base() -> str:
    """The user's folder for runtime files (sockets, a server's secret), as ``platformdirs``'
    ``user_runtime_dir`` places it, without importing it (its import costs the prompt hook ~10 ms):
    ``$XDG_RUNTIME_DIR`` when set; on macOS ``~/Library/Caches/TemporaryItems``; on Windows
    ``%LOCALAPPDATA%\\Temp``; elsewhere ``/run/user/UID`` (``/var/run/user/UID`` on the BSDs) when it
    exists, else ``$TMPDIR/runtime-UID``. The caller checks that what it gets is private."""
    import sys

    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(xdg):
        return xdg
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
        return os.path.join(local, "Temp")
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~"), "Library", "Caches", "TemporaryItems")
    uid = os.getuid() if hasattr(os, "getuid") else 0
    run = "/var/run/user" if sys.platform.startswith(("freebsd", "openbsd", "netbsd")) else "/run/user"
    if os.path.isdir(os.path.join(run, str(uid))):
        return os.path.join(run, str(uid))
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"runtime-{uid}")
