"""Atomic file writes: a reader never sees half a file.

Every state file is written to a temp file in the same folder, fsynced, then renamed
over the target. Appends are whole chunks written with ``O_APPEND``. Files are 0600.
Paths may be ``str`` or ``Path``; this module imports neither pathlib nor json up front
because the hook path uses it.
"""

from __future__ import annotations

import itertools
import os

TYPE_CHECKING = False  # no typing import at run time (hook path)
if TYPE_CHECKING:
    from typing import Any

    StrPath = str | os.PathLike[str]

FILE_MODE = 0o600
_serial = itertools.count()


def _temp_file(path: str, mode: int) -> tuple[int, str]:
    """A new private file next to ``path`` (what tempfile.mkstemp does, without its import cost)."""
    folder, name = os.path.split(path)
    while True:
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.{next(_serial)}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode), tmp
        except FileExistsError:
            continue


def atomic_write_bytes(path: StrPath, data: bytes, mode: int = FILE_MODE, durable: bool = True) -> None:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename).

    ``durable=False`` skips the two fsyncs (several ms each on some file systems): still
    all-or-nothing for readers, but a power cut may lose the write. Only for state whose
    loss is harmless, such as the hook counters.
    """
    target = os.fspath(path)
    fd, tmp = _temp_file(target, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        _fsync_dir(os.path.dirname(target) or ".")


def atomic_write_text(path: StrPath, text: str, mode: int = FILE_MODE, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode, durable)


def dumps_js(obj: Any) -> str:
    """JSON as the JS plugin writes it: ``JSON.stringify(obj, null, 2)``, no trailing newline."""
    import json

    return json.dumps(obj, indent=2, ensure_ascii=False)


def atomic_write_json(path: StrPath, obj: Any, mode: int = FILE_MODE, durable: bool = True) -> None:
    atomic_write_text(path, dumps_js(obj), mode, durable)


def append_bytes(path: StrPath, data: bytes, mode: int = FILE_MODE) -> None:
    """Append ``data`` with O_APPEND, creating the file 0600 if needed; all or nothing.

    A write that fails part way (disk full, file-size limit) is undone by truncating the
    file back to where our append started, so no torn line stays behind; that is skipped
    if someone else appended after us in the meantime (their bytes are never cut).
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
    try:
        view = memoryview(data)
        start = -1
        done = 0
        try:
            while view:
                written = os.write(fd, view)
                if start < 0:
                    # O_APPEND wrote at the end: our bytes began ``written`` before it.
                    start = os.lseek(fd, 0, os.SEEK_CUR) - written
                done += written
                view = view[written:]
        except OSError:
            if done and start >= 0 and os.fstat(fd).st_size == start + done:
                os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)


def append_text(path: StrPath, text: str, mode: int = FILE_MODE) -> None:
    append_bytes(path, text.encode("utf-8"), mode)


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
