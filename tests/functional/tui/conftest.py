"""Fixtures of the TUI tests: a fixed store in a private HOME, and an app factory."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scenes import build_store

from memkeeper.core.store import StorePaths


@pytest.fixture(autouse=True)
def _local_time_is_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times are shown in local time: UTC here, the same on every machine; preferences in HOME."""
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def store(home: Path, monkeypatch: pytest.MonkeyPatch) -> StorePaths:
    """The deterministic store of ``scenes.build_store`` (trash times frozen too)."""
    monkeypatch.setattr("memkeeper.core.forget.iso_now", lambda: "2026-11-21T12:00:00.000Z")
    return build_store(home / "work")
