"""Fixtures shared by every test: a private HOME, no background jobs, a project and its store.

Every test runs with ``HOME`` in its own temp folder (nothing touches the real
``~/.claude``), ``MEMKEEPER_NO_JOBS=1`` (a test that exercises background jobs unsets it)
and none of the Claude Code variables that would redirect the project.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.core.recall.ask import KEY_SUFFIX
from memkeeper.core.store.paths import StorePaths, ensure_store

#: The folders whose tests make the quick subset (``pytest -m quick``), less those marked slow, e2e or
#: tmux: the library and the command line, a few minutes with ``-n 2`` on two cores (CONTRIBUTING.md).
QUICK_FOLDERS = ("tests/unit/", "tests/functional/cli/")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the quick subset."""
    for item in items:
        if item.nodeid.startswith(QUICK_FOLDERS) and not any(
            item.get_closest_marker(name) for name in ("slow", "e2e", "tmux")
        ):
            item.add_marker(pytest.mark.quick)


_REDIRECTING_VARIABLES = (
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_PROJECT_DIR_NAME",
    "MEMKEEPER_IN_JOB",
    "MEMKEEPER_PYTHON",
    "ANTHROPIC_API_KEY",
)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private HOME for the test (autouse), returned for tests that need its path, and a private
    runtime folder (``XDG_RUNTIME_DIR``, where resident recall lookups listen).

    Afterwards the test's resident recall lookups are told to stop (see :func:`_stop_recall_servers`).
    """
    folder = tmp_path / "home"
    folder.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(folder))
    # As short as a real one (/run/user/<uid>): pytest's folders are too long for a Unix socket's path.
    runtime = Path(tempfile.mkdtemp(prefix="mk-run-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("MEMKEEPER_NO_JOBS", "1")
    for name in _REDIRECTING_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield folder
    _stop_recall_servers(runtime)
    shutil.rmtree(runtime, ignore_errors=True)


def _stop_recall_servers(folder: Path) -> None:
    """Remove every recall key file in the runtime folder ``folder``: a detached ``recall`` job a test started
    (through a real hook or Claude Code) stops within its poll interval once its key file is gone,
    instead of serving a finished test's store until its idle timeout. Links are not followed."""
    for parent, _dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(KEY_SUFFIX):
                Path(parent, name).unlink(missing_ok=True)


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
