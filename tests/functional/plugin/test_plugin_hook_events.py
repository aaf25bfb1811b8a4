"""The hook dispatcher on Claude Code's real stdin payloads: counting, jobs, context, failure modes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.log import counters, progress
from memkeeper.core.store.paths import StorePaths
from memkeeper.plugin import hook
from tests.functional.plugin.capture_helpers import REPO, hook_command, payload_for, write_config

RunHook = Callable[[str, dict[str, Any] | bytes], tuple[int, str]]
Jobs = list[tuple[str, dict[str, Any] | None]]


def session_counts(paths: StorePaths, session: str) -> dict[str, Any]:
    return dict(progress.read_counters(paths)["sessions"][session])


def test_every_real_payload_exits_zero(
    project: Path, run_hook: RunHook, hook_inputs: list[dict[str, Any]], started_jobs: Jobs
) -> None:
    for item in hook_inputs:
        payload = dict(item["stdin"], cwd=str(project))
        code, _out = run_hook(item["event"], payload)
        assert code == 0, item["event"]
    assert not (project / "CLAUDE.md").exists()
    assert not (Path(os.environ["HOME"]) / ".claude" / "projects").exists()
    assert not (project / ".claude" / "memory" / "logs" / "memkeeper.log").exists()


def test_session_start_without_memory_prints_nothing(project: Path, run_hook: RunHook) -> None:
    code, out = run_hook("SessionStart", payload_for("SessionStart", project))
    assert code == 0
    assert out == ""
    assert (project / ".claude" / "memory" / "sessions").is_dir()
    assert oct((project / ".claude" / "memory").stat().st_mode & 0o777) == "0o700"


def test_the_hook_keeps_the_store_of_its_cwd_before_claude_project_dir(
    tmp_path: Path, run_hook: RunHook, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session that moved into a worktree (the hook's cwd) keeps memory there, not where it started."""
    started, worktree = tmp_path / "repo", tmp_path / "worktree"
    started.mkdir()
    worktree.mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(started))
    code, _ = run_hook("SessionStart", payload_for("SessionStart", worktree))
    assert code == 0
    assert (worktree / ".claude" / "memory" / "sessions").is_dir()
    assert not (started / ".claude").exists()


def test_session_start_gives_memory_as_additional_context(store: StorePaths, run_hook: RunHook) -> None:
    store.memory.write_text(
        "## 2026-11-20_1000 (local 11-20_1900)\n- [db]: We chose SQLite FTS5 for search.\n"
    )
    code, out = run_hook("SessionStart", payload_for("SessionStart", store.project))
    assert code == 0
    data = json.loads(out)
    specific = data["hookSpecificOutput"]
    assert specific["hookEventName"] == "SessionStart"
    assert "We chose SQLite FTS5 for search." in specific["additionalContext"]
    assert len(specific["additionalContext"]) <= 10_000


def test_prompts_and_tool_uses_are_counted_per_session(store: StorePaths, run_hook: RunHook) -> None:
    prompt = payload_for("UserPromptSubmit", store.project, session_id="s-1")
    tool = payload_for("PostToolUse", store.project, session_id="s-1")
    run_hook("UserPromptSubmit", prompt)
    run_hook("PostToolUse", tool)
    run_hook("PostToolUse", tool)
    run_hook("PostToolUse", dict(tool, session_id="other-session"))
    mine = session_counts(store, prompt["session_id"])
    assert (mine["messages"], mine["toolUses"]) == (1, 2)
    assert session_counts(store, "other-session")["toolUses"] == 1
    assert progress.read_counters(store)["toolUses"] == 3


def test_task_notification_prompts_are_not_counted(store: StorePaths, run_hook: RunHook) -> None:
    prompt = payload_for(
        "UserPromptSubmit", store.project, prompt="<task-notification>\n<task-id>x</task-id>"
    )
    run_hook("UserPromptSubmit", prompt)
    assert prompt["session_id"] not in progress.read_counters(store)["sessions"]


