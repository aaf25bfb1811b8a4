"""A count (a tool use, a prompt): one line in the log, and the store's root entries looked at when it folds,
before anything there is read."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from memkeeper.core.config import reader as settings
from memkeeper.core.log import progress
from memkeeper.core.store.paths import StorePaths
from memkeeper.plugin import hook
from tests.functional.plugin.capture_helpers import hook_modules_loaded


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
    store.config.write_text(json.dumps({"memory": {"flushEvery": 5}}))
    payload = {"session_id": "s1", "cwd": str(store.project), "hook_event_name": "PostToolUse"}
    # the first count folds (a new log), the second only appends
    loaded = [hook_modules_loaded("PostToolUse", payload, home, FOLD_ONLY)[1] for _ in range(2)]
    assert loaded == [",".join(FOLD_ONLY), ""]
    assert progress.read_counters(store)["sessions"]["s1"]["toolUses"] == 2


def user_prompt(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> int:
    payload = {"session_id": "s1", "cwd": str(store.project), "prompt": "what did we decide about the lock?"}
    monkeypatch.setattr(hook, "read_stdin", lambda: json.dumps(payload).encode())
    with redirect_stdout(io.StringIO()):
        return hook.main(["UserPromptSubmit"])


@pytest.mark.parametrize(
    ("count", "key", "linked"),
    [(post_tool_use, "toolUses", "memory.md"), (user_prompt, "messages", "memory.md")],
)
def test_a_count_that_only_logs_does_not_list_the_store_root(
    store: StorePaths,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    count: Callable[[StorePaths, pytest.MonkeyPatch], int],
    key: str,
    linked: str,
) -> None:
    """A tool use's or a prompt's count looks at the root's entries (4,000 in a 1 GB store) when it
    folds, not every time, and then at those it reads by name."""
    store.config.write_text(json.dumps({"memory": {"flushEvery": 5}}))
    assert count(store, monkeypatch) == 0  # folds: the next log has a budget of 4
    outside = tmp_path / "outside.md"
    outside.write_text("outside\n")
    if (store.root / linked).exists():
        (store.root / linked).unlink()
    (store.root / linked).symlink_to(outside)
    assert count(store, monkeypatch) == 0  # only logged: the root's entries are not looked at
    assert log_lines(store) == []
    for _ in range(3):
        assert count(store, monkeypatch) == 0  # the budget runs out at the fifth: folded, refused
    assert len(log_lines(store)) == 1 and linked in log_lines(store)[0]
    assert progress.read_counters(store)["sessions"]["s1"][key] == 5


def test_a_tool_uses_fold_does_not_list_the_store_root(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fold reads the config and memory.md's size, looked at by name: a link among the archives
    (the root holds 4,000 entries in a 1 GB store) is left to the work that reads them."""
    store.config.write_text(json.dumps({"memory": {"flushEvery": 2}}))
    (store.root / "memory_20260101_000000.md").symlink_to(store.memory)
    for _ in range(5):  # folds at the first, third and fifth
        assert post_tool_use(store, monkeypatch) == 0
    assert log_lines(store) == []
    assert progress.read_counters(store)["sessions"]["s1"]["toolUses"] == 5


def test_a_rotation_a_fold_starts_looks_at_every_root_entry_first(
    store: StorePaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_text = {
        "memory": {"flushEvery": 50},
        "memoryRotation": {"thresholdTokens": 1000, "carryoverTokens": 100},
    }
    store.config.write_text(json.dumps(settings_text))
    store.memory.write_text("## 2026-01-01\n- [note]: something worth keeping\n" * 200)
    outside = tmp_path / "outside.md"
    outside.write_text("outside\n")
    link = store.root / "memory_20250101_000000.md"
    link.symlink_to(outside)
    before = store.memory.read_bytes()
    assert post_tool_use(store, monkeypatch) == 0  # a new log: folds, and memory.md is over the threshold
    [line] = log_lines(store)
    assert "symbolic link" in line and str(link) in line
    assert store.memory.read_bytes() == before  # not rotated
    assert sorted(p.name for p in store.root.glob("memory_*.md")) == [link.name]
    assert outside.read_text() == "outside\n"


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


def test_finishing_an_interrupted_rotation_looks_at_every_root_entry_first(
    store: StorePaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A count looks at no root entry until it folds, but finishing a rotation a kill interrupted reads
    and writes memory.md, the archives and the index: it looks at all of them first."""
    from memkeeper.core.store import intents

    store.memory.write_text("## 2026-01-01\n- [note]: kept\n" * 50)
    intents.record(
        store,
        "rotation",
        {"archive": "memory_20260102_000000.md", "bytes": 1, "carryoverBytes": 0, "tokens": 1},
    )
    outside = tmp_path / "outside.md"
    outside.write_text("outside\n")
    link = store.root / "memory_20250101_000000.md"
    link.symlink_to(outside)
    assert post_tool_use(store, monkeypatch) == 0
    assert any("symbolic link" in line and str(link) in line for line in log_lines(store))
    assert (store.state / "intent-rotation.json").exists()  # left for a store without the link
    assert not (store.root / "memory_20260102_000000.md").exists()
    assert outside.read_text() == "outside\n"
