"""Fixtures of the summary tests: a private store, a command backend, a recording sleep."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memkeeper.core.store.paths import StorePaths
from tests.unit.summary.summary_helpers import write_config, write_script


@pytest.fixture
def command_backend(store: StorePaths, tmp_path: Path) -> Callable[[str], Path]:
    """Configure the command backend with a script whose body is given; returns the script."""

    def make(body: str, timeout: float = 30.0) -> Path:
        script = write_script(tmp_path / "bin", "fake-model", body)
        write_config(
            store, {"summarizer": {"backend": "command", "command": [str(script)], "timeoutSeconds": timeout}}
        )
        return script

    return make


@pytest.fixture
def no_sleep() -> list[float]:
    """Pass ``sleep=no_sleep.append``: records the backoff instead of waiting."""
    return []