def test_flush_starts_when_flush_every_is_reached(
    store: StorePaths, run_hook: RunHook, started_jobs: Jobs
) -> None:
    write_config(store, {"memory": {"flushEvery": 3}})
    tool = payload_for("PostToolUse", store.project)
    run_hook("PostToolUse", tool)
    run_hook("PostToolUse", tool)
    assert started_jobs == []
    run_hook("PostToolUse", tool)
    assert [kind for kind, _ in started_jobs] == ["flush"]
    options = started_jobs[0][1] or {}
    assert options["session_id"] == tool["session_id"]
    assert options["transcript_path"] == tool["transcript_path"]
    assert options["reason"] == "count"
    # The count restarts, so the next events do not start the job again.
    assert session_counts(store, tool["session_id"])["unflushed"] == 0
    run_hook("PostToolUse", tool)
    assert len(started_jobs) == 1


def test_memory_disabled_counts_but_never_flushes(
    store: StorePaths, run_hook: RunHook, started_jobs: Jobs
) -> None:
    write_config(store, {"memory": {"enabled": False, "flushEvery": 1}})
    run_hook("PostToolUse", payload_for("PostToolUse", store.project))
    assert started_jobs == []
    assert progress.read_counters(store)["toolUses"] == 1


def test_stop_only_starts_a_due_flush(store: StorePaths, run_hook: RunHook, started_jobs: Jobs) -> None:
    write_config(store, {"memory": {"flushEvery": 50}})
    stop = payload_for("Stop", store.project, session_id="s-1")
    run_hook("PostToolUse", payload_for("PostToolUse", store.project, session_id="s-1"))
    run_hook("Stop", stop)
    assert started_jobs == []
    assert session_counts(store, stop["session_id"])["toolUses"] == 1  # Stop itself counts nothing
    write_config(store, {"memory": {"flushEvery": 1}})
    run_hook("Stop", stop)
    assert [kind for kind, _ in started_jobs] == ["flush"]


def test_pre_compact_flushes_and_session_end_hands_over(
    store: StorePaths, run_hook: RunHook, started_jobs: Jobs
) -> None:
    run_hook("PreCompact", payload_for("PreCompact", store.project))
    assert [(k, (o or {})["reason"]) for k, o in started_jobs] == [("flush", "precompact")]
    started_jobs.clear()
    end = payload_for("SessionEnd", store.project)
    run_hook("SessionEnd", end)
    assert [k for k, _ in started_jobs] == ["l1", "flush"]
    for _kind, options in started_jobs:
        assert options == {
            "reason": "session-end",
            "session_id": end["session_id"],
            "transcript_path": end["transcript_path"],
        }
    from memkeeper.core.capture.live_sessions import read_sessions

    assert read_sessions(store)[end["session_id"]]["ended"] is True


def test_killed_session_is_flushed_at_next_start(
    store: StorePaths, run_hook: RunHook, started_jobs: Jobs
) -> None:
    run_hook("SessionStart", payload_for("SessionStart", store.project, session_id="killed-one"))
    assert started_jobs == []
    run_hook("SessionStart", payload_for("SessionStart", store.project, session_id="next-one"))
    assert [(k, (o or {})["reason"]) for k, o in started_jobs] == [("flush", "stale-sessions")]


