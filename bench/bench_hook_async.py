"""What ``"async": true`` on PostToolUse and Stop changes, measured with the real Claude Code CLI offline.

    python bench/bench_hook_async.py [--runs 6] [--claude .e2e/node_modules/.bin/claude]

Two copies of this checkout's plugin, one with hooks.json as it is, one with ``"async": true``
on PostToolUse, PostToolUseFailure and Stop, run alternately as ``claude -p "USE_TOOL ..."
--allowedTools Bash --plugin-dir COPY`` against the loopback mock of the Messages API
(tests/functional/plugin/capture_mock_api.py: one Bash tool use, then a final answer). Each
run's wall time is printed, and what the hooks left: the session's tool uses and prompts in
the store's counters, and, from the CLI's debug log, how long the tool's end waited for
the next API request (a synchronous PostToolUse runs in between) and the last answer for the
session's teardown (a synchronous Stop runs in between). Background jobs are off (``MEMKEEPER_NO_JOBS=1``); each run has its
own project and HOME.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _checkout  # noqa: F401  (the tests package: the mock API)

from memkeeper.core.log import progress
from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import claude_env
from tests.functional.plugin.capture_mock_api import MockAnthropic

REPO = Path(__file__).resolve().parents[1]
ASYNC_EVENTS = ("PostToolUse", "PostToolUseFailure", "Stop")


def plugin_copy(where: Path, make_async: bool) -> Path:
    """This checkout's plugin folder copied to ``where``, its launcher pointed at this Python and package."""
    import memkeeper

    plugin = where / "plugin"
    shutil.copytree(
        REPO / "plugin", plugin, ignore=shutil.ignore_patterns("__pycache__", ".memkeeper-python")
    )
    package = Path(memkeeper.__file__).resolve().parent.parent
    (plugin / ".memkeeper-python").write_text(f"{sys.executable}\n{package}\n")
    hooks_file = plugin / "hooks" / "hooks.json"
    hooks = json.loads(hooks_file.read_text())
    if make_async:
        for event in ASYNC_EVENTS:
            for group in hooks["hooks"][event]:
                for handler in group["hooks"]:
                    handler["async"] = True
    hooks_file.write_text(json.dumps(hooks, indent=1))
    return plugin


def _stamp(line: str) -> float:
    """Seconds of the day of a debug log line (``2026-11-29T09:33:52.762Z [DEBUG] ...``)."""
    clock = line.split(" ", 1)[0].split("T", 1)[1].rstrip("Z")
    hours, minutes, seconds = clock.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def turn_gaps(log: Path) -> dict[str, float | None]:
    """From the CLI's debug log, in ms: the tool's end to the next API request (what a PostToolUse
    hook holds the turn up by) and the last answer's first byte to the session's teardown (the
    MCP server stopped: what a Stop hook holds the end up by)."""
    lines = log.read_text("utf-8", "replace").splitlines() if log.exists() else []
    tool_end = next((_stamp(x) for x in lines if "tool_dispatch_end" in x), None)
    after = [
        _stamp(x) for x in lines if "[API REQUEST]" in x and tool_end is not None and _stamp(x) > tool_end
    ]
    first_bytes = [_stamp(x) for x in lines if "first byte after" in x]
    teardown = next((_stamp(x) for x in lines if "Sending SIGINT to MCP server" in x), None)
    return {
        "tool_end_to_next_request_ms": round((after[0] - tool_end) * 1000) if after and tool_end else None,
        "last_answer_to_teardown_ms": (
            round((teardown - first_bytes[-1]) * 1000) if teardown and first_bytes else None
        ),
    }


def one_run(claude: Path, plugin: Path, scratch: Path, mock_url: str) -> dict[str, object]:
    home, project = scratch / "home", scratch / "project"
    home.mkdir()
    paths = StorePaths(project)
    paths.root.mkdir(parents=True)
    paths.memory.write_text("## 2026-11-20_1000\n- [note]: an earlier fact\n")
    env = dict(claude_env(home, claude, mock_url), MEMKEEPER_NO_JOBS="1")
    log = scratch / "debug.log"
    argv = [str(claude), "-p", "USE_TOOL please", "--model", "haiku", "--output-format", "json"]
    argv += ["--allowedTools", "Bash", "--plugin-dir", str(plugin), "--debug-file", str(log)]
    start = time.perf_counter()
    done = subprocess.run(
        argv, cwd=project, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    wall = time.perf_counter() - start
    session = json.loads(done.stdout or "{}").get("session_id", "?")
    time.sleep(2.0)  # an async hook the CLI did not kill finishes meanwhile
    entry = progress.read_counters(paths)["sessions"].get(session, {})
    return {
        "rc": done.returncode,
        "wall": wall,
        "tool_uses": entry.get("toolUses", 0),
        "messages": entry.get("messages", 0),
        **turn_gaps(log),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=6, help="runs of each form, alternated (default 6)")
    parser.add_argument("--claude", type=Path, default=REPO / ".e2e" / "node_modules" / ".bin" / "claude")
    args = parser.parse_args()
    claude = args.claude.resolve()
    version = subprocess.run(
        [str(claude), "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    print(f"claude {version}; load {os.getloadavg()[0]:.2f}")
    results: dict[str, list[dict[str, object]]] = {"sync": [], "async": []}
    with tempfile.TemporaryDirectory(prefix="mk-async-") as tmp, MockAnthropic() as mock:
        plugins = {form: plugin_copy(Path(tmp) / form, form == "async") for form in results}
        for i in range(args.runs):
            for form in ("sync", "async") if i % 2 == 0 else ("async", "sync"):
                scratch = Path(tmp) / f"{form}-{i}"
                scratch.mkdir()
                result = one_run(claude, plugins[form], scratch, mock.url)
                results[form].append(result)
                print(f"  {form:<5} run {i}: {result}")
    for form, runs in results.items():
        walls = [float(str(r["wall"])) for r in runs]
        kept = sum(r["tool_uses"] == 1 for r in runs)
        gaps = {
            key: statistics.median(float(str(r[key])) for r in runs if r[key] is not None)
            for key in ("tool_end_to_next_request_ms", "last_answer_to_teardown_ms")
        }
        print(
            f"{form:<5} claude -p wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}),"
            f" tool end -> next request {gaps['tool_end_to_next_request_ms']:.0f} ms,"
            f" last answer -> teardown {gaps['last_answer_to_teardown_ms']:.0f} ms (medians),"
            f" tool use counted in {kept}/{len(runs)} runs, rc {sorted({int(str(r['rc'])) for r in runs})}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
