"""``memkeeper`` run as a user runs it: a child process of this Python, with ``-P``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
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


PLUGIN = Path(__file__).resolve().parents[1] / "plugin"


def run_hook(
    event: str, payload: Mapping[str, object], timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    """The hook ``event`` run as Claude Code runs it from a checkout (its hooks.json command), in
    the payload's ``cwd`` when that folder exists (Claude Code runs a hook in the session's folder)."""
    from tests.functional.plugin.capture_helpers import hook_command

    cwd = payload.get("cwd")
    return subprocess.run(
        hook_command(PLUGIN, event),
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None,
        env={k: v for k, v in os.environ.items() if k != "MEMKEEPER_PYTHON"},
        timeout=timeout,
    )
