"""Helpers shared by the capture/plugin tests (a uniquely named module, imported by name)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from memkeeper.core.store.paths import StorePaths

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[3]
PLUGIN = REPO / "plugin"
#: How long an end-to-end test waits for a background job's effect (generous: the machine may be loaded).
WAIT_SECONDS = 150
#: How long one run of the real CLI may take.
RUN_TIMEOUT = 180
FIXTURES = REPO / "tests" / "fixtures" / "capture_plugin"
TRANSCRIPT_43B = (
    REPO / "tests" / "fixtures" / "transcripts" / "cc-2.1.197" / "43b864ff-0cc4-405d-97b6-b0657afa9839.jsonl"
)
SESSION_43B = "43b864ff-0cc4-405d-97b6-b0657afa9839"


def hook_command(plugin: Path, event: str) -> list[str]:
    """The process Claude Code starts for ``event`` of the plugin at ``plugin``: its hooks.json handler in
    exec form (``command`` + ``args``: an installed copy), or a command string run by the shell (a
    checkout's ``"${CLAUDE_PLUGIN_ROOT}/bin/memkeeper.cmd" EVENT``), the plugin's root put in."""
    handler = json.loads((plugin / "hooks" / "hooks.json").read_text("utf-8"))["hooks"][event][0]["hooks"][0]
    if "args" in handler:
        return [
            part.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
            for part in [handler["command"], *handler["args"]]
        ]
    return ["/bin/sh", "-c", handler["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))]


def load_hook_inputs() -> list[dict[str, Any]]:
    lines = (FIXTURES / "hook-inputs.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def payload_for(event: str, project: Path, **changes: Any) -> dict[str, Any]:
    """The first real payload of ``event``, pointed at ``project``."""
    for item in load_hook_inputs():
        if item["event"] == event:
            payload = dict(item["stdin"])
            payload["cwd"] = str(project)
            payload.update(changes)
            return payload
    raise KeyError(event)


def write_config(paths: StorePaths, config: dict[str, Any]) -> None:
    paths.root.mkdir(parents=True, exist_ok=True)
    paths.config.write_text(json.dumps(config), "utf-8")


#: The real Claude Code CLIs the end-to-end tests run: pinned, and the newest tested.
CLIS = {"pinned": (".e2e", "2.1.197"), "newest": (".e2e-newest", "2.1.332")}


def claude_env(
    home: Path, claude_bin: Path, api_url: str, *, memkeeper_on_path: bool = False
) -> dict[str, str]:
    """The environment the real Claude Code CLI runs in: a private HOME, no auto-update or other traffic,
    the Messages API at ``api_url`` and none of our or Claude Code's variables from outside.

    PATH holds the CLI and the system only, so the plugin's launchers must find our Python by themselves;
    with ``memkeeper_on_path`` it also holds this Python's bin folder (``memkeeper`` there, as after
    ``pip install memkeeper``). The launchers of ``plugin/`` find the checkout's own ``.venv`` by
    themselves (``plugin/bin/memkeeper.cmd``); a venv anywhere else is named to them in
    ``MEMKEEPER_PYTHON``, as a user would, so the tests pass wherever the venv lives.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC", "MEMKEEPER"))}
    path = [
        str(claude_bin.parent),
        *([str(Path(sys.executable).parent)] if memkeeper_on_path else []),
        "/usr/bin:/bin",
    ]
    env.update(
        HOME=str(home),
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        ANTHROPIC_API_KEY="sk-ant-mock-000",
        ANTHROPIC_BASE_URL=api_url,
        PATH=":".join(path),
    )
    if Path(sys.executable).parent != REPO / ".venv" / "bin":
        env["MEMKEEPER_PYTHON"] = sys.executable
    return env


def run_claude(
    claude_bin: Path, env: dict[str, str], cwd: Path, *args: str, plugin: bool = True
) -> subprocess.CompletedProcess[str]:
    """One run of the real CLI in ``cwd`` (with ``--plugin-dir plugin/`` unless ``plugin`` is false)."""
    argv = [str(claude_bin), *args, *(["--plugin-dir", str(PLUGIN)] if plugin else [])]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)


def memory_project(folder: Path, config: dict[str, Any], memory: str | None = None) -> StorePaths:
    """A project folder whose store holds ``config`` (and ``memory`` as memory.md, if given)."""
    paths = StorePaths(folder)
    paths.root.mkdir(parents=True)
    paths.config.write_text(json.dumps(config))
    if memory is not None:
        paths.memory.write_text(memory)
    return paths


def wait_for(condition: Callable[[], T | None], what: str, seconds: float = WAIT_SECONDS) -> T:
    """Poll ``condition`` until it returns something true; its value."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def wait_quiet(paths: StorePaths, quiet_seconds: float = 3.0) -> None:
    """Until no background job has run for ``quiet_seconds`` (jobs start a moment after the hook that
    spawns them returns, so one idle look is not enough)."""
    from memkeeper.core.store.lock import is_locked

    deadline = time.monotonic() + WAIT_SECONDS
    idle_since: float | None = None
    while time.monotonic() < deadline:
        busy = any(is_locked(paths.state / f"job-{k}.lock") for k in ("l1", "flush", "summary", "index"))
        if not busy:
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= quiet_seconds:
                return
        else:
            idle_since = None
        time.sleep(0.2)
    raise AssertionError("timed out waiting for the background jobs to finish")


def validate_strictly(claude_bin: Path, env: dict[str, str], plugin: Path) -> None:
    """``claude plugin validate --strict PLUGIN`` passes."""
    done = subprocess.run(
        [str(claude_bin), "plugin", "validate", "--strict", str(plugin)],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout


def find_claude(cli: str) -> Path:
    """The real Claude Code CLI ``cli`` (a key of ``CLIS``), checked; the test is skipped when it is
    not installed (``scripts/setup.sh --test`` installs it: a test never does)."""
    import pytest

    folder, version = CLIS[cli]
    binary = REPO / folder / "node_modules" / ".bin" / "claude"
    if not binary.exists():
        pytest.skip(f"Claude Code {version} is not installed in {folder}/ (scripts/setup.sh --test)")
    done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=120)
    assert version in done.stdout, done.stdout + done.stderr
    return binary


def hook_modules_loaded(
    event: str, payload: dict[str, Any], home: Path, modules: tuple[str, ...]
) -> tuple[str, str]:
    """Run the hook ``event`` in a child Python as the launcher does (no site step); (its stdout,
    the comma-joined ``modules`` it had loaded when it ended)."""
    import memkeeper

    code = (
        f"import sys; from memkeeper.plugin import hook; hook.main([{event!r}]);"
        f"print('LOADED=' + ','.join(m for m in {modules!r} if m in sys.modules), file=sys.stderr)"
    )
    env = dict(os.environ, HOME=str(home), MEMKEEPER_NO_JOBS="1")
    env.update(PYTHONPATH=str(Path(str(memkeeper.__file__)).parent.parent))
    done = subprocess.run(
        [sys.executable, "-P", "-S", "-c", code],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=60,
        check=True,
    )
    return done.stdout.decode(), done.stderr.decode().strip().splitlines()[-1].removeprefix("LOADED=")
