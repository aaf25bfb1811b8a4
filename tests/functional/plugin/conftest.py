"""Fixtures of the capture/plugin tests: real hook payloads, in-process hooks, job recording."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import CLIS, find_claude, load_hook_inputs
from tests.functional.plugin.capture_mock_api import MockAnthropic


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The interpreter of a fresh venv with nothing installed: a Python that has no memkeeper."""
    import subprocess
    import sys

    venv = tmp_path_factory.mktemp("bare-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--clear", str(venv)], check=True)
    return str(next(p for p in (venv / "bin" / "python", venv / "Scripts" / "python.exe") if p.exists()))


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

    monkeypatch.setattr("memkeeper.core.store.jobs.start_job", fake_start)
    yield calls


# --- the real Claude Code CLIs, pinned and newest (a module may override with one CLI of its own) ---


@pytest.fixture(params=sorted(CLIS), scope="module")
def claude_bin(request: pytest.FixtureRequest) -> Path:
    return find_claude(request.param)


@pytest.fixture(scope="module")
def mock() -> Iterator[MockAnthropic]:
    with MockAnthropic() as server:
        yield server
