"""The count flush of a long turn runs as a count flush, through the real Claude Code CLI.

A short turn, then at once a long one (15 tool calls) in the same session: the long turn
makes the session's flush due after a few tool calls, while the flush the first turn's end
started is still asking the (slow) model. That request used to be folded into the running
job's rerun with the running job's own options, so it ran as the earlier flush (its
reason, its session) and no count flush was ever recorded: "only the end-of-turn flush
ran". Each request now runs with its own options.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.core.log.flush import read_runs
from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import claude_env, memory_project, run_claude, wait_quiet
from tests.functional.plugin.capture_mock_api import MockAnthropic

pytestmark = pytest.mark.e2e

MEMORY = (
    "## 2026-11-20_1000 (local 11-20_1900)\n- [build]: The project builds with make; tests run with pytest.\n"
)


@pytest.fixture
def scripted(mock: MockAnthropic) -> Iterator[MockAnthropic]:
    """The mock with a short turn (5 tool calls), a long one (15) and a model that takes 6 s to flush."""
    mock.state.long_turns = {"PREPTURN": 5, "LONGTURN": 15}
    mock.state.flush_delay = 6.0
    try:
        yield mock
    finally:
        mock.state.long_turns = {}
        mock.state.flush_delay = 0.0


def test_a_long_turn_right_after_another_gets_its_count_flush(
    claude_bin: Path, scripted: MockAnthropic, home: Path, tmp_path: Path
) -> None:
    store: StorePaths = memory_project(
        tmp_path / "proj", {"summarizer": {"backend": "claude", "minCallChars": 0}}, MEMORY
    )
    env = claude_env(home, claude_bin, scripted.url)
    sid = str(uuid.uuid4())
    common = ("--allowedTools", "Bash", "--output-format", "json")

    short = run_claude(
        claude_bin, env, store.project, "-p", "PREPTURN: fix the parser build", "--session-id", sid, *common
    )
    assert short.returncode == 0, short.stdout + short.stderr
    long = run_claude(
        claude_bin, env, store.project, "-p", "LONGTURN: run the parser steps", "--resume", sid, *common
    )
    assert long.returncode == 0, long.stdout + long.stderr
    wait_quiet(store)

    runs = read_runs(store)
    reasons = [run["reason"] for run in runs if run.get("session") == sid]
    # 6 events in the short turn, 16 in the long one: the flush is due twice during the long turn.
    assert "count" in reasons, runs
    assert reasons.count("session-end") == 2, runs  # each turn's end, not one of them run twice
