"""Helpers of the summary tests (a uniquely named module: test folders have no __init__)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

from memkeeper.core.store.memory_index import archive_entry, update_index
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.summarizers.claude import SYSTEM_PROMPT as CLAUDE_SYSTEM_PROMPT

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "summaries"

SMALL_ARCHIVE = """# Project Memory

## 2026-03-01_0910 (local 03-01_1010)
- [auth]: decided to use JWT in an httpOnly cookie instead of localStorage because of XSS
- [auth]: login bug: refresh token not rotated
## 2026-03-02_1400 (local 03-02_1500)
- [auth]: fixed the refresh token rotation bug; tests pass
- [db]: switched to SQLite WAL mode to avoid writer stalls
"""

GOOD_ANSWER = {
    "dateRange": {"first": "2026-03-01", "last": "2026-03-02"},
    "sectionCount": 2,
    "themes": [{"name": "auth", "summary": "JWT cookies; a rotation bug fixed.", "sessions": ["2026-03-01"]}],
    "keyDecisions": [{"decision": "JWT in httpOnly cookie", "reason": "XSS", "date": "2026-03-01"}],
    "issues": [{"issue": "refresh token not rotated", "status": "resolved", "date": "2026-03-02"}],
    "overallSummary": "Two days of auth and database work.",
}


def add_archive(
    paths: StorePaths, name: str = "memory_20260302_150000.md", data: str | bytes = SMALL_ARCHIVE
) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    paths.archive(name).write_bytes(raw)

    def add(index: dict[str, Any]) -> None:
        index["rotatedFiles"] = [e for e in index["rotatedFiles"] if e.get("file") != name]
        index["rotatedFiles"].append(archive_entry(paths, name))

    update_index(paths, add)
    return name


def write_config(paths: StorePaths, config: dict[str, Any]) -> None:
    paths.config.write_text(json.dumps(config), "utf-8")


def write_script(folder: Path, name: str, body: str) -> Path:
    """An executable Python script run by this interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body), "utf-8")
    path.chmod(0o755)
    return path


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); read its state when /proc exists.
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        try:
            return stat.read_text().split(") ", 1)[1][0] != "Z"
        except (OSError, IndexError):
            return False
    return True


#: What the summarizer must ask of ``claude``, written out here rather than taken from the backend, so the
#: tests see any change: one print-mode turn of haiku in stream JSON, no tools, no hooks, no session
#: file, no MCP server, no slash commands, and our system prompt.
CLAUDE_ARGV = [
    "-p",
    *("--model", "haiku"),
    *("--output-format", "stream-json", "--verbose", "--include-partial-messages"),
    *("--tools", ""),
    *("--max-turns", "1"),
    "--no-session-persistence",
    # No hook in the child, no extended thinking, an answer of at most 4,096 tokens (an L3 summary's).
    *(
        "--settings",
        '{"disableAllHooks":true,"alwaysThinkingEnabled":false,"env":{"CLAUDE_CODE_DISABLE_THINKING":"1",'
        '"MAX_THINKING_TOKENS":"0","CLAUDE_CODE_MAX_OUTPUT_TOKENS":"4096","CLAUDE_CODE_EFFORT_LEVEL":"low"}}',
    ),
    *("--strict-mcp-config", "--mcp-config", '{"mcpServers": {}}'),
    "--disable-slash-commands",
    *("--system-prompt", CLAUDE_SYSTEM_PROMPT),
]

#: A stand-in for the real ``claude``: checks its argv, records stdin, env and cwd, then
#: behaves as FAKE_CLAUDE_MODE says (ok, hang, slow, fail, refused, crash, garbage, old).
FAKE_CLAUDE = """
import json, os, subprocess, sys, time
expected = __ARGV__
log = os.environ["FAKE_CLAUDE_LOG"]
prompt = sys.stdin.read()
with open(log, "w", encoding="utf-8") as f:
    json.dump({"argv": sys.argv[1:], "stdin": prompt, "guard": os.environ.get("MEMKEEPER_IN_JOB"),
               "cwd": os.getcwd()}, f)
if os.environ.get("FAKE_CLAUDE_MODE") == "old" and "--disable-slash-commands" in sys.argv:
    sys.stderr.write("error: unknown option '--disable-slash-commands'\\n")
    sys.exit(1)
if os.environ.get("FAKE_CLAUDE_MODE") == "old":
    expected = [a for a in expected if a != "--disable-slash-commands"]
if sys.argv[1:] != expected:
    print(json.dumps({"type": "result", "is_error": True, "result": "unexpected argv %r" % sys.argv[1:]}))
    sys.exit(1)
mode = os.environ.get("FAKE_CLAUDE_MODE", "ok")
if mode == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    with open(log + ".child", "w") as f:
        f.write(str(child.pid))
    time.sleep(120)
elif mode == "slow":
    print(json.dumps({"type": "stream_event", "event": {"type": "message_start"}}), flush=True)
    time.sleep(120)
elif mode == "refused":
    print(json.dumps({"type": "result", "subtype": "success", "is_error": True,
                      "result": "API Error: Unable to connect to API (ConnectionRefused)"}))
    sys.exit(1)
elif mode == "fail":
    print(json.dumps({"type": "result", "subtype": "success", "is_error": True,
                      "result": "Not logged in · Please run /login"}))
    sys.exit(1)
elif mode == "crash":
    sys.stderr.write("panic: something broke\\n")
    sys.exit(3)
elif mode == "garbage":
    print("\\x1b[31mSegmentation fault\\x1b[0m (core dumped)")
else:
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                      "result": os.environ.get("FAKE_CLAUDE_ANSWER", "{}"),
                      "usage": {"input_tokens": 1200, "cache_read_input_tokens": 300, "output_tokens": 250},
                      "modelUsage": {"claude-haiku-4-5-20251001": {}}}))
""".replace("__ARGV__", repr(CLAUDE_ARGV))