def test_internal_error_exits_zero_with_one_log_line(
    store: StorePaths, run_hook: RunHook, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(counters, "bump_at", broken)
    code, out = run_hook("PostToolUse", payload_for("PostToolUse", store.project))
    assert (code, out) == (0, "")
    log = (store.logs / "memkeeper.log").read_text().splitlines()
    assert len(log) == 1
    assert "hook PostToolUse: RuntimeError: disk on fire" in log[0]


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1, 2]", b"\xff\xfe garbage", b'{"cwd": 42}'])
def test_bad_stdin_exits_zero(
    project: Path, run_hook: RunHook, raw: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    for event in (
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "Stop",
        "PreCompact",
        "SessionEnd",
        "Nope",
    ):
        assert run_hook(event, raw)[0] == 0


def test_hooks_do_nothing_inside_our_own_jobs(
    store: StorePaths, run_hook: RunHook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMKEEPER_IN_JOB", "1")
    run_hook("PostToolUse", payload_for("PostToolUse", store.project))
    assert not store.counters.exists()


def test_big_payload_is_read_from_its_front(store: StorePaths, run_hook: RunHook) -> None:
    tool = payload_for("PostToolUse", store.project)
    tool["tool_response"] = {"stdout": "x" * (hook.FULL_PARSE_BYTES * 2), "cwd": "/elsewhere"}
    run_hook("PostToolUse", tool)
    assert session_counts(store, tool["session_id"])["toolUses"] == 1


def test_parse_payload_front_fields() -> None:
    big = json.dumps({"session_id": "s1", "cwd": "/p", "tool_response": {"out": "y" * hook.FULL_PARSE_BYTES}})
    assert hook.parse_payload(big.encode()) == {"session_id": "s1", "cwd": "/p"}
    assert hook.parse_payload(b'{"session_id": "s2", "cwd": "/q"}') == {"session_id": "s2", "cwd": "/q"}
    assert hook.parse_payload(b"   ") == {}


def _subprocess_env(home: Path) -> dict[str, str]:
    env = dict(os.environ, HOME=str(home), MEMKEEPER_NO_JOBS="1")
    env.pop("CLAUDE_PROJECT_DIR", None)
    env.pop("MEMKEEPER_PYTHON", None)
    return env


def copy_plugin(target: Path) -> Path:
    """The launcher files of plugin/ (bin/memkeeper.cmd, lib/boot, hooks/hooks.json) copied to ``target``."""
    for folder, name in (("bin", "memkeeper.cmd"), ("lib", "boot"), ("hooks", "hooks.json")):
        (target / folder).mkdir(parents=True, exist_ok=True)
        (target / folder / name).write_bytes((REPO / "plugin" / folder / name).read_bytes())
    (target / "bin" / "memkeeper.cmd").chmod(0o755)
    return target


def test_launcher_runs_the_hook_with_a_bare_path(store: StorePaths, home: Path) -> None:
    """bin/memkeeper.cmd finds our Python with no venv on PATH and never fails."""
    store.memory.write_text("## 2026-11-20_1000\n- [x]: launcher memory marker\n")
    env = _subprocess_env(home)
    env["PATH"] = "/usr/bin:/bin"
    env["MEMKEEPER_PYTHON"] = sys.executable
    start = json.dumps(payload_for("SessionStart", store.project)).encode()
    done = subprocess.run(
        hook_command(REPO / "plugin", "SessionStart"), input=start, capture_output=True, env=env, timeout=60
    )
    assert done.returncode == 0
    assert "launcher memory marker" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    # Without MEMKEEPER_PYTHON: the Python `memkeeper install` records beside the plugin (wherever
    # this test's venv lives).
    import memkeeper

    env.pop("MEMKEEPER_PYTHON")
    installed = copy_plugin(home / "plugin")
    package_parent = Path(memkeeper.__file__).absolute().parent.parent
    (installed / ".memkeeper-python").write_text(f"{sys.executable}\n{package_parent}\n")
    tool = json.dumps(payload_for("PostToolUse", store.project)).encode()
    done = subprocess.run(
        hook_command(installed, "PostToolUse"), input=tool, capture_output=True, env=env, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert progress.read_counters(store)["toolUses"] == 1


def test_launcher_exits_zero_when_no_python_is_found(tmp_path: Path, home: Path) -> None:
    plugin = copy_plugin(tmp_path / "plugin")
    env = _subprocess_env(home)
    env["PATH"] = str(tmp_path / "empty")
    env["MEMKEEPER_PYTHON"] = str(tmp_path / "missing-python")
    done = subprocess.run(
        hook_command(plugin, "PostToolUse"), input=b"{}", capture_output=True, env=env, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    # SessionStart, the first hook of a session, tells the user (no Python to parse its stdin: every time)
    done = subprocess.run(
        hook_command(plugin, "SessionStart"), input=b"{}", capture_output=True, env=env, timeout=60
    )
    assert done.returncode == 0
    assert "no Python was found" in json.loads(done.stdout)["systemMessage"]


def test_stdin_left_open_does_not_hang(store: StorePaths, home: Path) -> None:
    """A caller that never closes stdin: the hook gives up reading after its timeout."""
    env = _subprocess_env(home)
    code = "import sys; from memkeeper.plugin import hook; hook.STDIN_TIMEOUT = 0.3; sys.exit(hook.main(['Stop']))"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, env=env, cwd=store.project)
    try:
        assert proc.wait(timeout=60) == 0
    finally:
        assert proc.stdin is not None
        proc.stdin.close()


@pytest.mark.parametrize("in_thread", [False, True], ids=["main-thread", "other-thread"])
@pytest.mark.parametrize("non_blocking", [True, False], ids=["read-now", "no-set_blocking"])
def test_stdin_read_keeps_what_came_before_its_deadline(
    monkeypatch: pytest.MonkeyPatch, in_thread: bool, non_blocking: bool
) -> None:
    """A writer that never closes: the read ends at its deadline in any thread, keeping the bytes read,
    and leaves no signal handler or timer behind (where a pipe cannot be read without waiting too)."""
    import signal
    import threading

    if not non_blocking:
        monkeypatch.delattr(os, "set_blocking", raising=False)

    before = {name: signal.getsignal(getattr(signal, name)) for name in ("SIGINT", "SIGTERM")}
    read_end, write_end = os.pipe()
    got: list[bytes] = []
    try:
        os.write(write_end, b'{"session_id": "s1"')  # and the writer never closes
        with open(read_end, "rb", closefd=False) as stdin:
            monkeypatch.setattr(sys, "stdin", stdin)
            if in_thread:
                thread = threading.Thread(target=lambda: got.append(hook.read_stdin(0.2)))
                thread.start()
                thread.join(timeout=60)
            else:
                got.append(hook.read_stdin(0.2))
    finally:
        os.close(read_end)
        os.close(write_end)
    assert got == [b'{"session_id": "s1"']
    assert {name: signal.getsignal(getattr(signal, name)) for name in before} == before


def test_a_payload_already_there_is_read_without_a_thread() -> None:
    """Claude Code writes the payload and closes stdin: the hook reads it without waiting,
    and without the bounded wait (for a writer that is not done) and its thread."""
    code = (
        "import sys\nfrom memkeeper.plugin import hook\n"
        "data = hook.read_stdin()\nprint(len(data), 'memkeeper.core.basics.waits' in sys.modules)"
    )
    payload = b'{"session_id": "s1"}' * 2_000  # (within a pipe's buffer: written whole, then closed)
    read_end, write_end = os.pipe()
    os.write(write_end, payload)
    os.close(write_end)
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-c", code], stdin=read_end, capture_output=True, timeout=60
        )
    finally:
        os.close(read_end)
    assert done.stdout.split() == [str(len(payload)).encode(), b"False"], done.stderr


HEAVY = ("pydantic", "rich", "argparse", "textual", "anthropic", "mcp")


@pytest.mark.parametrize(
    "event", ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "PreCompact", "SessionEnd"]
)
def test_hook_path_imports_no_heavy_modules(store: StorePaths, home: Path, event: str) -> None:
    store.memory.write_text("## 2026-11-20_1000\n- [x]: memory\n")
    payload = payload_for(event, store.project)
    code = (
        "import sys, json; from memkeeper.plugin import hook; hook.main([sys.argv[1]]);"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=_subprocess_env(home),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.decode().strip().splitlines()[-1]) == []


#: Standard-library modules the counting hooks do not import. They read their JSON with the
#: json package; what stays out is what they have no use for (pathlib: the store's folders are
#: strings there; subprocess: no job starts; sqlite3: no index is read), dataclasses with the
#: inspect it imports, and typing (with the contextlib it imports): each alone would cost a hook
#: more than its budget leaves (their modules name types without typing, their records are
#: written-out tuples, see docs/hook-path.md). The budget itself is bench/bench_hooks.py's.
NOT_ON_THE_COUNT_PATH = (
    "typing",
    "contextlib",
    "pathlib",
    "dataclasses",
    "inspect",
    "subprocess",
    "sqlite3",
    "datetime",
    "select",
)


@pytest.mark.parametrize("event", ["PostToolUse", "Stop", "UserPromptSubmit"])  # a prompt, with no index
def test_counting_hooks_load_only_what_they_use(store: StorePaths, home: Path, event: str) -> None:
    # As the launcher runs them: -S (no site), the package folder first on the module path.
    import memkeeper

    package_parent = str(Path(memkeeper.__file__).parent.parent)
    code = (
        "import sys; from memkeeper.plugin import hook; hook.main([sys.argv[1]]);"
        f"print(','.join(sorted(m for m in {NOT_ON_THE_COUNT_PATH!r} if m in sys.modules)), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-S", "-c", code, event],
        input=json.dumps(payload_for(event, store.project)).encode(),
        capture_output=True,
        env=dict(_subprocess_env(home), PYTHONPATH=package_parent),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().strip().splitlines()[-1:] in ([], [""])
    if event == "PostToolUse":  # the count was really taken
        assert session_counts(store, payload_for(event, store.project)["session_id"])["toolUses"] == 1


def test_tool_use_rotates_memory_when_due(store: StorePaths, run_hook: RunHook, started_jobs: Jobs) -> None:
    write_config(
        store,
        {"memoryRotation": {"thresholdTokens": 200, "carryoverTokens": 40}, "memory": {"flushEvery": 1000}},
    )
    store.memory.write_text("".join(f"## 2026-11-20_{i:04d}\n- [t]: fact {i}\n" for i in range(40)))
    run_hook("PostToolUse", payload_for("PostToolUse", store.project))
    archives = list(store.root.glob("memory_*.md"))
    assert len(archives) == 1
    assert "fact 39" in store.memory.read_text() and "fact 0\n" not in store.memory.read_text()
    assert [kind for kind, _ in started_jobs] == ["summary"]


def test_a_removed_project_folder_is_not_recreated(tmp_path: Path, run_hook: RunHook) -> None:
    gone = tmp_path / "deleted-project"
    for event in ("SessionStart", "PostToolUse", "SessionEnd"):
        assert run_hook(event, payload_for(event, gone))[0] == 0
    assert not gone.exists()


def test_failed_tool_calls_count_as_tool_uses(store: StorePaths, run_hook: RunHook) -> None:
    failure = dict(
        payload_for("PostToolUse", store.project, session_id="s-f"), hook_event_name="PostToolUseFailure"
    )
    failure.pop("tool_response")
    failure["error"] = "Exit code 1"
    run_hook("PostToolUseFailure", failure)
    assert session_counts(store, "s-f")["toolUses"] == 1


def test_run_exits_zero_whatever_main_does(store: StorePaths, home: Path) -> None:
    """The launcher's entry leaves at once with 0, its output flushed, even when main raises."""
    payload = json.dumps(payload_for("SessionStart", store.project)).encode()
    store.memory.write_text("## 2026-11-20_1000\n- [x]: run flushes this marker\n")
    code = "import sys; from memkeeper.plugin import hook; hook.run(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-P", "-c", code, "SessionStart"],
        input=payload,
        capture_output=True,
        env=_subprocess_env(home),
        timeout=60,
    )
    assert done.returncode == 0
    assert "run flushes this marker" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    failing = "import sys; from memkeeper.plugin import hook\ndef boom(argv): raise SystemExit(3)\nhook.main = boom; hook.run(['PostToolUse'])"
    done = subprocess.run(
        [sys.executable, "-P", "-c", failing],
        input=b"{}",
        capture_output=True,
        env=_subprocess_env(home),
        timeout=60,
    )
    assert done.returncode == 0


