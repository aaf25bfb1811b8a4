"""Fixtures of the foundation tests: a private HOME, no background jobs, an empty store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.core.store import StorePaths, ensure_store


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMKEEPER_NO_JOBS", "1")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    yield home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


@pytest.fixture
def store(project: Path) -> StorePaths:
    paths = StorePaths(project)
    ensure_store(paths)
    return paths
