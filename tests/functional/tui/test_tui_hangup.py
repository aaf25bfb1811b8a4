"""Closing the terminal of ``memkeeper-tui --demo`` removes the demo store (SIGHUP, real process)."""

from __future__ import annotations

import os
import pty
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from memkeeper.tui.launch import remove_demo


def _program() -> list[str]:
    script = Path(sys.executable).with_name("memkeeper-tui")
    return [str(script)] if script.exists() else [sys.executable, "-P", "-m", "memkeeper.tui.launch"]


def _wait_for(predicate: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _demo_folders(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("memkeeper-demo-*"))


def _painted(tmp: Path) -> bool:
    """The demo store is made and the app is up (its store holds the generated sessions)."""
    folders = _demo_folders(tmp)
    return bool(folders) and any(folders[0].glob("ledgerline/.claude/memory/sessions/*.l1.jsonl"))


def test_sighup_to_the_demo_process_removes_the_demo_store(tmp_path: Path) -> None:
    env = dict(
        os.environ, HOME=str(tmp_path), TMPDIR=str(tmp_path), MEMKEEPER_NO_JOBS="1", TERM="xterm-256color"
    )
    pid, master = pty.fork()
    if pid == 0:  # the child: a session leader on its own terminal, as in a terminal window
        os.execvpe(_program()[0], [*_program(), "--demo", "--no-watch"], env)
    output = bytearray()
    try:

        def drawn() -> bool:
            try:
                output.extend(os.read(master, 65536))
            except OSError:
                return False
            return b"L1 sessions" in output or b"memory.md" in output

        _wait_for(drawn, "the first paint")
        assert _painted(tmp_path)
        os.kill(pid, signal.SIGHUP)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGHUP
        assert _demo_folders(tmp_path) == []
    finally:
        os.close(master)
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def test_the_demo_folder_is_removed_while_a_worker_still_writes_into_it(tmp_path: Path) -> None:
    """A worker thread of the app (the index, the activity readings) may make a file after ``rmtree``
    listed its folder; the folder must still go (CI once found a hung-up demo's folder left behind)."""
    folder = tmp_path / "memkeeper-demo-x"
    state = folder / "ledgerline" / ".claude" / "memory" / ".state"
    state.mkdir(parents=True)
    for n in range(200):
        (state / f"old-{n}").write_text("x")
    made = 0
    stop = threading.Event()

    def worker() -> None:
        nonlocal made
        while not stop.is_set():
            try:
                (state / f"new-{made}").write_text("x")
            except OSError:  # the folder is gone
                return
            made += 1

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        _wait_for(lambda: made > 50, "the worker to write")
        remove_demo(folder)
        thread.join(timeout=10)
        assert not thread.is_alive()
        assert _demo_folders(tmp_path) == []
        assert [p for p in tmp_path.iterdir() if "memkeeper-demo" in p.name] == []
    finally:
        stop.set()
        thread.join()


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_closing_the_tmux_window_removes_the_demo_store(tmp_path: Path) -> None:
    session = f"mk-hup-{uuid.uuid4().hex[:8]}"
    command = ["env", f"HOME={tmp_path}", f"TMPDIR={tmp_path}", "MEMKEEPER_NO_JOBS=1", *_program(), "--demo"]
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", *command], check=True)
    try:
        _wait_for(
            lambda: (
                "L1 sessions"
                in subprocess.run(
                    ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
                ).stdout
            ),
            "the first paint",
        )
        assert _demo_folders(tmp_path)
    finally:
        # The terminal goes away: tmux hangs up the pane's process (SIGHUP), as closing a window does.
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    _wait_for(lambda: _demo_folders(tmp_path) == [], "the demo store to be removed")
