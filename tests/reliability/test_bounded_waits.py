"""Bounded waits and bounded memory on the hook and job paths.

Each test shows the behaviour (the hook goes on, the job ends, the input is treated as
corrupt); the timings and RSS figures are printed by ``bench/bench_waits.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from memkeeper.core.capture import transcript
from memkeeper.core.context import session_start as session_context
from memkeeper.core.store import jobs
from memkeeper.core.store.atomic import atomic_write_bytes
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.summarizers import BackendError
from memkeeper.core.summarizers import _process as process
from memkeeper.plugin import hook
from tests.lock_holder import held


def run_hook(project: Path, event: str, **fields: Any) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": "sess-1", "cwd": str(project), "hook_event_name": event, **fields}
    return subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", "hook", event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )


def log_text(store: StorePaths) -> str:
    return "".join(p.read_text("utf-8", "replace") for p in store.logs.glob("*") if p.is_file())


def counters_of(store: StorePaths) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(store.counters.read_text())
    except FileNotFoundError:
        return {"toolUses": 0}
    return data


# --------------------------------------------------------------------------- locks


def test_a_held_counters_lock_leaves_the_count_in_the_log_and_logs_it(store: StorePaths) -> None:
    from memkeeper.core.log import progress

    with held(store.state / "counters.lock"):
        done = run_hook(store.project, "PostToolUse")  # a new log: a fold is due, and waits 1 s at most
    assert done.returncode == 0 and done.stdout == ""
    assert counters_of(store)["toolUses"] == 0
    assert "counters:" in log_text(store) and "stay in counters.pending" in log_text(store)
    assert progress.read_counters(store)["toolUses"] == 1  # not lost: still in the log
    assert run_hook(store.project, "PostToolUse").returncode == 0
    assert counters_of(store)["toolUses"] == 2  # the next one folds both in
    assert counters_of(store)["sessions"]["sess-1"]["toolUses"] == 2
    assert progress.read_counters(store)["toolUses"] == 2  # nothing counted twice
    assert (store.state / "counters.pending").read_bytes().startswith(b"#fold\t")


def test_session_end_starts_its_jobs_with_the_live_sessions_lock_held(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    monkeypatch.setattr(jobs, "start_job", lambda paths, kind, options=None: started.append(kind))
    call = hook.Call({"session_id": "sess-1", "transcript_path": "/nowhere.jsonl"}, str(store.project))
    with held(store.state / "live-sessions.lock"):
        hook.on_session_end(call)
    assert started == ["l1", "flush"]
    assert "live sessions: sess-1 not noted" in log_text(store)


def test_a_held_store_lock_leaves_rotation_to_the_next_event(store: StorePaths) -> None:
    atomic_write_bytes(store.memory, b"- [x]: fact\n" * 40_000)  # over the default threshold
    before = store.memory.read_bytes()
    with held(store.lock):
        done = run_hook(store.project, "PostToolUse")
    assert done.returncode == 0
    assert store.memory.read_bytes() == before and not list(store.root.glob("memory_*.md"))


# --------------------------------------------------------------------------- summarizer


def _kill_pidfile(pidfile: Path) -> None:
    """Kill what a failed test left behind (the tests assert it is already gone)."""
    try:
        psutil.Process(int(pidfile.read_text().strip())).terminate()
    except (OSError, ValueError, psutil.Error):
        pass


def _running(pidfile: Path) -> bool:
    """The process whose pid ``pidfile`` holds is still running (a zombie is not)."""
    try:
        return bool(psutil.Process(int(pidfile.read_text().strip())).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


#: A summarizer that starts a grandchild in a session of its own holding stdout (the pipe),
#: answers, then exits ("leave") or stays silent ("stay"). Python, so it runs on every system.
LEAVER = """
import subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
with open(sys.argv[1], "w") as pidfile:
    pidfile.write(str(grandchild.pid))
