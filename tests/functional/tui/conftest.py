"""Fixtures of the TUI tests: a fixed store in a private HOME, and an app factory."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scenes import build_store

from memkeeper.core.store import StorePaths


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMKEEPER_NO_JOBS", "1")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("TZ", "UTC")  # times are shown in local time: the same on every machine
    time.tzset()
    return home


@pytest.fixture
def store(home: Path, monkeypatch: pytest.MonkeyPatch) -> StorePaths:
    """The deterministic store of ``scenes.build_store`` (trash times frozen too)."""
    monkeypatch.setattr("memkeeper.core.forget.iso_now", lambda: "2026-11-21T12:00:00.000Z")
    return build_store(home / "work")