def test_launcher_exits_zero_when_the_package_fails_to_import(
    tmp_path: Path, home: Path, bare_python: str
) -> None:
    """A package that breaks on import still ends in exit 0, and only SessionStart says so."""
    plugin = copy_plugin(tmp_path / "plugin")
    broken = tmp_path / "site" / "memkeeper"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise RuntimeError('broken install')\n")
    (plugin / ".memkeeper-python").write_text(f"{bare_python}\n{broken.parent}\n")
    env = _subprocess_env(home)
    start = json.dumps({"source": "startup"}).encode()
    for event, stdin in (("PostToolUse", b"{}"), ("SessionStart", start)):
        done = subprocess.run(
            hook_command(plugin, event), input=stdin, capture_output=True, env=env, timeout=60
        )
        assert done.returncode == 0 and done.stderr == b""
        if event == "SessionStart":
            message = json.loads(done.stdout)["systemMessage"]
            assert "RuntimeError: broken install" in message and "`memkeeper install`" in message
        else:
            assert done.stdout == b""


def test_a_sessions_recall_state_goes_when_it_ends_and_a_bursts_closed_count_logs_at_the_next_start(
    store: StorePaths, run_hook: RunHook, started_jobs: Jobs
) -> None:
    """Neither piles up: the per-session recall state (and its lock) is removed at SessionEnd; the
    closed count logs a burst of folds left (each too fresh when its fold ran) at SessionStart."""
    from memkeeper.core.recall.ask import state_dir

    recall = Path(state_dir(str(store.root)))
    start = payload_for("SessionStart", store.project, session_id="s-burst")
    run_hook("SessionStart", start)
    assert {p.suffix for p in recall.iterdir()} >= {".json"}
    for _ in range(20):  # every count folds: each fold closes a log
        counters.bump_at(str(store.state), "s-burst", messages=1, fold=True)
    closed = [p for p in store.state.iterdir() if p.name.endswith(counters.CLOSED_SUFFIX)]
    assert len(closed) >= 19
    totals = session_counts(store, "s-burst")
    run_hook("SessionEnd", payload_for("SessionEnd", store.project, session_id="s-burst"))
    assert [p.name for p in recall.iterdir() if not p.name.endswith(".sock")] == []
    for path in closed:  # quiet by now, as after the burst
        os.utime(path, (path.stat().st_mtime - 60, path.stat().st_mtime - 60))
    run_hook("SessionStart", payload_for("SessionStart", store.project, session_id="s-next"))
    assert [p.name for p in store.state.iterdir() if p.name.endswith(counters.CLOSED_SUFFIX)] == []
    assert session_counts(store, "s-burst") == totals  # nothing counted twice or lost


