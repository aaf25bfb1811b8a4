"""The plugin's launchers under the real Claude Code CLI, pinned and newest, offline through the mock API.

- A checkout (``--plugin-dir plugin/``): each hook is ``"${CLAUDE_PLUGIN_ROOT}/bin/memkeeper.cmd" EVENT``.
- An installed copy (``memkeeper install``): each hook and the MCP server start the recorded Python in exec
  form, no shell, and no Python source rides in the command: after ``/compact`` the transcript (which
  Claude Code sends back to the model with every later request) holds the short command line only.
- A checkout whose plugin finds no usable memkeeper: the session starts, and the user is told.

Every hook fires and exits 0 (``--include-hook-events`` reports each one's exit code).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.log import progress
from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import (
    PLUGIN,
    RUN_TIMEOUT,
    claude_env,
    memory_project,
    validate_strictly,
    wait_for,
    wait_quiet,
)
from tests.functional.plugin.capture_mock_api import MockAnthropic
from tests.memkeeper_cli import run_memkeeper

pytestmark = pytest.mark.e2e

#: What a hook command line may be at most: it is shown to the user and, after /compact, to the model.
LONGEST_COMMAND = 200
TURN_HOOKS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop")


def claude(
    claude_bin: Path, env: dict[str, str], cwd: Path, *args: str, plugin: Path | None = None
) -> list[dict[str, Any]]:
    """One ``claude -p`` run with every hook's event in its stream-json output."""
    argv = [
        str(claude_bin),
        *args,
        *("--model", "haiku", "--output-format", "stream-json", "--verbose", "--include-hook-events"),
        *(["--plugin-dir", str(plugin)] if plugin else []),
    ]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def hook_exits(events: list[dict[str, Any]]) -> dict[str, int]:
    """Each hook that answered: its event name and exit code."""
    return {
        str(e["hook_event"]): int(e["exit_code"])
        for e in events
        if e.get("subtype") == "hook_response" and e.get("hook_event")
    }


def session_of(events: list[dict[str, Any]]) -> str:
    return str(next(e["session_id"] for e in events if e.get("session_id")))


def transcript(home: Path, session: str) -> str:
    return next((home / ".claude" / "projects").glob(f"*/{session}.jsonl")).read_text("utf-8")


@pytest.fixture
def project(tmp_path: Path) -> StorePaths:
    return memory_project(tmp_path / "proj", {"memory": {"flushEvery": 50}}, "- [marker]: LAUNCHMARK\n")


def test_an_installed_plugin_runs_every_hook_with_no_shell_and_no_source_in_the_transcript(
    claude_bin: Path, mock: MockAnthropic, home: Path, project: StorePaths
) -> None:
    env = claude_env(home, claude_bin, mock.url)
    env.pop("MEMKEEPER_PYTHON", None)  # the installed copy names its Python itself
    env.pop("MEMKEEPER_NO_JOBS", None)
    installing = dict(env, PATH=claude_env(home, claude_bin, mock.url, memkeeper_on_path=True)["PATH"])
    done = run_memkeeper("install", "--json", env=installing)
    assert done.returncode == 0 and json.loads(done.stdout)["registered"], done.stdout + done.stderr
    plugin = home / ".claude" / "memkeeper-marketplace" / "plugins" / "memkeeper"
    validate_strictly(claude_bin, env, plugin)
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text("utf-8"))["hooks"]
    commands = [" ".join([h["command"], *h["args"]]) for groups in hooks.values() for h in groups[0]["hooks"]]
    assert max(len(c) for c in commands) <= LONGEST_COMMAND

    debug = home / "debug.log"
    events = claude(
        claude_bin,
        env,
        project.project,
        *("-p", "USE_TOOL: run echo please", "--allowedTools", "Bash", "--debug-file", str(debug)),
    )
    session = session_of(events)
    assert hook_exits(events) == dict.fromkeys(TURN_HOOKS, 0)
    log = debug.read_text("utf-8", "replace")
    assert 'MCP server "plugin:memkeeper:memkeeper": Successfully connected' in log
    counts = progress.read_counters(project)["sessions"][session]
    assert (counts["messages"], counts["toolUses"]) == (1, 1)
    # SessionEnd started the L1 job, which writes the session's copy once the CLI has left
    wait_for(lambda: list(project.sessions.glob(f"*_{session[:8]}.l1.jsonl")), "the session's L1 file")
    wait_quiet(project)

    claude(claude_bin, env, project.project, "-p", "/compact keep it", "--resume", session)
    text = transcript(home, session)
    shown = [c for c in commands if c.endswith(" PreCompact")]
    # Claude Code records the command it ran (and its success)...
    assert shown and f"PreCompact [{shown[0]}] completed successfully" in text
    boot = (PLUGIN / "lib" / "boot").read_text("utf-8")
    for line in ("gc.disable()", "def load(name):", "os._exit(0)", boot.splitlines()[-1]):
        assert line in boot and line not in text  # ...and none of the launcher's source
    wait_quiet(project)


def test_a_checkout_plugin_runs_every_hook(
    claude_bin: Path, mock: MockAnthropic, home: Path, project: StorePaths
) -> None:
    env = claude_env(home, claude_bin, mock.url)
    env["MEMKEEPER_NO_JOBS"] = "1"
    validate_strictly(claude_bin, env, PLUGIN)
    events = claude(
        claude_bin, env, project.project, "-p", "USE_TOOL: run echo", "--allowedTools", "Bash", plugin=PLUGIN
    )
    assert hook_exits(events) == dict.fromkeys(TURN_HOOKS, 0)
    assert "LAUNCHMARK" in json.dumps(mock.requests[-1])  # SessionStart's context reached the model
    session = session_of(events)
    claude(claude_bin, env, project.project, "-p", "/compact", "--resume", session, plugin=PLUGIN)
    command = json.loads((PLUGIN / "hooks" / "hooks.json").read_text("utf-8"))["hooks"]["PreCompact"][0]
    shown = json.dumps(command["hooks"][0]["command"])[1:-1]  # as the transcript's JSON writes it
    assert f"PreCompact [{shown}] completed successfully" in transcript(home, session)


def test_a_plugin_that_finds_no_memkeeper_tells_the_user_once(
    claude_bin: Path, mock: MockAnthropic, home: Path, tmp_path: Path, bare_python: str
) -> None:
    checkout = tmp_path / "clone"
    shutil.copytree(PLUGIN, checkout / "plugin", ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    (checkout / "__init__.py").write_text("")  # a checkout's root is the package
    path_bin = tmp_path / "path-bin"
    path_bin.mkdir()
    (path_bin / "python3").symlink_to(bare_python)
    env = claude_env(home, claude_bin, mock.url)
    env.pop("MEMKEEPER_PYTHON", None)
    env["PATH"] = f"{path_bin}{os.pathsep}{env['PATH']}"
    project = tmp_path / "proj"
    project.mkdir()
    events = claude(
        claude_bin,
        env,
        project,
        "-p",
        "USE_TOOL: run echo",
        "--allowedTools",
        "Bash",
        plugin=checkout / "plugin",
    )
    assert hook_exits(events) == dict.fromkeys(TURN_HOOKS, 0)
    text = transcript(home, session_of(events))
    messages = [
        json.loads(line)["attachment"]["content"]
        for line in text.splitlines()
        if '"hook_system_message"' in line
    ]
    assert len(messages) == 1 and messages[0].startswith("memkeeper: memory is not being kept:")
    assert f"`{path_bin / 'python3'} {checkout / 'scripts' / 'setup.py'} --run`" in messages[0]
    assert list(project.iterdir()) == []  # nothing written to the project