sys.stdin.read()
print("- [x]: the answer", flush=True)
if sys.argv[2] == "stay":
    time.sleep(600)
"""


@pytest.fixture
def leaver(tmp_path: Path) -> Path:
    script = tmp_path / "leaver.py"
    script.write_text(LEAVER)
    return script


def test_a_setsid_grandchild_holding_stdout_does_not_hang_the_answer_and_is_ended(
    tmp_path: Path, leaver: Path
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    try:
        result = process.run_with_timeout([sys.executable, str(leaver), str(pidfile), "leave"], "prompt", 30)
        left = _running(pidfile)
    finally:
        _kill_pidfile(pidfile)
    assert result.returncode == 0 and result.stdout.strip() == "- [x]: the answer"
    assert not left


def test_a_setsid_grandchild_and_a_silent_child_end_at_the_timeout(tmp_path: Path, leaver: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    try:
        with pytest.raises(BackendError, match="did not answer within 1 s"):
            process.run_with_timeout([sys.executable, str(leaver), str(pidfile), "stay"], "prompt", timeout=1)
        left = _running(pidfile)
    finally:
        _kill_pidfile(pidfile)
    assert not left


@pytest.mark.parametrize("child", ["leave", "stay"])
def test_a_flush_whose_summarizer_leaves_a_setsid_child_ends_in_time_and_leaves_nothing(
    store: StorePaths, tmp_path: Path, leaver: Path, child: str
) -> None:
    """The summarizer timeout + 5 s at most, and no process of the summarizer's left running."""
    from memkeeper.core.log import flush
    from tests.l1_data import write_l1

    pidfile = tmp_path / "grandchild.pid"
    argv = [sys.executable, str(leaver), str(pidfile), child]
    config = {"summarizer": {"backend": "command", "command": argv, "timeoutSeconds": 2, "minCallChars": 0}}
    store.config.write_text(json.dumps(config))
    entries = [
        {"ts": "2026-11-20T10:00:00Z", "role": "user", "text": "please add a search command"},
        {"ts": "2026-11-20T10:00:05Z", "role": "assistant", "text": "Added the search command."},
    ]
    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", entries)
    started = time.monotonic()
    try:
        flush.flush_pending(store)
        took = time.monotonic() - started
        left = _running(pidfile)
    finally:
        _kill_pidfile(pidfile)
    assert pidfile.exists()  # the summarizer did run and start its grandchild
    assert took <= 2 + 5 and not left
    if child == "leave":
        assert "- [x]: the answer" in store.memory.read_text()


def test_claude_that_exits_leaving_its_pipe_held_is_done_at_its_exit(tmp_path: Path) -> None:
    """claude's own exit ends the read (not the 120 s timeout); what it left is ended."""
    from memkeeper.core.summarizers import claude

    fake = tmp_path / "claude.py"
    result = json.dumps({"type": "result", "result": "- [x]: done", "is_error": False})
    fake.write_text(
        LEAVER.replace('print("- [x]: the answer", flush=True)', f"print({result!r}, flush=True)")
    )
    pidfile = tmp_path / "grandchild.pid"
    try:
        run = claude.stream_run([sys.executable, str(fake), str(pidfile), "leave"], "x", 20, 20)
        left = _running(pidfile)
    finally:
        _kill_pidfile(pidfile)
    assert run.returncode == 0 and run.answered and '"- [x]: done"' in run.stdout
    assert not left


def test_output_is_capped_while_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "MAX_OUTPUT_BYTES", 1 << 20)
    code = "import sys\nfor _ in range(40): sys.stdout.write('x' * (1 << 20))"
    result = process.run_with_timeout([sys.executable, "-c", code], "", timeout=60)
    assert result.returncode == 0 and len(result.stdout) == 1 << 20


def test_a_large_prompt_reaches_a_child_that_answers_as_it_reads() -> None:
    code = "import sys\ndata = sys.stdin.read()\nprint(len(data))"
    result = process.run_with_timeout([sys.executable, "-c", code], "y" * 3_000_000, timeout=60)
    assert result.stdout.strip() == "3000000"


