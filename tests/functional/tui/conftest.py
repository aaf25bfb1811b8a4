"""Fixtures of the TUI tests: a fixed store in a private HOME, and an app factory."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.startup import release_gc, settle_gc
from tests.functional.tui.scenes import build_store


@pytest.fixture(autouse=True)
def _local_time_is_utc() -> Iterator[None]:
    """Times are shown in local time: UTC here, the same on every machine; preferences in HOME.

    A patch of its own, undone on its own: undoing the shared ``monkeypatch`` here would also
    undo the isolating ``home`` fixture's HOME before the test's other fixtures are torn down.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("XDG_CONFIG_HOME", raising=False)
        patch.setenv("TZ", "UTC")
        time.tzset()
        yield
    time.tzset()


@pytest.fixture
def store(home: Path, monkeypatch: pytest.MonkeyPatch) -> StorePaths:
    """The deterministic store of ``scenes.build_store`` (trash times frozen too)."""
    monkeypatch.setattr("memkeeper.core.store.trash.iso_now", lambda: "2026-11-21T12:00:00.000Z")
    return build_store(home / "work")


@pytest.fixture
def gc_restored() -> Iterator[None]:
    """For a test that holds collection (``hold_gc``, as ``launch.main`` does): afterwards it is
    on again, nothing left frozen and no flag left in :mod:`memkeeper.tui.startup`."""
    yield
    release_gc()
    settle_gc()
    gc.unfreeze()
    gc.enable()
