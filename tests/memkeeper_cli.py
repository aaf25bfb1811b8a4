"""``memkeeper`` run as a user runs it: a child process of this Python, with ``-P``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_memkeeper(
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """``memkeeper ARGS`` (text in and out; ``env`` defaults to this process's)."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", *args],
        input=stdin,
        env=dict(os.environ) if env is None else env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