# --------------------------------------------------------------------------- inputs


def _deep(depth: int) -> str:
    return '{"rotatedFiles": [], "x": ' + "[" * depth + "]" * depth + "}"


def test_an_index_nested_1200_deep_is_a_corrupt_file(store: StorePaths) -> None:
    atomic_write_bytes(store.memory, b"## 2026-01-01\n- [x]: remembered fact\n")
    store.index.write_text(_deep(1200))
    start = run_hook(store.project, "SessionStart", source="startup")
    assert start.returncode == 0 and "remembered fact" in start.stdout
    for command in (["status"], ["rotate", "--force"], ["doctor"]):
        done = subprocess.run(
            [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(store.project), *command],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert "Traceback" not in done.stderr and "RecursionError" not in done.stdout + done.stderr, command
    backups = list(store.root.glob("memory-index.json.corrupt-*"))
    assert backups and backups[0].read_text() == _deep(1200)  # kept, never silently reset
    assert json.loads(store.index.read_text())["rotatedFiles"] is not None


def test_a_memory_far_over_the_threshold_goes_to_a_detached_migration(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.core.log.migrate import run_migrate_job

    days = [
        f"## 2025-{1 + d // 28:02d}-{1 + d % 28:02d}\n".encode() + b"- [x]: fact\n" * 800 for d in range(56)
    ]
    atomic_write_bytes(store.memory, b"".join(days))  # ~700 KB: over twice the default threshold
    before = store.memory.read_bytes()
    started: list[str] = []
    monkeypatch.setattr(jobs, "start_job", lambda paths, kind, options=None: started.append(kind))
    hook.on_tool_use(hook.Call({"session_id": "sess-1"}, str(store.project)))
    assert started == ["migrate"] and store.memory.read_bytes() == before
    run_migrate_job(store, {})
    archives = sorted(store.root.glob("memory_*.md"))
    assert len(archives) > 2  # split by date, not one archive holding it all
    assert b"".join(p.read_bytes() for p in archives) + store.memory.read_bytes() == before


def test_an_oversize_transcript_line_is_skipped_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transcript, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(transcript, "SKIP_CHUNK", 64)

    def line(text: str) -> bytes:
        record = {
            "type": "user",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": text},
        }
        return json.dumps(record).encode() + b"\n"

    path = tmp_path / "t.jsonl"
    path.write_bytes(line("before") + line("x" * 5000) + line("after"))
    stats = transcript.ParseStats()
    texts = [e.text for e in transcript.iter_events(path, 0, stats) if e.text]
    assert texts == ["before", "after"]
    assert stats.oversize_lines == 1 and stats.end_offset == path.stat().st_size
    # an oversize line still being written is left for next time, not skipped half-read
    path.write_bytes(line("before") + line("x" * 5000)[:3000])
    stats = transcript.ParseStats()
    list(transcript.iter_events(path, 0, stats))
    assert stats.partial_tail and stats.end_offset == len(line("before"))


def test_session_start_stats_only_the_newest_l1_files(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(300):
        name = f"2026-01-{1 + i // 24:02d}_{i % 24:02d}00_abcd{i:04d}.l1.jsonl"
        (store.sessions / name).write_text('{"ts": "2026-01-01T00:00:00Z", "role": "user", "text": "hi"}\n')
    calls: list[str] = []
    real_stat = Path.stat

    def counting_stat(self: Path, **kwargs: Any) -> os.stat_result:
        if self.name.endswith(".l1.jsonl"):
            calls.append(self.name)
        return real_stat(self, **kwargs)

    monkeypatch.setattr(Path, "stat", counting_stat)
    text = session_context.build_context(store, "startup", session_id="zzzz")
    assert "Last session" in text
    assert len(calls) <= session_context.NEWEST_L1_FILES
