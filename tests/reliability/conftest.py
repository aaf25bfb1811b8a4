"""Fixtures of the reliability trials: a private HOME, no background jobs, a fresh project."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMKEEPER_NO_JOBS", "1")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    return home


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    from memkeeper.core.store import StorePaths, ensure_store

    project = tmp_path / "project"
    project.mkdir()
    paths = StorePaths(project)
    ensure_store(paths)
    return paths
