"""When memory is not being kept (read-only store, full disk, resting model), the user is told:
in the session-start context and in ``status``, never by failing a hook."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.cli.main import main as cli_main
from memkeeper.core.context import keeping
from memkeeper.core.store.paths import StorePaths, ensure_store
from memkeeper.core.summarizers.health import record_down
from tests.functional.plugin.capture_helpers import payload_for, write_config

HookRunner = Callable[[str, dict[str, Any] | bytes], tuple[int, str]]


@pytest.fixture
def kept(store: StorePaths) -> StorePaths:
    ensure_store(store)
    store.memory.write_text("\n## 2026-11-20_1000 (local 11-20_1000)\n- [marker]: KEPTMARKER\n")
    return store


def start_context(run_hook: HookRunner, paths: StorePaths) -> str:
    code, out = run_hook("SessionStart", payload_for("SessionStart", paths.project))
    assert code == 0  # the hook never fails over it
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def status_json(paths: StorePaths, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert cli_main(["--project", str(paths.project), "status", "--json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_all_well_says_nothing(
    kept: StorePaths, run_hook: HookRunner, started_jobs: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert "not being fully kept" not in start_context(run_hook, kept)
    assert status_json(kept, capsys)["notKept"] == []


def test_a_resting_backend_is_told_once_at_start_and_in_status(
    kept: StorePaths, run_hook: HookRunner, started_jobs: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(kept, {"summarizer": {"backend": "claude"}})
    record_down(kept, "claude", "claude failed (exit 1): Not logged in · Please run /login")
    context = start_context(run_hook, kept)
    assert context.count("memory is not being fully kept") == 1
    assert "the summarizer claude is resting until" in context and "Not logged in" in context
    assert "KEPTMARKER" in context  # the memory is still given
    reasons = status_json(kept, capsys)["notKept"]
    assert len(reasons) == 1 and "resting until" in reasons[0]


def test_a_read_only_store_and_a_full_disk_are_told(
    kept: StorePaths,
    run_hook: HookRunner,
    started_jobs: list[Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Tests run as root here, and root writes through chmod; what the OS reports is stood in for.
    real_access = os.access
    root = str(kept.root)

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        if mode == os.W_OK and str(path).startswith(root):
            return False
        return real_access(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)  # the module keeping calls
    monkeypatch.setattr(keeping, "free_bytes", lambda _p: 4096)  # (as the module imported it)
    context = start_context(run_hook, kept)
    assert f"the memory store {kept.root} is read-only" in context
    assert "is nearly full (0 MB free)" in context
    reasons = status_json(kept, capsys)["notKept"]
    assert len(reasons) == 2


def test_status_text_shows_the_reason(
    kept: StorePaths, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_config(kept, {"summarizer": {"backend": "claude"}})
    record_down(kept, "claude", "claude: the API did not start answering within 8 s (unreachable?)")
    capsys.readouterr()
    cli_main(["--project", str(kept.project), "status"])
    out = capsys.readouterr().out
    assert "memory not kept: the summarizer claude is resting until" in out
    assert "summarizer" in out and "extractive (claude is resting until" in out
