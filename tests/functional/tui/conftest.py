"""Fixtures of the TUI tests: a fixed store in a private HOME, and an app factory."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scenes import build_store

from memkeeper.core.store import StorePaths


@pytest.fixture
def store(home: Path, monkeypatch: pytest.MonkeyPatch) -> StorePaths:
    """The deterministic store of ``scenes.build_store`` (trash times frozen too)."""
    monkeypatch.setattr("memkeeper.core.forget.iso_now", lambda: "2026-11-21T12:00:00.000Z")
    return build_store(home / "work")
