"""End to end, with the real Claude Code CLI (pinned and newest) against the loopback mock:

* late entries: a session started before the plugin was installed is resumed after another
  session's flush has passed its time; every one of its entries is still summarized, once;
* resume: ``--resume`` injects only a one-line note plus what changed, not the memory again.

Each binary is skipped cleanly when it is not installed (``.e2e/``, ``.e2e-newest/``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.log.flush import read_runs
from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import (
    claude_env,
    memory_project,
    run_claude,
    wait_for,
    wait_quiet,
)
from tests.functional.plugin.capture_mock_api import MockAnthropic

pytestmark = pytest.mark.e2e

MARKER = "INITMARKER-7788"


@pytest.fixture
def project(tmp_path: Path) -> StorePaths:
    return memory_project(
        tmp_path / "proj",
        {"memory": {"flushEvery": 100}, "summarizer": {"backend": "claude", "minCallChars": 0}},
        f"## 2026-11-20_1000 (local 11-20_1900)\n- [marker]: {MARKER} is the codename.\n",
    )


Claude = Callable[..., dict[str, Any]]


@pytest.fixture
def claude(claude_bin: Path, home: Path, mock: MockAnthropic, project: StorePaths) -> Claude:
    env = claude_env(home, claude_bin, mock.url)

    def run(prompt: str, *args: str, plugin: bool = True) -> dict[str, Any]:
        argv = ("-p", prompt, "--model", "haiku", "--output-format", "json", *args)
        done = run_claude(claude_bin, env, project.project, *argv, plugin=plugin)
        assert done.returncode == 0, done.stdout + done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    return run


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
