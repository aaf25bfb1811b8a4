"""Each slash command of the plugin, through the real Claude Code CLI (pinned and newest) and the mock.

The mock answers the expanded command with a Bash tool_use of the command its instructions
name; the test reads the tool_result Claude Code sent back: the command was allowed by the
command's ``allowed-tools`` and printed what the command promises.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.store import StorePaths
from tests.functional.plugin.capture_helpers import REPO, write_l1
from tests.functional.plugin.capture_mock_api import MockAnthropic

pytestmark = pytest.mark.e2e

SESSION_FILE = "2026-11-20_100000_5e551011.l1.jsonl"

# (slash command line, words of its instructions, the command they name, what its output shows)
CASES = {
    "forget": (
        "/memkeeper:forget the session about the parser",
        "The user wants memkeeper to forget",
        "memkeeper sessions",
        SESSION_FILE,
    ),
    "status": ("/memkeeper:status", "Summarize it for the user", "memkeeper status", "memory.md"),
    "search": (
        "/memkeeper:search tokenizer",
        "Search the project's long-term memory",
        "memkeeper search tokenizer",
        "tokenizer",
    ),
    "save": (
        "/memkeeper:save we ship on Fridays",
        "Save something to the project's long-term memory",
        'memkeeper save "we ship on Fridays"',
        "we ship on Fridays",
    ),
    "regenerate": (
        "/memkeeper:regenerate",
        "Generate archive summaries for",
        "memkeeper regenerate --pending",
        "summar",
    ),
}


@pytest.fixture
def project(tmp_path: Path) -> StorePaths:
    paths = StorePaths(tmp_path / "proj")
    paths.root.mkdir(parents=True)
    paths.config.write_text(json.dumps({"summarizer": {"backend": "extractive"}}))
    paths.memory.write_text(
        "\n## 2026-11-20_1000 (local 11-20_1000)\n- [parser]: We kept the tokenizer instead of rewriting it.\n"
    )
    write_l1(
        paths,
        SESSION_FILE,
        [{"ts": "2026-11-20T10:00:00.000Z", "role": "user", "text": "fix the parser's tokenizer please"}],
    )
    return paths


def tool_result_text(body: dict[str, Any]) -> str | None:
    """The text of the tool_result block in the last user message of a request, if any."""
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    if not isinstance(content, list):
        return None
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, list):
                return "\n".join(str(b.get("text", "")) for b in inner if isinstance(b, dict))
            return str(inner)
    return None


@pytest.mark.parametrize("name", sorted(CASES))
def test_slash_command_runs_the_command_it_names(
    name: str, claude_bin: Path, mock: MockAnthropic, home: Path, project: StorePaths
) -> None:
    line, trigger, command, shows = CASES[name]
    mock.state.bash_for = [(trigger, command)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC", "MEMKEEPER"))}
    env.update(
        HOME=str(home),
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        ANTHROPIC_API_KEY="sk-ant-mock-000",
        ANTHROPIC_BASE_URL=mock.url,
        # memkeeper on PATH, as after `pip install memkeeper`.
        PATH=f"{claude_bin.parent}:{Path(sys.executable).parent}:/usr/bin:/bin",
    )
    before = len(mock.requests)
    done = subprocess.run(
        [
            str(claude_bin),
            "-p",
            line,
            "--plugin-dir",
            str(REPO / "plugin"),
            "--model",
            "haiku",
            "--output-format",
            "json",
        ],
        cwd=project.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    mock.state.bash_for = []
    assert done.returncode == 0, done.stdout + done.stderr
    results = [t for t in (tool_result_text(b) for b in mock.requests[before:]) if t is not None]
    assert results, f"{line}: the model's Bash call never ran"
    output = results[0]
    assert "permission" not in output.lower(), output  # allowed by the command's allowed-tools
    assert shows in output, output
    if name == "save":
        assert "we ship on Fridays" in project.memory.read_text("utf-8")
