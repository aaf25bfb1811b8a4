"""Running a summarizer subprocess: argv list, prompt on stdin, hard timeout.

The child is detached from us (its own session or process group) and its whole process
tree is ended when the call ends (:func:`memkeeper.core.store.jobs.end_tree`): a wrapper script's
own children, and a grandchild that moved to a session of its own, included. The pipes
are fed and read by threads (:mod:`memkeeper.core.basics.waits`): ``select`` works on sockets only
on Windows.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..basics.waits import Bounded
from ..store.jobs import end_tree, start_child
from .backend import BackendError, BackendUnavailable, child_env

#: Output beyond this is cut: no summary needs more, and a runaway child must not eat memory.
MAX_OUTPUT_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class ProcessResult:
    returncode: int
    stdout: str
    stderr: str


#: After the child itself exits, output still arriving (from a grandchild that kept the
#: pipe) is read for at most this long; then the call goes on without waiting for EOF.
EXIT_GRACE_SECONDS = 0.5
STDERR_KEEP = 4096
READ_CHUNK = 1 << 16
#: How often a wait looks at the child and the deadline.
TICK_SECONDS = 0.05


def _own(stream: IO[bytes] | None) -> int:
    """A descriptor of ``stream``'s pipe for a thread to own alone (``stream`` itself closed):
    closing it later never races a read or write blocked in the thread."""
    assert stream is not None
    fd = os.dup(stream.fileno())
    stream.close()
    return fd


def feed(stream: IO[bytes] | None, data: bytes) -> Bounded:
    """Write ``data`` to the child's stdin in a thread, then close it (EOF for the child)."""
    fd = _own(stream)

    def write() -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view[:READ_CHUNK]) :]
        except OSError:
            pass  # the child exited without reading its prompt: its output says why
        finally:
            os.close(fd)

    return Bounded(write, "memkeeper-feed")


def drain(stream: IO[bytes] | None, keep: Callable[[bytes], None]) -> Bounded:
    """Read the child's ``stream`` in a thread until EOF, handing every chunk to ``keep``."""
    fd = _own(stream)

    def read() -> None:
        try:
            while chunk := os.read(fd, READ_CHUNK):
                keep(chunk)
        except OSError:
            pass
        finally:
            os.close(fd)

    return Bounded(read, "memkeeper-drain")


def capped(into: bytearray, limit: int) -> Callable[[bytes], None]:
    """Keep chunks in ``into`` up to ``limit`` bytes; past it the rest is read and dropped."""

    def keep(chunk: bytes) -> None:
        room = limit - len(into)
        if room > 0:
            into.extend(chunk[:room])

    return keep


def tail(into: bytearray, last: int = STDERR_KEEP) -> Callable[[bytes], None]:
    """Keep the last ``last`` bytes (about) in ``into``."""

    def keep(chunk: bytes) -> None:
        into.extend(chunk)
        if len(into) > 2 * last:
            del into[:-last]

    return keep


def wait_output(proc: subprocess.Popen[bytes], readers: list[Bounded], deadline: Callable[[], float]) -> bool:
    """Wait until every reader reached EOF; False if ``deadline()`` (a monotonic time, looked
    at each tick) came first. Never waits past the child's own exit plus
    :data:`EXIT_GRACE_SECONDS`: a grandchild in a session of its own may keep a pipe forever."""
    exited_at: float | None = None
    for reader in readers:
        while not reader.wait(0):
            now = time.monotonic()
            remaining = deadline() - now
            if remaining <= 0:
                return False
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE_SECONDS:
                return True
            reader.wait(min(remaining, TICK_SECONDS))
    return True


def run_with_timeout(
    argv: list[str], stdin_text: str, timeout: float, cwd: Path | None = None
) -> ProcessResult:
    """Run ``argv`` with ``stdin_text`` on stdin; BackendError if it cannot start or times out.

    Ends within ``timeout`` whatever the child and its children do: at the deadline (or
    once the child has exited, past a short grace) its whole process tree is ended, with
    no wait for EOF; stdout is read in chunks and kept up to :data:`MAX_OUTPUT_BYTES`,
    stderr's last 4 KB.
    """
    label = os.path.basename(argv[0]) if argv else "(empty command)"
    if not argv:
        raise BackendUnavailable("the summarizer command is empty")
    deadline = time.monotonic() + timeout
    try:
        proc = start_child(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=child_env(),
        )
    except OSError as exc:
        raise BackendUnavailable(f"cannot run {label}: {exc.strerror or exc}") from None
    out, err = bytearray(), bytearray()
    try:
        feed(proc.stdin, stdin_text.encode("utf-8", "replace"))
        readers = [drain(proc.stdout, capped(out, MAX_OUTPUT_BYTES)), drain(proc.stderr, tail(err))]
        finished = wait_output(proc, readers, lambda: deadline) and wait_for(
            proc, deadline - time.monotonic()
        )
    finally:
        end_tree(proc)  # whatever happened, nothing of the child's tree outlives the call
    if not finished:
        raise BackendError(f"{label} did not answer within {timeout:g} s (killed)")
    return ProcessResult(
        proc.returncode,
        bytes(out).decode("utf-8", "replace"),
        bytes(err[-STDERR_KEEP:]).decode("utf-8", "replace"),
    )


def wait_for(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    """Wait for the child itself at most ``seconds``; False if it is still running then."""
    try:
        proc.wait(timeout=max(0.0, seconds))
    except subprocess.TimeoutExpired:
        return False
    return True


def last_line(text: str, limit: int = 300) -> str:
    """The last non-empty line of ``text``, cut to ``limit`` characters (for one-line errors)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""
