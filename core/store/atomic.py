"""The store's one writer: atomic, private, redacted, and never through a link.

Every file of the store, whatever its tier, is written here:

- **atomic**: written to a temp file in the same folder, fsynced, then renamed over the
  target; appends are whole chunks written with ``O_APPEND``. Files are 0600;
- **redacted**: what is written goes through :func:`memkeeper.core.redaction.redact.redact` first
  (private spans and secrets). JSON is redacted as an object (string values, before it is
  serialised, so an escape is never cut); a ``.jsonl`` append line by line the same way;
  anything else as UTF-8 text. Redacting is idempotent, so text redacted earlier (L1
  fields, cut to length after redaction) comes out unchanged. ``redact=False`` is only
  for state that holds no text of the user's (the hook counters);
- **never through a link**: :func:`memkeeper.core.store.boundary.check_path` refuses a path
  with a symbolic link from the store root down, and files are opened refusing a link.

Paths may be ``str`` or ``Path``; this module imports neither pathlib nor json up front
because the hook path uses it (privacy is imported when there is something to redact).
"""

from __future__ import annotations

import io
import os

from ..basics import platform
from ..basics.platform import StrPath
from .boundary import check_path
from .boundary import open_no_follow as open_no_follow  # re-exported for the writers

FILE_MODE = 0o600


def _temp_file(path: str, mode: int) -> tuple[int, str]:
    """A new private file next to ``path`` (what tempfile.mkstemp does, without its import cost)."""
    folder, name = os.path.split(path)
    while True:
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
        try:
            return platform.open_no_follow(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), tmp
        except FileExistsError:
            continue


def redact_bytes(path: StrPath, data: bytes) -> bytes:
    """``data`` as it may be stored at ``path``: redacted by the kind of file (see above)."""
    if not data:
        return data
    from ..redaction.redact import redact

    name = os.fspath(path)
    if name.endswith(".json"):
        return _redact_json(data, whole=True)
    if name.endswith(".jsonl"):
        return _redact_json(data, whole=False)
    text = data.decode("utf-8", "surrogateescape")
    redacted = redact(text)
    return data if redacted == text else redacted.encode("utf-8", "surrogateescape")


def _redact_json(data: bytes, whole: bool) -> bytes:
    """JSON (``whole``) or JSON lines redacted value by value; a part that does not parse
    is redacted as text (it is not JSON anyone could read back anyway)."""
    import json

    from ..redaction.redact import redact, redact_obj

    if whole:
        parts = [data]
    else:
        parts = data.splitlines(keepends=True)
    out: list[bytes] = []
    for part in parts:
        text = part.decode("utf-8", "surrogateescape")
        body = text.rstrip("\r\n")
        try:
            obj = json.loads(body) if body.strip() else None
        except ValueError:
            redacted = redact(text)
        else:
            clean = redact_obj(obj)
            if clean == obj:
                out.append(part)
                continue
            if whole:
                redacted = dumps_js(clean)
            else:
                redacted = json.dumps(clean, ensure_ascii=False, separators=(",", ":")) + text[len(body) :]
        out.append(redacted.encode("utf-8", "surrogateescape"))
    return b"".join(out)


def atomic_write_bytes(
    path: StrPath, data: bytes, mode: int = FILE_MODE, durable: bool = True, redact: bool = True
) -> None:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename), redacted.

    ``durable=False`` skips the two fsyncs (several ms each on some file systems): still
    all-or-nothing for readers, but a power cut may lose the write. Only for state whose
    loss is harmless, such as the hook counters. Raises StoreLinkError for a link.
    """
    target = os.fspath(path)
    check_path(target)
    if redact:
        data = redact_bytes(target, data)
    _write_bytes(target, data, mode, durable)


def _write_bytes(target: str, data: bytes, mode: int, durable: bool) -> None:
    fd, tmp = _temp_file(target, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.chmod(tmp, mode)  # the file we made (O_EXCL: a link there would have been refused)
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        _fsync_dir(os.path.dirname(target) or ".")


def atomic_write_text(
    path: StrPath, text: str, mode: int = FILE_MODE, durable: bool = True, redact: bool = True
) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode, durable, redact)


def dumps_js(obj: object) -> str:
    """JSON as the JS plugin writes it: ``JSON.stringify(obj, null, 2)``, no trailing newline."""
    import json

    return json.dumps(obj, indent=2, ensure_ascii=False)


def atomic_write_json(
    path: StrPath, obj: object, mode: int = FILE_MODE, durable: bool = True, redact: bool = True
) -> None:
    target = os.fspath(path)
    check_path(target)
    if redact:
        from ..redaction.redact import redact_obj

        obj = redact_obj(obj)
    _write_bytes(target, dumps_js(obj).encode("utf-8"), mode, durable)


def append_bytes(path: StrPath, data: bytes, mode: int = FILE_MODE, redact: bool = True) -> None:
    """Append ``data`` (redacted) with O_APPEND, creating the file 0600 if needed; all or nothing.

    A write that fails part way (disk full, file-size limit) is undone by truncating the
    file back to where our append started, so no torn line stays behind; that is skipped
    if someone else appended after us in the meantime (their bytes are never cut).
    """
    target = os.fspath(path)
    check_path(target)
    if redact:
        data = redact_bytes(target, data)
    fd = open_no_follow(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
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


def append_text(path: StrPath, text: str, mode: int = FILE_MODE, redact: bool = True) -> None:
    append_bytes(path, text.encode("utf-8"), mode, redact)


def open_read(path: StrPath) -> io.BufferedReader:
    """A file of the store opened for reading, never through a link: StoreLinkError names one met
    at the file or a folder above it (so a reader needs no listing of the store beforehand)."""
    return os.fdopen(open_no_follow(path, os.O_RDONLY), "rb")


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