def test_a_checkout_plugin_finds_memkeeper_without_the_site_step(store: StorePaths, home: Path) -> None:
    """The checkout's launcher imports memkeeper from the checkout's editable install (the folder its
    venv's .pth names), as an installed copy does from its record: a hook runs no site step."""
    if not any((REPO / "build").glob("__editable__.memkeeper-*")):
        pytest.skip("this checkout has no editable install (scripts/setup.py makes it)")
    payload = payload_for("PostToolUse", store.project)
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-E",
            "-P",
            "-S",
            str(REPO / "plugin" / "lib" / "boot"),
            "PostToolUse",
        ],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=store.project,
        env=_subprocess_env(home),
        timeout=60,
    )
    assert done.returncode == 0
    lines = done.stderr.decode().splitlines()
    modules = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    assert "memkeeper.plugin.hook" in modules and "site" not in modules
    assert session_counts(store, payload["session_id"])["toolUses"] == 1


def test_a_prompt_counts_when_the_hook_runs_in_a_removed_folder(
    store: StorePaths, home: Path, tmp_path: Path
) -> None:
    """The hook's own folder is gone (the payload's cwd is not): the prompt is counted in the payload's project."""
    gone = tmp_path / "gone"
    gone.mkdir()
    payload = payload_for("UserPromptSubmit", store.project)
    command = " ".join(f"'{part}'" for part in hook_command(REPO / "plugin", "UserPromptSubmit"))
    done = subprocess.run(
        ["/bin/sh", "-c", f"cd '{gone}' && rmdir '{gone}' && exec {command}"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=_subprocess_env(home),
        timeout=60,
    )
    assert done.returncode == 0 and not gone.exists()
    assert session_counts(store, payload["session_id"])["messages"] == 1
