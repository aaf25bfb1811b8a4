"""Fixtures of the capture/plugin tests: a private store, real hook payloads, job recording."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from capture_helpers import load_hook_inputs

from memkeeper.core.store import StorePaths, ensure_store


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMKEEPER_NO_JOBS", "1")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("MEMKEEPER_IN_JOB", raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


@pytest.fixture
def store(project: Path) -> StorePaths:
    paths = StorePaths(project)
    ensure_store(paths)
    return paths


@pytest.fixture
def hook_inputs() -> list[dict[str, Any]]:
    return load_hook_inputs()


@pytest.fixture
def run_hook(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[[str, dict[str, Any] | bytes], tuple[int, str]]:
    """Run ``memkeeper.plugin.hook.main([event])`` in-process with ``payload`` as its stdin."""
    from memkeeper.plugin import hook

    def run(event: str, payload: dict[str, Any] | bytes) -> tuple[int, str]:
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        monkeypatch.setattr(hook, "read_stdin", lambda timeout=hook.STDIN_TIMEOUT: raw)
        capsys.readouterr()
        code = hook.main([event])
        return code, capsys.readouterr().out

    return run


@pytest.fixture
def started_jobs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, dict[str, Any] | None]]]:
    """Record the jobs the hooks start instead of spawning them."""
    calls: list[tuple[str, dict[str, Any] | None]] = []

    def fake_start(paths: StorePaths, kind: str, options: dict[str, Any] | None = None) -> int | None:
        calls.append((kind, options))
        return None

    monkeypatch.setattr("memkeeper.core.jobs.start_job", fake_start)
    yield calls


def python_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env
