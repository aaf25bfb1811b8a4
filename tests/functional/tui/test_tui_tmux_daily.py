"""The daily flow in a real terminal (tmux): search a question, open a hit, Esc back to the same
results, copy a resume command (the OSC 52 sequence seen by the terminal), open $EDITOR and return.

tmux runs on a private socket with ``set-clipboard on``: an application's OSC 52 becomes a tmux
paste buffer, and ``pipe-pane`` records the raw bytes the TUI wrote.
"""

from __future__ import annotations

import base64
import shutil
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.functional.tui.scenes import build_store

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


class Tmux:
    """One tmux server on its own socket, one window running the TUI."""

    def __init__(self, socket: str, session: str) -> None:
        self.socket = socket
        self.session = session

    def run(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        ).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", self.session, *(["-l"] if literal else []), *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session)

    def wait(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; screen was:\n{screen}")

    def exited(self) -> bool:
        """The TUI quit: its pane (and so the session) is gone, or shows no tree any more."""
        try:
            return "L1 sessions" not in self.screen()
        except subprocess.CalledProcessError:
            return True

    def buffer(self) -> str:
        try:
            return self.run("show-buffer")
        except subprocess.CalledProcessError:
            return ""


def _wait_for(check: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError("condition never held")


def test_search_open_back_copy_resume_and_editor_in_tmux(tmp_path: Path, home: Path) -> None:
    paths = build_store(tmp_path / "work")
    log = tmp_path / "editor.log"
    editor = tmp_path / "record-editor"
    editor.write_text(
        f"#!{sys.executable}\nimport sys\nopen({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
    )
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    raw = tmp_path / "raw.out"
    script = Path(sys.executable).with_name("memkeeper-tui")
    program = [str(script)] if script.exists() else [sys.executable, "-m", "memkeeper.tui.launch"]
    env = [
        f"HOME={home}",
        "MEMKEEPER_NO_JOBS=1",
        "TZ=UTC",
        f"EDITOR={editor}",
        "VISUAL=",
        "TERM=xterm-256color",
    ]
    tmux = Tmux(f"mk-{uuid.uuid4().hex[:8]}", "daily")
    command = ["env", *env, *program, str(paths.project), "--no-watch"]
    tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "daily", "-x", "100", "-y", "30", "sleep", "3600")
    try:
        tmux.run("set-option", "-g", "set-clipboard", "on")
        tmux.run("pipe-pane", "-o", "-t", "daily", f"cat >> {raw}")
        tmux.run("respawn-pane", "-k", "-t", "daily", *command)
        tmux.wait("L1 sessions")

        # Search a question; open a hit; Esc comes back to the same results.
        tmux.keys("/")
        tmux.wait("tier: all")
        tmux.keys("webhooks signed", literal=True)
        results = tmux.wait("hits")
        tmux.keys("Down")
        time.sleep(0.3)
        before = tmux.screen()
        tmux.keys("Enter")
        tmux.wait("[hit 2/")
        tmux.keys("Escape")
        after = tmux.wait("webhooks signed")
        assert "hits" in after and after == before, f"{results}\n---\n{after}"

        # Open the newest session from the sessions list and copy its resume command.
        tmux.keys("Escape")
        tmux.wait("L1 sessions")
        tmux.keys("S")
        tmux.wait("newest first")
        tmux.keys("Enter")
        tmux.wait("L1 · ")
        tmux.keys("R")
        _wait_for(lambda: tmux.buffer().startswith("claude --resume "))
        resume = tmux.buffer()
        session = resume.removeprefix("claude --resume ").strip()
        assert (
            session
            and session in (paths.sessions / sorted(p.name for p in paths.sessions.iterdir())[-1]).read_text()
        )
        sequence = b"\x1b]52;c;" + base64.b64encode(resume.encode())
        _wait_for(lambda: sequence in raw.read_bytes())

        # $EDITOR runs in the terminal (the app suspended) and the TUI comes back.
        tmux.keys("e")
        _wait_for(lambda: log.exists() and ".l1.jsonl" in log.read_text())
        tmux.wait("L1 · ")
        tmux.keys("q")
        _wait_for(lambda: tmux.exited())
    finally:
        subprocess.run(["tmux", "-L", tmux.socket, "kill-server"], capture_output=True)
