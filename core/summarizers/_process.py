"""Running a summarizer subprocess: argv list, prompt on stdin, hard timeout.

The child runs in its own session so a timeout can kill its whole process group
(a wrapper script's own children included) and never leaves anything running.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from memkeeper.core.jobs import start_child
from memkeeper.core.summarizers import BackendError, BackendUnavailable, child_env

#: Output beyond this is cut: no summary needs more, and a runaway child must not eat memory.
MAX_OUTPUT_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class ProcessResult:
    returncode: int
    stdout: str
    stderr: str


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child and everything in its process group (it was started in its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except (ProcessLookupError, OSError):
        pass


#: After the child itself exits, output still arriving (from a grandchild that kept the
#: pipe) is read for at most this long; then the pipes are closed without waiting for EOF.
EXIT_GRACE_SECONDS = 0.5
STDERR_KEEP = 4096
READ_CHUNK = 1 << 16


class _Pipes:
    """The child's stdin, stdout and stderr, pumped with one selector until a deadline."""

    def __init__(self, proc: subprocess.Popen[bytes], data: bytes) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.out = bytearray()
        self.err = bytearray()
        self.data = memoryview(data)
        self.sel = selectors.DefaultSelector()
        self.stdin, self.stdout, self.stderr = proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()
        os.set_blocking(self.stdin, False)
        self.sel.register(self.stdin, selectors.EVENT_WRITE)
        self.sel.register(self.stdout, selectors.EVENT_READ)
        self.sel.register(self.stderr, selectors.EVENT_READ)

    def _done_with(self, fd: int) -> None:
        self.sel.unregister(fd)
        if fd == self.stdin:
            self.proc.stdin.close()  # type: ignore[union-attr]  # EOF for the child

    def _write(self) -> None:
        try:
            written = os.write(self.stdin, self.data[: 1 << 16])
        except BlockingIOError:
            return
        except (BrokenPipeError, OSError):
            self._done_with(self.stdin)
            return
        self.data = self.data[written:]
        if not self.data:
            self._done_with(self.stdin)

    def _read(self, fd: int) -> None:
        chunk = os.read(fd, READ_CHUNK)
        if not chunk:
            self._done_with(fd)
        elif fd == self.stdout:
            room = MAX_OUTPUT_BYTES - len(self.out)
            if room > 0:  # past the cap the rest is read and dropped: memory stays bounded
                self.out += chunk[:room]
        else:
            self.err += chunk
            if len(self.err) > 2 * STDERR_KEEP:
                del self.err[:-STDERR_KEEP]

    def pump(self, deadline: float) -> bool:
        """Move data until both outputs reach EOF; False if ``deadline`` came first.

        Never waits for EOF past the child's own exit plus a short grace: a grandchild in a
        session of its own may keep the pipe open forever.
        """
        exited_at: float | None = None
        if not self.data:
            self._done_with(self.stdin)
        while self.sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                return False
            if exited_at is None and self.proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE_SECONDS:
                break
            for key, _events in self.sel.select(timeout=min(deadline - now, 0.1)):
                if key.fd == self.stdin:
                    self._write()
                else:
                    self._read(key.fd)
        return True

    def close(self) -> None:
        self.sel.close()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass


def run_with_timeout(
    argv: list[str], stdin_text: str, timeout: float, cwd: Path | None = None
) -> ProcessResult:
    """Run ``argv`` with ``stdin_text`` on stdin; BackendError if it cannot start or times out.

    Ends within ``timeout`` whatever the child and its children do: at the deadline the
    process group is killed and the pipes closed (no wait for EOF); stdout is read in
    chunks and kept up to :data:`MAX_OUTPUT_BYTES`, stderr's last 4 KB.
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
    pipes = _Pipes(proc, stdin_text.encode("utf-8", "replace"))
    try:
        finished = pipes.pump(deadline) and wait_for(proc, deadline - time.monotonic())
    finally:
        # Whatever happened, nothing of the group outlives the call.
        kill_group(proc)
        pipes.close()
        proc.wait()
    if not finished:
        raise BackendError(f"{label} did not answer within {timeout:g} s (killed)")
    return ProcessResult(
        proc.returncode,
        bytes(pipes.out).decode("utf-8", "replace"),
        bytes(pipes.err[-STDERR_KEEP:]).decode("utf-8", "replace"),
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
