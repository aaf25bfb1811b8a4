"""Parallel hooks and appends: exact counters, one archive per threshold crossing, no lost lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.reliability import reliability_kit as kit


def test_parallel_checks_and_appends(tmp_path: Path) -> None:
    # 3 s of load, then on until the threshold is crossed (the event), within a generous deadline.
    result = kit.concurrency_run(tmp_path, processes=6, seconds=3.0, hook_every=3, rotation_deadline=240.0)
    assert result.problems == []
    assert result.checks == result.counted and result.checks > 0
    assert result.archives >= 1  # the threshold was crossed, so the trial tested rotation
    assert result.bytes_lost == 0


def test_parallel_post_tool_use_hooks_count_exactly(tmp_path: Path) -> None:
    """Real ``memkeeper hook PostToolUse`` processes from several sessions at once."""
    from memkeeper.core.log.progress import read_counters

    paths = kit.new_project(tmp_path, "hooks")
    env = kit.child_env(tmp_path / "home")
    sessions = [f"session-{i}" for i in range(4)]
    per_session = 6
    procs = []
    for sid in sessions:
        payload = json.dumps(
            {
                "session_id": sid,
                "cwd": str(paths.project),
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "ls"},
                "tool_response": {},
            }
        )
        for _ in range(per_session):
            proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "memkeeper.cli.main", "hook", "PostToolUse"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=paths.project,
            )
            procs.append((proc, payload))
    for proc, payload in procs:
        proc.stdin.write(payload.encode())  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
    for proc, _payload in procs:
        assert proc.wait(timeout=120) == 0
    counts = read_counters(paths)
    assert counts["toolUses"] == len(sessions) * per_session
    for sid in sessions:
        assert counts["sessions"][sid]["toolUses"] == per_session
    assert not any(paths.root.rglob(".*.tmp"))
    assert os.listdir(paths.logs) == [] or "Error" not in (paths.logs / "memkeeper.log").read_text()
