"""The MCP server through the SDK's stdio client: ready fast, natural questions, confidence tiers."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest

from memkeeper.core.basics.platform import kill
from memkeeper.core.search import HIGH_CONFIDENCE, search
from memkeeper.core.store.paths import StorePaths
from memkeeper.plugin import mcp_server
from tests.functional.plugin.capture_helpers import CLIS
from tests.mcp_text import text_of

REPO = Path(__file__).resolve().parents[3]
LAUNCHER = REPO / "plugin" / "bin" / "memkeeper"
#: The issue's budget for answering ``initialize`` (Claude Code 2.1.330 gives up after ~2.8 s),
#: asserted on the median of RUNS cold starts of the launcher Claude Code runs.
INITIALIZE_BUDGET_SECONDS = 0.5
RUNS = 7

PLANTED = "Background jobs moved from Celery to RQ because the Celery workers leaked memory overnight."
MEMORY_MD = f"""# Project memory

## 2026-11-01_0900 (local 11-01_1800)
- [queue]: {PLANTED}
- [ci]: The test suite runs on two cores with pytest-xdist.
- [style]: Commit messages are written in English.
"""


def _env(store: StorePaths) -> dict[str, str]:
    return dict(
        os.environ,
        MEMKEEPER_NO_JOBS="1",
        MEMKEEPER_PYTHON=sys.executable,
        HOME=str(store.project.parent / "home"),
        CLAUDE_PROJECT_DIR=str(store.project),
    )


def _params(store: StorePaths) -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=str(LAUNCHER), args=["mcp"], env=_env(store), cwd=str(store.project))


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    """Where the server's stderr goes (pytest's captured stderr has no file descriptor)."""
    with open(tmp_path / "mcp-stderr.log", "w", encoding="utf-8") as handle:
        yield handle


@pytest.fixture
def planted(store: StorePaths) -> StorePaths:
    store.memory.write_text(MEMORY_MD, encoding="utf-8")
    return store


async def test_initialize_answers_within_budget_on_the_median(
    planted: StorePaths, errlog: TextIO, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    times: list[float] = []
    listed: set[str] = set()
    for _ in range(RUNS):
        started = time.perf_counter()
        async with (
            stdio_client(_params(planted), errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            result = await session.initialize()
            times.append(time.perf_counter() - started)
            listed = {tool.name for tool in (await session.list_tools()).tools}
        assert result.server_info.name == "memkeeper"
    median = statistics.median(times)
    with capsys.disabled():
        print(
            f"\nMCP initialize (launcher spawn → result), {RUNS} runs: median {median * 1000:.0f} ms, "
            f"all {', '.join(f'{t * 1000:.0f}' for t in times)} ms"
        )
    assert listed == {"search", "show", "timeline"}
    assert median <= INITIALIZE_BUDGET_SECONDS


async def test_a_natural_question_finds_the_planted_answer(planted: StorePaths, errlog: TextIO) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(_params(planted), errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "natural question" in (tools["search"].description or "")
        found = await session.call_tool("search", {"query": "why did we drop Celery for the job queue?"})
        text = text_of(found)
        assert not found.is_error
        assert "Celery" in text and "RQ" in text, text
        first_id = next(line.split()[1] for line in text.splitlines() if line.startswith("- "))
        shown = await session.call_tool("show", {"id": first_id})
        assert PLANTED in text_of(shown)
        bad = await session.call_tool("search", {"query": 42})
        assert bad.is_error and "wrong type" in text_of(bad)


def test_confident_hits_are_expanded_and_the_rest_are_compact(planted: StorePaths) -> None:
    results = search(planted, "Celery RQ")
    assert results.hits
    top = results.hits[0]
    assert top.confidence >= HIGH_CONFIDENCE
    weak = top._replace(id=top.id, confidence=HIGH_CONFIDENCE / 2)
    # the same hit twice: once confident (expanded with its text), once weak (one line)
    tier = results.tiers[0]._replace(hits=(top,))
    text = mcp_server.format_results(results._replace(tiers=(tier,)), planted)
    assert PLANTED in text.split("\n", 2)[2]  # the line after the hit line holds the entry
    tier = results.tiers[0]._replace(hits=(weak,))
    text = mcp_server.format_results(results._replace(tiers=(tier,)), planted)
    assert text.count(PLANTED) <= 1 and not any(line.startswith("  ") for line in text.splitlines())


def test_at_most_a_few_hits_are_expanded(store: StorePaths) -> None:
    sections = "".join(
        f"## 2026-11-{i + 1:02d}_0900\n- [deploy]: step {i} uses the blue green switch\n\n" for i in range(12)
    )
    store.memory.write_text(f"# Project memory\n\n{sections}", encoding="utf-8")
    results = search(store, "blue green deploy", limit=12)
    assert len(results.hits) == 12
    # twelve sections alike: none stands out (see scoring.calibrated); say all are confident
    tiers = tuple(t._replace(hits=tuple(h._replace(confidence=1.0) for h in t.hits)) for t in results.tiers)
    text = mcp_server.format_results(results._replace(tiers=tiers), store)
    lines = text.splitlines()
    expanded = [
        line
        for line, after in zip(lines, lines[1:], strict=False)
        if line.startswith("- ") and after.startswith("  ")
    ]
    assert len(expanded) == mcp_server.MAX_EXPANDED
    assert len(text) < 12 * 200 + mcp_server.EXPAND_BUDGET


def _exchange(store: StorePaths, *messages: bytes) -> list[dict[str, Any]]:
    """Send raw lines to the server and read one answer per request (the launcher, as Claude runs it)."""
    proc = subprocess.run(
        [str(LAUNCHER), "mcp"],
        input=b"".join(messages),
        capture_output=True,
        env=_env(store),
        cwd=store.project,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _request(msg_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode() + b"\n"


def test_protocol_errors_are_answered_and_the_server_goes_on(planted: StorePaths) -> None:
    answers = _exchange(
        planted,
        _request(1, "initialize", {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {}}),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
        b"not json at all\n",
        _request(2, "ping"),
        _request(3, "resources/list"),
        _request(4, "tools/call", {"name": "nope", "arguments": {}}),
        _request(5, "tools/call", {"name": "search", "arguments": {"query": "Celery"}}),
    )
    by_id = {a.get("id"): a for a in answers}
    assert by_id[1]["result"]["protocolVersion"] == mcp_server.PROTOCOL_VERSIONS[-1]
    assert by_id[None]["error"]["code"] == mcp_server.PARSE_ERROR
    assert by_id[2]["result"] == {}
    assert by_id[3]["error"]["code"] == mcp_server.METHOD_NOT_FOUND
    assert by_id[4]["error"]["code"] == mcp_server.INVALID_PARAMS
    assert "Celery" in by_id[5]["result"]["content"][0]["text"]


def test_l1_hits_name_their_session(store: StorePaths) -> None:
    from memkeeper.core.capture.titles import session_titles

    name = "2026-11-02_100000_abcd1234.l1.jsonl"
    entries = [
        {"ts": "2026-11-02T10:00:00Z", "role": "user", "text": "/clear", "session": "abcd1234"},
        {
            "ts": "2026-11-02T10:00:01Z",
            "role": "user",
            "text": "set up the flamingo cache",
            "session": "abcd1234",
        },
        {
            "ts": "2026-11-02T10:00:02Z",
            "role": "assistant",
            "text": "The flamingo cache is ready.",
            "session": "abcd1234",
        },
    ]
    (store.sessions / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    assert session_titles(store) == {name: "set up the flamingo cache"}
    text = mcp_server.tool_search(store, {"query": "flamingo", "deep": True})
    hit_lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert hit_lines and all('(session "set up the flamingo cache")' in line for line in hit_lines)


async def test_while_it_runs_the_server_answers_the_hooks_recall(planted: StorePaths, errlog: TextIO) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    from memkeeper.core.recall import ask as recall_ask
    from memkeeper.core.search import refresh

    refresh(planted)
    channel = recall_ask.Channel(str(planted.root), create=True)
    served = (Path(channel.key_file), Path(channel.socket_file))
    request = json.dumps({"session": "s-1", "prompt": "Celery RQ workers leaked memory", "min": 0.5}).encode()
    async with stdio_client(_params(planted), errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        deadline = time.monotonic() + 30
        while not served[0].exists() and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        answer = recall_ask.ask_resident(str(planted.root), request, timeout=10)
        assert answer is not None and "Celery workers leaked memory" in answer
    deadline = time.monotonic() + 30
    while any(path.exists() for path in served) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(path.exists() for path in served)  # removed when the server ends


@pytest.mark.e2e
@pytest.mark.parametrize("cli", sorted(CLIS))
def test_claude_code_connects_to_the_server(cli: str, planted: StorePaths, home: Path) -> None:
    """Claude Code's own health check (``claude mcp list``) reaches the server: pinned and newest."""
    folder, version = CLIS[cli]
    binary = REPO / folder / "node_modules" / ".bin" / "claude"
    if not binary.exists():
        pytest.skip(f"Claude Code {version} is not installed in {folder}/ (scripts/setup.sh --test)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC", "MEMKEEPER"))}
    env.update(HOME=str(home), DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    env.update(MEMKEEPER_PYTHON=sys.executable, MEMKEEPER_NO_JOBS="1")

    def claude(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(binary), *args], cwd=planted.project, env=env, capture_output=True, text=True, timeout=120
        )

    added = claude("mcp", "add", "-s", "user", "memkeeper", "--", str(LAUNCHER), "mcp")
    assert added.returncode == 0, added.stdout + added.stderr
    listed = claude("mcp", "list")
    line = next((x for x in listed.stdout.splitlines() if x.startswith("memkeeper:")), "")
    assert "Connected" in line, listed.stdout + listed.stderr


def test_a_terminated_server_removes_its_recall_channel(planted: StorePaths) -> None:
    from memkeeper.core.recall import ask as recall_ask

    served = Path(recall_ask.Channel(str(planted.root), create=True).key_file)
    proc = subprocess.Popen(
        [str(LAUNCHER), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=_env(planted),
        cwd=planted.project,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(_request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        deadline = time.monotonic() + 30
        while not served.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert served.exists()
        proc.terminate()  # how a client may end it, stdin still open
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            kill(proc)
            proc.wait()
    assert not served.exists()
