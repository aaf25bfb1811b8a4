"""Each slash command of the plugin, through the real Claude Code CLI (pinned and newest) and the mock.

The mock answers the expanded command with a Bash tool_use of the command its instructions
name; the test reads the tool_result Claude Code sent back: the command was allowed by the
command's ``allowed-tools`` and printed what the command promises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import claude_env, memory_project, run_claude
from tests.functional.plugin.capture_mock_api import MockAnthropic
from tests.l1_data import write_l1

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
    paths = memory_project(
        tmp_path / "proj",
        {"summarizer": {"backend": "extractive"}},
        "\n## 2026-11-20_1000 (local 11-20_1000)\n- [parser]: We kept the tokenizer instead of rewriting it.\n",
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
    env = claude_env(home, claude_bin, mock.url, memkeeper_on_path=True)  # as after `pip install memkeeper`
    before = len(mock.requests)
    done = run_claude(
        claude_bin, env, project.project, "-p", line, "--model", "haiku", "--output-format", "json"
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
