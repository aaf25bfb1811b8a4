"""End to end with the real Claude Code CLI (npm, pinned) against a loopback mock of the Messages API.

The CLI runs with a temporary HOME, no network and ``--plugin-dir plugin/`` (or the plugin
installed by ``memkeeper install``); the mock also answers the ``claude -p`` summarizer that
the flush job starts, so the flush bullets in memory.md come from it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.log import progress
from memkeeper.core.log.flush import read_runs
from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import (
    PLUGIN,
    RUN_TIMEOUT,
    claude_env,
    find_claude,
    memory_project,
    run_claude,
    validate_strictly,
    wait_for,
    wait_quiet,
)
from tests.functional.plugin.capture_mock_api import FINAL_TEXT, MockAnthropic
from tests.memkeeper_cli import run_memkeeper

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def claude_bin() -> Path:
    return find_claude("pinned")


@pytest.fixture
def e2e_env(home: Path, claude_bin: Path, mock: MockAnthropic) -> dict[str, str]:
    # The flush job's summarizer is this same `claude`; no venv on PATH on purpose:
    # the hook launcher must find our Python by itself.
    env = claude_env(home, claude_bin, mock.url)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


@pytest.fixture
def e2e_project(tmp_path: Path) -> StorePaths:
    return memory_project(
        tmp_path / "proj",
        {"memory": {"flushEvery": 2}, "summarizer": {"backend": "claude", "minCallChars": 0}},
        "## 2026-11-20_1000 (local 11-20_1900)\n- [marker]: INITMARKER-4242 is the codename.\n",
    )


Claude = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def claude(claude_bin: Path, e2e_env: dict[str, str], e2e_project: StorePaths) -> Claude:
    def run(*args: str, plugin: bool = True) -> subprocess.CompletedProcess[str]:
        return run_claude(claude_bin, e2e_env, e2e_project.project, *args, plugin=plugin)

    return run


def l1_files(paths: StorePaths, session: str) -> list[Path]:
    return sorted(paths.sessions.glob(f"*_{session[:8]}.l1.jsonl"))


def l1_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def plugin_list(claude_bin: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    listing = subprocess.run(
        [str(claude_bin), "plugin", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    plugins: list[dict[str, Any]] = json.loads(listing.stdout or "[]")
    return plugins


def test_plugin_validates_strictly(claude_bin: Path, e2e_env: dict[str, str]) -> None:
    validate_strictly(claude_bin, e2e_env, PLUGIN)


def test_init_only_puts_memory_into_session_start_context(
    claude: Claude, tmp_path: Path, e2e_project: StorePaths
) -> None:
    debug = tmp_path / "debug.log"
    done = claude("--init-only", "--debug-file", str(debug))
    assert done.returncode == 0, done.stdout + done.stderr
    log = debug.read_text("utf-8", "replace")
    assert "Loading hooks from plugin: memkeeper" in log
    assert '"additionalContext"' in log and "INITMARKER-4242" in log


def _first_prompt_with_a_tool_call(claude: Claude, paths: StorePaths, mock: MockAnthropic) -> str:
    """Check a first prompt with a tool call answers, gets the memory and is counted; its session id."""
    before = len(mock.requests)
    done = claude(
        "-p",
        "USE_TOOL: run echo please",
        "--allowedTools",
        "Bash",
        "--model",
        "haiku",
        "--output-format",
        "json",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == FINAL_TEXT and not result["is_error"]
    session: str = result["session_id"]

    # SessionStart's memory reached the model.
    assert any("INITMARKER-4242" in json.dumps(body) for body in mock.requests[before:])
    # The prompt and the tool call were counted for this session.
    counts = progress.read_counters(paths)["sessions"][session]
    assert (counts["messages"], counts["toolUses"]) == (1, 1)
    return session


def _check_l1_and_flush_after_session_end(paths: StorePaths, session: str, mock: MockAnthropic) -> None:
    """Check SessionEnd's jobs write L1 (prompt and tool call) and flush every entry once into memory.md."""
    files = wait_for(lambda: l1_files(paths, session), "the session's L1 file")
    wait_for(lambda: "USE_TOOL: run echo please" in files[0].read_text("utf-8"), "the typed prompt in L1")
    entries = l1_entries(files[0])
    assert any(e["role"] == "tool" and e.get("name") == "Bash" and e.get("tool_use_id") for e in entries)
    wait_for(lambda: "MOCKFLUSH" in paths.memory.read_text("utf-8"), "the flush bullets from the mock model")
    assert any("conversation memory extractor" in json.dumps(body) for body in mock.requests)
    wait_quiet(paths)
    # Every entry was flushed exactly once: one section per summarized chunk, no entry twice.
    runs = read_runs(paths)
    assert sum(run["entries"] for run in runs) == len(l1_entries(files[0]))
    assert paths.memory.read_text("utf-8").count("MOCKFLUSH") == sum(run["sections"] for run in runs) >= 1


