"""End to end, with the real Claude Code CLI (pinned and newest) against the loopback mock:

* late entries: a session started before the plugin was installed is resumed after another
  session's flush has passed its time; every one of its entries is still summarized, once;
* resume: ``--resume`` injects only a one-line note plus what changed, not the memory again.

Each binary is skipped cleanly when it is not installed (``.e2e/``, ``.e2e-newest/``).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.flush import read_runs
from memkeeper.core.store import StorePaths
from tests.functional.plugin.capture_helpers import REPO
from tests.functional.plugin.capture_mock_api import MockAnthropic

pytestmark = pytest.mark.e2e

PLUGIN = REPO / "plugin"
RUN_TIMEOUT = 180
WAIT_SECONDS = 150
MARKER = "INITMARKER-7788"


@pytest.fixture
def project(tmp_path: Path) -> StorePaths:
    memory = tmp_path / "proj" / ".claude" / "memory"
    memory.mkdir(parents=True)
    (memory / "config.json").write_text(
        json.dumps({"memory": {"flushEvery": 100}, "summarizer": {"backend": "claude", "minCallChars": 0}})
    )
    (memory / "memory.md").write_text(
        f"## 2026-11-20_1000 (local 11-20_1900)\n- [marker]: {MARKER} is the codename.\n"
    )
    return StorePaths(tmp_path / "proj")


Claude = Callable[..., dict[str, Any]]


@pytest.fixture
def claude(claude_bin: Path, home: Path, mock: MockAnthropic, project: StorePaths) -> Claude:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC", "MEMKEEPER"))}
    env.update(
        HOME=str(home),
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        ANTHROPIC_API_KEY="sk-ant-mock-000",
        ANTHROPIC_BASE_URL=mock.url,
        PATH=f"{claude_bin.parent}:/usr/bin:/bin",
    )

    def run(prompt: str, *args: str, plugin: bool = True) -> dict[str, Any]:
        argv = [str(claude_bin), "-p", prompt, "--model", "haiku", "--output-format", "json", *args]
        if plugin:
            argv += ["--plugin-dir", str(PLUGIN)]
        done = subprocess.run(
            argv, cwd=project.project, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT
        )
        assert done.returncode == 0, done.stdout + done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    return run


def wait_quiet(paths: StorePaths, quiet_seconds: float = 3.0) -> None:
    """Until no background job has run for ``quiet_seconds``."""
    from memkeeper.core.lock import is_locked

    deadline = time.monotonic() + WAIT_SECONDS
    idle_since: float | None = None
    while time.monotonic() < deadline:
        busy = any(is_locked(paths.state / f"job-{k}.lock") for k in ("l1", "flush", "summary", "index"))
        if not busy:
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= quiet_seconds:
                return
        else:
            idle_since = None
        time.sleep(0.2)
    raise AssertionError("timed out waiting for the background jobs to finish")


def wait_for(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def l1_entries(paths: StorePaths) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted(paths.sessions.glob("*.l1.jsonl"))
        for line in path.read_text("utf-8").splitlines()
        if line.strip()
    ]


def flush_prompts(mock: MockAnthropic, since: int) -> str:
    return "\n".join(
        json.dumps(body)
        for body in mock.requests[since:]
        if "conversation memory extractor" in json.dumps(body)
    )


def test_a_resumed_pre_plugin_session_is_flushed_whole(
    claude: Claude, project: StorePaths, mock: MockAnthropic
) -> None:
    paths = project
    # A session from before the plugin was installed: a transcript, no hooks ran.
    old = claude("EARLY-PROMPT-ALPHA from before the plugin", plugin=False)["session_id"]
    time.sleep(1.5)  # the next session's entries are strictly newer
    # Another session with the plugin: its flush moves the watermark past the old session's time.
    claude("second session prompt BRAVO")
    wait_for(lambda: read_runs(paths), "the first flush")
    wait_quiet(paths)
    before = len(mock.requests)
    # Now the old session is resumed with the plugin: its early entries reach L1 late.
    resumed = claude("RESUMED-PROMPT-CHARLIE", "--resume", old)
    assert resumed["session_id"] == old or resumed["session_id"]
    wait_for(
        lambda: any("RESUMED-PROMPT-CHARLIE" in json.dumps(e) for e in l1_entries(paths)), "the resumed L1"
    )
    wait_quiet(paths)
    texts = flush_prompts(mock, before)
    assert "EARLY-PROMPT-ALPHA" in texts  # older than the watermark, summarized all the same
    # Every L1 entry was summarized exactly once across all flush runs.
    assert sum(run["entries"] for run in read_runs(paths)) == len(l1_entries(paths))


def test_resume_injects_only_a_note_and_what_changed(
    claude: Claude, project: StorePaths, mock: MockAnthropic, tmp_path: Path
) -> None:
    first = claude("first prompt DELTA")
    session = first["session_id"]
    assert any(MARKER in json.dumps(body) for body in mock.requests)
    wait_quiet(project)
    with project.memory.open("a") as handle:
        handle.write("\n## 2026-11-21_1000 (local 11-21_1900)\n- [fact]: NEWFACT-9911 was decided.\n")
    before = len(mock.requests)
    debug = tmp_path / "resume-debug.log"
    claude("after resume ECHO", "--resume", session, "--debug-file", str(debug))
    log = debug.read_text("utf-8", "replace")
    assert "memkeeper: session resumed" in log and "NEWFACT-9911" in log
    turn = [json.dumps(b) for b in mock.requests[before:] if "after resume ECHO" in json.dumps(b)]
    assert turn, "the resumed turn reached the mock"
    # The model sees the first injection once (kept by Claude Code), not a second copy.
    assert turn[-1].count(f"{MARKER} is the codename") == 1
    assert "NEWFACT-9911" in turn[-1]
    wait_quiet(project)
