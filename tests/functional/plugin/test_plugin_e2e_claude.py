"""End to end with the real Claude Code CLI (npm, pinned) against a loopback mock of the Messages API.

The CLI runs with a temporary HOME, no network and ``--plugin-dir plugin/`` (or the plugin
installed by ``memkeeper install``); the mock also answers the ``claude -p`` summarizer that
the flush job starts, so the flush bullets in memory.md come from it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core import counters
from memkeeper.core.flush import read_runs
from memkeeper.core.store import StorePaths
from tests.functional.plugin.capture_helpers import REPO
from tests.functional.plugin.capture_mock_api import FINAL_TEXT, MockAnthropic

pytestmark = pytest.mark.e2e

CLAUDE_VERSION = "2.1.197"
E2E_DIR = REPO / ".e2e"
PLUGIN = REPO / "plugin"
RUN_TIMEOUT = 180
WAIT_SECONDS = 120


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    binary = E2E_DIR / "node_modules" / ".bin" / "claude"
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(
                "npm is not installed: the end-to-end tests need npm to fetch @anthropic-ai/claude-code"
            )
        subprocess.run(
            [
                npm,
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(E2E_DIR),
                f"@anthropic-ai/claude-code@{CLAUDE_VERSION}",
            ],
            check=True,
            timeout=900,
            capture_output=True,
        )
    done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=120)
    assert CLAUDE_VERSION in done.stdout, done.stdout + done.stderr
    return binary


@pytest.fixture(scope="module")
def mock() -> Iterator[MockAnthropic]:
    with MockAnthropic() as server:
        yield server


@pytest.fixture
def e2e_env(home: Path, claude_bin: Path, mock: MockAnthropic) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CLAUDE", "ANTHROPIC", "MEMKEEPER"))
        and key not in ("PYTHONDONTWRITEBYTECODE",)
    }
    env.update(
        HOME=str(home),
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        ANTHROPIC_API_KEY="sk-ant-mock-000",
        ANTHROPIC_BASE_URL=mock.url,
        # The flush job's summarizer is this same `claude`; no venv on PATH on purpose:
        # the hook launcher must find our Python by itself.
        PATH=f"{claude_bin.parent}:/usr/bin:/bin",
    )
    return env


@pytest.fixture
def e2e_project(tmp_path: Path) -> StorePaths:
    project = tmp_path / "proj"
    memory = project / ".claude" / "memory"
    memory.mkdir(parents=True)
    (memory / "config.json").write_text(
        json.dumps({"memory": {"flushEvery": 2}, "summarizer": {"backend": "claude", "minCallChars": 0}})
    )
    (memory / "memory.md").write_text(
        "## 2026-11-20_1000 (local 11-20_1900)\n- [marker]: INITMARKER-4242 is the codename.\n"
    )
    return StorePaths(project)


Claude = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def claude(claude_bin: Path, e2e_env: dict[str, str], e2e_project: StorePaths) -> Claude:
    def run(*args: str, plugin: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [str(claude_bin), *args]
        if plugin:
            argv += ["--plugin-dir", str(PLUGIN)]
        return subprocess.run(
            argv, cwd=e2e_project.project, env=e2e_env, capture_output=True, text=True, timeout=RUN_TIMEOUT
        )

    return run


def wait_for(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def l1_files(paths: StorePaths, session: str) -> list[Path]:
    return sorted(paths.sessions.glob(f"*_{session[:8]}.l1.jsonl"))


def l1_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def jobs_idle(paths: StorePaths) -> bool:
    from memkeeper.core.lock import is_locked

    return not any(is_locked(paths.state / f"job-{kind}.lock") for kind in ("l1", "flush", "summary"))


def wait_quiet(paths: StorePaths, quiet_seconds: float = 3.0) -> None:
    """Wait until no background job has run for ``quiet_seconds`` (jobs start a moment after
    the hook that spawns them returns, so one idle look is not enough)."""
    deadline = time.monotonic() + WAIT_SECONDS
    idle_since: float | None = None
    while time.monotonic() < deadline:
        if jobs_idle(paths):
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= quiet_seconds:
                return
        else:
            idle_since = None
        time.sleep(0.2)
    raise AssertionError("timed out waiting for the background jobs to finish")


def test_plugin_validates_strictly(claude_bin: Path, e2e_env: dict[str, str]) -> None:
    done = subprocess.run(
        [str(claude_bin), "plugin", "validate", "--strict", str(PLUGIN)],
        env=e2e_env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout


def test_init_only_puts_memory_into_session_start_context(
    claude: Claude, tmp_path: Path, e2e_project: StorePaths
) -> None:
    debug = tmp_path / "debug.log"
    done = claude("--init-only", "--debug-file", str(debug))
    assert done.returncode == 0, done.stdout + done.stderr
    log = debug.read_text("utf-8", "replace")
    assert "Loading hooks from plugin: memkeeper" in log
    assert '"additionalContext"' in log and "INITMARKER-4242" in log


def test_session_resume_and_compact(claude: Claude, e2e_project: StorePaths, mock: MockAnthropic) -> None:
    paths = e2e_project
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
    session = result["session_id"]

    # SessionStart's memory reached the model.
    assert any("INITMARKER-4242" in json.dumps(body) for body in mock.requests[before:])
    # The prompt and the tool call were counted for this session.
    counts = counters.read_counters(paths)["sessions"][session]
    assert (counts["messages"], counts["toolUses"]) == (1, 1)

    # After SessionEnd the detached jobs write L1 (with the typed prompt) and flush into memory.md.
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

    # Resume appends to the same L1 file.
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

    # /compact fires PreCompact, which starts a flush.
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
    env = dict(e2e_env, PATH=f"{claude_bin.parent}:{Path(sys.executable).parent}:/usr/bin:/bin")
    done = subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", "install", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["registered"] is True
    marketplace = home / ".claude" / "memkeeper-marketplace"
    assert (marketplace / ".claude-plugin" / "marketplace.json").is_file()
    valid = subprocess.run(
        [str(claude_bin), "plugin", "validate", "--strict", str(marketplace / "plugins" / "memkeeper")],
        env=e2e_env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert valid.returncode == 0, valid.stdout + valid.stderr
    listing = subprocess.run(
        [str(claude_bin), "plugin", "list", "--json"],
        env=e2e_env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert any(p["id"] == "memkeeper@memkeeper-local" and p["enabled"] for p in json.loads(listing.stdout))
    # Installing twice is fine.
    again = subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", "install", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert again.returncode == 0 and json.loads(again.stdout)["registered"] is True

    # Without --plugin-dir, the installed plugin's hooks run (found their Python via the record).
    run = subprocess.run(
        [
            str(claude_bin),
            "-p",
            "hi from the installed plugin",
            "--model",
            "haiku",
            "--output-format",
            "json",
        ],
        cwd=e2e_project.project,
        env=e2e_env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    session = json.loads(run.stdout)["session_id"]
    assert counters.read_counters(e2e_project)["sessions"][session]["messages"] == 1
    wait_for(lambda: l1_files(e2e_project, session), "the L1 file of the installed plugin's session")
    wait_quiet(e2e_project)

    removed = subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", "uninstall", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not marketplace.exists()
    listing = subprocess.run(
        [str(claude_bin), "plugin", "list", "--json"],
        env=e2e_env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert not any(p["id"].startswith("memkeeper@") for p in json.loads(listing.stdout or "[]"))
    assert e2e_project.memory.exists()  # uninstalling never touches the memory
