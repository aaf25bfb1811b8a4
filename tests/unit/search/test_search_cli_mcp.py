"""The search commands (exit codes, JSON, the JS alias) and the MCP server, driven by the
official SDK's own stdio client against a real ``memkeeper mcp`` process."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from memkeeper.cli.main import main
from memkeeper.core.store.paths import StorePaths
from tests.mcp_text import text_of


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_exit_codes_and_json(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    project = str(store.project)
    code, out, _ = run(capsys, "--project", project, "search", "rotation", "lock", "--exact")
    assert code == 0 and "memory.md:3" in out and "[memory.md]" in out
    # ranked (the default): one list, best first, each hit with its confidence
    code, out, _ = run(capsys, "--project", project, "search", "which", "lock", "does", "rotation", "use")
    assert code == 0 and out.startswith("[ranked]") and "1.00  memory.md  memory.md:3" in out
    code, out, _ = run(capsys, "--project", project, "search", "zzzzunknown")
    assert code == 3 and 'No results for "zzzzunknown"' in out
    code, _, err = run(capsys, "--project", project, "search", '"')
    assert code == 2 and "empty" in err
    code, _, err = run(capsys, "--project", project, "search", "x", "--type", "bogus")
    assert code == 2 and "unknown type" in err
    # the JS form: options after the query, through the alias
    code, out, _ = run(
        capsys, "--project", project, "search-memory", "giraffe-free 세션", "--deep", "--json", "--exact"
    )
    data = json.loads(out)
    assert code == 3 and data["tiers"][-1]["tier"] == "l1"
    code, out, _ = run(
        capsys,
        "--project",
        project,
        "search-memory",
        "sqlite",
        "--deep",
        "--json",
        "--tier",
        "l1,l3",
        "--exact",
    )
    data = json.loads(out)
    assert code == 0 and [t["tier"] for t in data["tiers"]] == ["l3", "l1"]
    hit = data["tiers"][1]["hits"][0]
    assert hit["file"].startswith("sessions/") and hit["line"] and hit["highlights"]


def test_user_text_is_never_markup(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    store.memory.write_text(
        "## 2026-11-22\n- [bold red]markup[/bold red] \x1b[31mescape\x1b[0m here\n", "utf-8"
    )
    code, out, _ = run(capsys, "--project", str(store.project), "search", "markup")
    assert code == 0 and "[bold red]markup[/bold red]" in out and "\x1b[31m" not in out


def test_show_timeline_reindex(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    project = str(store.project)
    _, out, _ = run(capsys, "--project", project, "search", "flock", "--deep", "--json")
    hit = next(h for t in json.loads(out)["tiers"] for h in t["hits"] if t["tier"] == "l1")
    code, out, _ = run(capsys, "--project", project, "show", hit["id"])
    assert code == 0 and "The flock is released when the process dies." in out
    code, out, _ = run(capsys, "--project", project, "timeline", hit["id"], "--json")
    data = json.loads(out)
    assert code == 0 and data["anchor"]["id"] == hit["id"] and len(data["before"]) == 1
    code, _, err = run(capsys, "--project", project, "show", "l1-0000000000-5")
    assert code == 3 and "gone" in err
    code, _, err = run(capsys, "--project", project, "show", "nonsense")
    assert code == 2 and "not an entry id" in err  # bad usage (README: exit 2)
    code, out, _ = run(capsys, "--project", project, "reindex", "--json")
    assert code == 0 and json.loads(out)["files"] >= 8
    code, out, _ = run(capsys, "--project", project, "reindex")
    assert code == 0 and "indexed" in out


def test_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--project", str(tmp_path), "search", "anything")
    assert code == 3 and "no memory store" in err
    code, _, err = run(capsys, "--project", str(tmp_path), "reindex")
    assert code == 3


async def test_mcp_server_over_stdio(store: StorePaths, tmp_path: Path) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = dict(os.environ, MEMKEEPER_NO_JOBS="1", HOME=str(store.project.parent / "home"))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "memkeeper.cli.main", "--project", str(store.project), "mcp"],
        env=env,
    )
    # the server's stderr to a file: pytest's captured stderr has no descriptor
    with open(tmp_path / "mcp-stderr.log", "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            assert {"search", "show", "timeline"} <= tools
            found = await session.call_tool("search", {"query": "트라이그램", "deep": True})
            text = text_of(found)
            assert "[memory]" in text and "[l1]" in text and "**트라이그램**" in text
            first_id = text.split("\n")[1].split()[1]
            shown = await session.call_tool("show", {"id": first_id})
            assert "메모리 검색은 트라이그램 인덱스를 사용한다" in text_of(shown)
            around = await session.call_tool("timeline", {"id": first_id, "before": 1, "after": 0})
            assert ">>> " + first_id in text_of(around)
            bad = await session.call_tool("search", {"query": "   "})
            assert text_of(bad).startswith("error: the query is empty")
            none = await session.call_tool("search", {"query": "qqqqq"})
            assert "No results" in text_of(none)  # ranked reads every tier: nothing to widen
            none = await session.call_tool("search", {"query": "qqqqq", "exact": True})
            assert "No results" in text_of(none) and "deep=true" in text_of(none)


def test_plugin_declares_the_mcp_server() -> None:
    plugin = Path(__file__).resolve().parents[3] / "plugin"
    declared = json.loads((plugin / ".mcp.json").read_text("utf-8"))["mcpServers"]["memkeeper"]
    assert declared["args"] == ["mcp"]
    launcher = plugin / declared["command"].replace("${CLAUDE_PLUGIN_ROOT}/", "")
    assert launcher.is_file() and os.access(launcher, os.X_OK)


@pytest.mark.parametrize(
    ("tool", "hit_id"),
    [
        ("show", "x" * 5_000_000),  # not an id at all
        ("timeline", "l2-3fa2b9c1d0-" + "9" * 5_000_000),  # an id's shape, no such entry
        ("show", "l1-0000000000-12"),  # an ordinary id of nothing
    ],
    ids=["garbage", "shaped", "gone"],
)
def test_mcp_a_bad_id_is_a_tool_error_repeated_in_short(store: StorePaths, tool: str, hit_id: str) -> None:
    """What the caller sent is not echoed back whole (it was, 5 MB of it), and an id that names no
    entry is a tool error (``isError``, as the MCP spec has tool failures reported)."""
    import io

    from memkeeper.plugin.mcp_server import Server

    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"id": hit_id}},
    }
    out = io.BytesIO()
    server = Server(store, io.BytesIO(json.dumps(call).encode() + b"\n"), out, warm=False)
    server.run()
    (answer,) = [json.loads(line) for line in out.getvalue().splitlines()]
    result = answer["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("error:") and ("not an entry id" in text or "no entry" in text)
    assert len(text) < 300, len(text)
