"""Smoke test in a real terminal: tmux runs ``memkeeper-tui --demo`` at 80×24."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.tmux


def _capture(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
    ).stdout


def _wait(session: str, text: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _capture(session)
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never appeared; screen was:\n{screen}")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tmux_demo_tiers_and_search(tmp_path: Path) -> None:
    session = f"mk-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ, HOME=str(tmp_path), MEMKEEPER_NO_JOBS="1", TERM="xterm-256color")
    script = Path(sys.executable).with_name("memkeeper-tui")
    program = [str(script)] if script.exists() else [sys.executable, "-P", "-m", "memkeeper.tui.launch"]
    # env(1) passes HOME etc. even when a tmux server with another environment is running;
    # TMPDIR keeps the demo store inside tmp_path (the session is killed right after `q`).
    command = ["env", f"HOME={tmp_path}", f"TMPDIR={tmp_path}", "MEMKEEPER_NO_JOBS=1", *program, "--demo"]
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", *command], check=True, env=env
    )
    try:
        screen = _wait(session, "L1 sessions")
        assert "L2 memory" in screen and "L3 summaries" in screen
        subprocess.run(["tmux", "send-keys", "-t", session, "/"], check=True)
        _wait(session, "tier: all")
        subprocess.run(["tmux", "send-keys", "-t", session, "-l", "webhook"], check=True)
        screen = _wait(session, "hits")
        assert "memory (current)" in screen or "L2 archives" in screen or "L1 sessions" in screen
        assert "webhook" in screen.lower()
        subprocess.run(["tmux", "send-keys", "-t", session, "Escape"], check=True)
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