def _check_resume_appends_to_the_same_l1(claude: Claude, paths: StorePaths, session: str) -> None:
    """Check a resumed session's prompt goes into the session's one L1 file, the first prompt not repeated."""
    done = claude(
        "-p", "second prompt after resume", "--resume", session, "--model", "haiku", "--output-format", "json"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    wait_for(
        lambda: "second prompt after resume" in l1_files(paths, session)[0].read_text("utf-8"),
        "the resumed prompt in L1",
    )
    assert len(l1_files(paths, session)) == 1
    prompts = [e["text"] for e in l1_entries(l1_files(paths, session)[0]) if e["role"] == "user"]
    assert prompts.count("USE_TOOL: run echo please") == 1 and "second prompt after resume" in prompts
    wait_quiet(paths)


def _check_compact_resupplies_and_flushes(claude: Claude, paths: StorePaths, session: str) -> None:
    """Check /compact re-supplies the memory and the dropped context, and PreCompact flushes every entry once."""
    debug = paths.project.parent / "compact-debug.log"
    done = claude(
        "-p",
        "/compact keep the secret word",
        "--resume",
        session,
        "--model",
        "haiku",
        "--output-format",
        "json",
        "--debug-file",
        str(debug),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # SessionStart(compact) re-supplied the memory and what the compaction dropped.
    log = debug.read_text("utf-8", "replace")
    assert "Re-supplied after the conversation was compacted." in log
    assert "This session before the compaction" in log and "asked: second prompt after resume" in log
    wait_for(
        lambda: any(run.get("reason") == "precompact" for run in read_runs(paths)),
        "a flush started by PreCompact",
    )
    wait_quiet(paths)
    runs = read_runs(paths)
    entries = l1_entries(l1_files(paths, session)[0])
    assert sum(run["entries"] for run in runs) == len(entries)


def test_session_resume_and_compact(claude: Claude, e2e_project: StorePaths, mock: MockAnthropic) -> None:
    paths = e2e_project
    session = _first_prompt_with_a_tool_call(claude, paths, mock)

    # After SessionEnd the detached jobs write L1 (with the typed prompt) and flush into memory.md.
    _check_l1_and_flush_after_session_end(paths, session, mock)

    # Resume appends to the same L1 file.
    _check_resume_appends_to_the_same_l1(claude, paths, session)

    # /compact fires PreCompact, which starts a flush.
    _check_compact_resupplies_and_flushes(claude, paths, session)
    assert paths.memory.read_text("utf-8").count("INITMARKER-4242") == 1
    assert not (paths.project / "CLAUDE.md").exists()
    assert (
        not (paths.logs / "memkeeper.log").exists()
        or "Traceback" not in (paths.logs / "memkeeper.log").read_text()
    )


def test_memkeeper_install_registers_the_plugin(
    claude_bin: Path, e2e_env: dict[str, str], e2e_project: StorePaths, mock: MockAnthropic
) -> None:
    home = Path(e2e_env["HOME"])
    # The installed plugin finds our Python through the record `memkeeper install` writes, wherever the
    # venv lives: nothing names it.
    e2e_env.pop("MEMKEEPER_PYTHON", None)
    env = dict(e2e_env, PATH=claude_env(home, claude_bin, mock.url, memkeeper_on_path=True)["PATH"])
    done = run_memkeeper("install", "--json", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["registered"] is True
    marketplace = home / ".claude" / "memkeeper-marketplace"
    assert (marketplace / ".claude-plugin" / "marketplace.json").is_file()
    validate_strictly(claude_bin, e2e_env, marketplace / "plugins" / "memkeeper")
    assert any(
        p["id"] == "memkeeper@memkeeper-local" and p["enabled"] for p in plugin_list(claude_bin, e2e_env)
    )
    # Installing twice is fine.
    again = run_memkeeper("install", "--json", env=env)
    assert again.returncode == 0 and json.loads(again.stdout)["registered"] is True

    # Without --plugin-dir, the installed plugin's hooks run (found their Python via the record).
    run = run_claude(
        claude_bin,
        e2e_env,
        e2e_project.project,
        *("-p", "hi from the installed plugin", "--model", "haiku", "--output-format", "json"),
        plugin=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    session = json.loads(run.stdout)["session_id"]
    assert progress.read_counters(e2e_project)["sessions"][session]["messages"] == 1
    wait_for(lambda: l1_files(e2e_project, session), "the L1 file of the installed plugin's session")
    wait_quiet(e2e_project)

    removed = run_memkeeper("uninstall", "--json", env=env)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not marketplace.exists()
    assert not any(p["id"].startswith("memkeeper@") for p in plugin_list(claude_bin, e2e_env))
    assert e2e_project.memory.exists()  # uninstalling never touches the memory
