"""The summarizer call with the real Claude Code CLIs (pinned and newest) against the loopback mock.

memkeeper is installed as a user plugin in the temporary HOME, so its MCP server would be
loaded by any plain ``claude -p``: the flush request must still carry no tool and no MCP
server, and end in one turn, with no extended thinking and a small ``max_tokens``. With the API unreachable, the flush falls back to the
extractive bullets at once and the backend rests: the next flush does not call the model.
"""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.store.paths import StorePaths
from memkeeper.core.summarizers import MAX_OUTPUT_TOKENS, read_call_log
from memkeeper.core.summarizers.health import read_health
from tests.functional.plugin.capture_helpers import claude_env, memory_project
from tests.functional.plugin.capture_mock_api import MockAnthropic
from tests.l1_data import write_l1
from tests.memkeeper_cli import run_memkeeper

pytestmark = pytest.mark.e2e


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def memkeeper(env: dict[str, str], project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_memkeeper("--project", str(project), *args, env=env)


def session_entries(start: int, count: int) -> list[dict[str, Any]]:
    """A short working session: real-looking prompts, answers and edits."""
    entries: list[dict[str, Any]] = []
    for i in range(start, start + count):
        entries.append(
            {
                "ts": f"2026-11-20T10:{i:02d}:00.000Z",
                "role": "user",
                "text": f"Please fix the failing test number {i} in tests/test_parser.py; "
                "we decided to keep the tokenizer instead of rewriting it.",
            }
        )
        entries.append(
            {
                "ts": f"2026-11-20T10:{i:02d}:10.000Z",
                "role": "tool",
                "name": "Edit",
                "target": "/src/parser.py",
                "diff": "-old\n+new",
            }
        )
        entries.append(
            {
                "ts": f"2026-11-20T10:{i:02d}:20.000Z",
                "role": "assistant",
                "text": f"Fixed test {i}: the parser now handles empty input.",
            }
        )
    return entries


@pytest.fixture
def store(tmp_path: Path) -> StorePaths:
    return memory_project(tmp_path / "proj", {"summarizer": {"backend": "claude", "minCallChars": 0}})


def test_flush_request_has_no_tools_no_mcp_and_one_turn(
    claude_bin: Path, mock: MockAnthropic, home: Path, store: StorePaths
) -> None:
    env = claude_env(home, claude_bin, mock.url, memkeeper_on_path=True)
    installed = memkeeper(env, store.project, "install", "--json")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert json.loads(installed.stdout)["registered"] is True  # memkeeper's MCP server is a user plugin
    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", session_entries(0, 4))
    before = len(mock.requests)

    done = memkeeper(env, store.project, "flush", "--json")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "MOCKFLUSH" in store.memory.read_text("utf-8")
    asked = [body for body in mock.requests[before:] if "conversation memory extractor" in json.dumps(body)]
    assert len(asked) == 1  # one request: one turn, no tool round trip
    request = asked[0]
    assert not request.get("tools") and not request.get("mcp_servers"), request.get("tools")
    assert "mcp__" not in json.dumps(request)
    # No extended thinking (2.1.197 asked for 31,999 thinking tokens, 2.1.33x for adaptive
    # thinking) and an answer bounded to what 2-4 bullets need (not 32,000 or 128,000 tokens).
    thinking = request.get("thinking")
    assert thinking is None or thinking == {"type": "disabled"}, thinking
    assert request["max_tokens"] == MAX_OUTPUT_TOKENS["flush"] == 1024
    assert request.get("output_config", {}).get("effort", "low") == "low"
    record = read_call_log(store)[-1]
    assert record["backend"] == "claude" and record["outcome"] == "ok"
    assert read_health(store)["claude"]["lastOkAt"]


def test_unreachable_api_falls_back_at_once_and_rests(
    claude_bin: Path, home: Path, store: StorePaths
) -> None:
    env = claude_env(home, claude_bin, f"http://127.0.0.1:{closed_port()}", memkeeper_on_path=True)
    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", session_entries(0, 4))

    first = memkeeper(env, store.project, "flush", "--json")

    assert first.returncode == 0, first.stdout + first.stderr
    assert json.loads(first.stdout)["generators"] == ["extractive"]
    assert "fix the failing test number 0" in store.memory.read_text("utf-8")
    calls = [r for r in read_call_log(store) if r["backend"] == "claude"]
    assert len(calls) == 1 and calls[0]["outcome"] == "error"
    assert "connect" in calls[0]["error"].lower()
    health = read_health(store)["claude"]
    assert health["restUntil"] > health["lastFailureAt"]
    status = memkeeper(env, store.project, "status", "--json")
    backend = json.loads(status.stdout)["backend"]
    assert backend["inUse"] == "extractive" and backend["restingUntil"] == health["restUntil"]

    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", session_entries(10, 4))
    second = memkeeper(env, store.project, "flush", "--json")

    assert second.returncode == 0, second.stdout + second.stderr
    assert json.loads(second.stdout)["generators"] == ["extractive"]
    assert "fix the failing test number 10" in store.memory.read_text("utf-8")
    assert len([r for r in read_call_log(store) if r["backend"] == "claude"]) == 1  # resting: not asked
