"""A count (a tool use, a prompt): one line in the log, and the store's root entries looked at when it folds,
before anything there is read."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from memkeeper.core.config import reader as settings
from memkeeper.core.log import progress
from memkeeper.core.store.paths import StorePaths
from memkeeper.plugin import hook


def post_tool_use(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> int:
    payload = {"session_id": "s1", "cwd": str(store.project), "hook_event_name": "PostToolUse"}
    monkeypatch.setattr(hook, "read_stdin", lambda: json.dumps(payload).encode())
    with redirect_stdout(io.StringIO()):
        return hook.main(["PostToolUse"])


def log_lines(store: StorePaths) -> list[str]:
    log = store.logs / "memkeeper.log"
    return log.read_text().splitlines() if log.exists() else []


def test_a_linked_config_is_never_read_by_a_tool_use(
    store: StorePaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"memory": {"flushEvery": 1}}))
    store.config.symlink_to(outside)
    read: list[str] = []
    real = settings.hook_settings_at

    def reading(path: str) -> settings.HookSettings:
        read.append(path)
        return real(path)

    monkeypatch.setattr(settings, "hook_settings_at", reading)

    assert post_tool_use(store, monkeypatch) == 0  # a new log: this count folds, and is refused there
    assert read == []
    [line] = log_lines(store)
    assert "symbolic link" in line and str(store.config) in line
    assert progress.read_counters(store)["sessions"]["s1"]["toolUses"] == 1  # counted in .state all the same


def test_a_linked_state_folder_stops_every_count(
    store: StorePaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(store.state)  # (it holds the state stamp)
    store.state.symlink_to(elsewhere, target_is_directory=True)
    assert post_tool_use(store, monkeypatch) == 0
    assert list(elsewhere.iterdir()) == []
    assert "symbolic link" in log_lines(store)[0]


#: What a count that only appends to the log never loads (the fold's machinery).
FOLD_ONLY = (
    "fcntl",
    "memkeeper.core.store.lock",
    "memkeeper.core.config.reader",
    "memkeeper.core.store.atomic",
)


def test_a_count_within_its_budget_loads_none_of_the_folds_machinery(store: StorePaths, home: Path) -> None:
    import memkeeper

    store.config.write_text(json.dumps({"memory": {"flushEvery": 5}}))
    payload = json.dumps({"session_id": "s1", "cwd": str(store.project), "hook_event_name": "PostToolUse"})
    code = (
        "import sys; from memkeeper.plugin import hook; hook.main(['PostToolUse']);"
        f"print(','.join(m for m in {FOLD_ONLY!r} if m in sys.modules), file=sys.stderr)"
    )
    env = dict(os.environ, HOME=str(home), MEMKEEPER_NO_JOBS="1")
    env.update(PYTHONPATH=str(Path(memkeeper.__file__).parent.parent))
    loaded = []
    for _ in range(2):  # the first count folds (a new log), the second only appends
        done = subprocess.run(
            [sys.executable, "-P", "-S", "-c", code],
            input=payload.encode(),
            capture_output=True,
            env=env,
            timeout=60,
            check=True,
        )
        loaded.append(done.stderr.decode().strip().splitlines()[-1:])
    assert loaded[0] == [",".join(FOLD_ONLY)]
    assert loaded[1] in ([], [""])
    assert progress.read_counters(store)["sessions"]["s1"]["toolUses"] == 2


def user_prompt(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> int:
    payload = {"session_id": "s1", "cwd": str(store.project), "prompt": "what did we decide about the lock?"}
    monkeypatch.setattr(hook, "read_stdin", lambda: json.dumps(payload).encode())
    with redirect_stdout(io.StringIO()):
        return hook.main(["UserPromptSubmit"])


@pytest.mark.parametrize(("count", "key"), [(post_tool_use, "toolUses"), (user_prompt, "messages")])
def test_a_count_that_only_logs_does_not_list_the_store_root(
    store: StorePaths,
    monkeypatch: pytest.MonkeyPatch,
    count: Callable[[StorePaths, pytest.MonkeyPatch], int],
    key: str,
) -> None:
    """A tool use's or a prompt's count looks at the root's entries (4,000 in a 1 GB store) when it
    folds, not every time."""
    store.config.write_text(json.dumps({"memory": {"flushEvery": 5}}))
    assert count(store, monkeypatch) == 0  # folds: the next log has a budget of 4
    (store.root / "memory_20260101_000000.md").symlink_to(store.memory)
    assert count(store, monkeypatch) == 0  # only logged: the root's entries are not looked at
    assert log_lines(store) == []
    for _ in range(3):
        assert count(store, monkeypatch) == 0  # the budget runs out at the fifth: folded, refused
    assert len(log_lines(store)) == 1 and "memory_20260101_000000.md" in log_lines(store)[0]
    assert progress.read_counters(store)["sessions"]["s1"][key] == 5


def test_a_prompt_looked_up_in_the_hook_refuses_a_linked_root_entry_before_reading(
    store: StorePaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.core.recall.ask import Pending
    from memkeeper.core.store.boundary import StoreLinkError

    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"recall": {"enabled": True}}))
    store.config.symlink_to(outside)
    read: list[str] = []
    monkeypatch.setattr(settings, "hook_settings_at", lambda path: read.append(path))
    call = hook.Call({"session_id": "s1", "cwd": str(store.project)}, str(store.project))
    with pytest.raises(StoreLinkError):
        hook._answer_here(call, Pending(str(store.project), "s1", "the lock?", None))
    assert read == []
