"""A project whose top level holds ``json.py``, ``types.py``, ``select.py``… shadows nothing.

Every Python memkeeper starts runs with ``-P`` (``memkeeper.core.basics.interpreter``: the launchers, the
background jobs), so
the project folder, which is the current directory of hooks, jobs and slash commands,
never comes first on ``sys.path``. Each planted module records that it was imported and
breaks what it replaces; the hooks still count, a job still runs, and a slash command
through ``plugin/bin/memkeeper`` still works.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from memkeeper.core.log import progress
from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import REPO, hook_command, payload_for

SHADOWS = ("json", "types", "select", "subprocess", "pathlib", "re", "fcntl", "argparse")


def _plant(project: Path, marker: Path) -> None:
    for name in SHADOWS:
        (project / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\nraise SystemExit('shadowed {name}')\n"
        )


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, HOME=str(home), PATH="/usr/bin:/bin")
    for name in (
        "CLAUDE_PROJECT_DIR",
        "MEMKEEPER_PYTHON",
        "MEMKEEPER_NO_JOBS",
        "PYTHONPATH",
        "MEMKEEPER_IN_JOB",
    ):
        env.pop(name, None)
    return env


def test_project_modules_never_shadow_ours(store: StorePaths, home: Path, tmp_path: Path) -> None:
    marker = tmp_path / "imported.txt"
    _plant(store.project, marker)
    env = _env(home)
    for event in ("UserPromptSubmit", "PostToolUse", "PostToolUse"):
        done = subprocess.run(
            hook_command(REPO / "plugin", event),
            input=json.dumps(payload_for(event, store.project, session_id="s-shadow")).encode(),
            cwd=store.project,
            capture_output=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0
    assert progress.read_counters(store)["toolUses"] == 2

    # A job spawned the way hooks spawn them (cwd: the project) still runs: PreCompact starts a flush.
    store.memory.write_text("")
    done = subprocess.run(
        hook_command(REPO / "plugin", "SessionEnd"),
        input=json.dumps(payload_for("SessionEnd", store.project, session_id="s-shadow")).encode(),
        cwd=store.project,
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0
    deadline = time.monotonic() + 60
    runs = store.state / "flush-runs.jsonl"
    while time.monotonic() < deadline and not runs.exists():
        time.sleep(0.1)
    assert runs.exists(), "the flush job did not run"

    launcher = REPO / "plugin" / "bin" / "memkeeper"
    done = subprocess.run(
        [str(launcher), "status"], cwd=store.project, capture_output=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    done = subprocess.run(
        [str(launcher), "save", "shadowing is harmless"],
        cwd=store.project,
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "shadowing is harmless" in store.memory.read_text()
    assert not marker.exists(), marker.read_text()
