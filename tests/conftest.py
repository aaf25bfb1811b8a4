"""Fixtures shared by every test: a private HOME, no background jobs, a project and its store.

Every test runs with ``HOME`` in its own temp folder (nothing touches the real
``~/.claude``), ``MEMKEEPER_NO_JOBS=1`` (a test that exercises background jobs unsets it)
and none of the Claude Code variables that would redirect the project.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memkeeper.core.store import StorePaths, ensure_store

_REDIRECTING_VARIABLES = (
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_PROJECT_DIR_NAME",
    "MEMKEEPER_IN_JOB",
    "MEMKEEPER_PYTHON",
    "ANTHROPIC_API_KEY",
)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME for the test (autouse), returned for tests that need its path."""
    folder = tmp_path / "home"
    folder.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("MEMKEEPER_NO_JOBS", "1")
    for name in _REDIRECTING_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture
def store(project: Path) -> StorePaths:
    paths = StorePaths(project)
    ensure_store(paths)
    return paths
