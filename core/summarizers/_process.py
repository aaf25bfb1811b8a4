"""Running a summarizer subprocess: argv list, prompt on stdin, hard timeout.

The child runs in its own session so a timeout can kill its whole process group
(a wrapper script's own children included) and never leaves anything running.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memkeeper.core.summarizers import BackendError, BackendUnavailable, child_env

#: Output beyond this is cut: no summary needs more, and a runaway child must not eat memory.
MAX_OUTPUT_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class ProcessResult:
    returncode: int
    stdout: str
    stderr: str


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass


def run_with_timeout(
    argv: list[str], stdin_text: str, timeout: float, cwd: Path | None = None
) -> ProcessResult:
    """Run ``argv`` with ``stdin_text`` on stdin; BackendError if it cannot start or times out."""
    label = os.path.basename(argv[0]) if argv else "(empty command)"
    if not argv:
        raise BackendUnavailable("the summarizer command is empty")
    try:
        proc = subprocess.Popen(  # noqa: S603 - argv list, no shell
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=child_env(),
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise BackendUnavailable(f"cannot run {label}: {exc.strerror or exc}") from None
    try:
        out, err = proc.communicate(stdin_text.encode("utf-8", "replace"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise BackendError(f"{label} did not answer within {timeout:g} s (killed)") from None
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        # A child that exited but left grandchildren holding nothing we wait on: kill them too.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return ProcessResult(
        proc.returncode,
        out[:MAX_OUTPUT_BYTES].decode("utf-8", "replace"),
        err[-4096:].decode("utf-8", "replace"),
    )


def last_line(text: str, limit: int = 300) -> str:
    """The last non-empty line of ``text``, cut to ``limit`` characters (for one-line errors)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""
