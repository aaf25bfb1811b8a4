"""Start-up holds cyclic garbage collection until the store is on screen, then turns it back on."""

from __future__ import annotations

import gc

from memkeeper.core.store import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.startup import hold_gc, release_gc
from tests.functional.tui.scenes import settle


async def test_collection_held_at_start_is_back_on_once_the_store_is_drawn(store: StorePaths) -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    hold_gc()  # as the console script does before it imports the app
    try:
        assert not gc.isenabled()
        app = MemkeeperApp(store, watch=False, prefs=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            assert app.snapshot is not None
            assert gc.isenabled()
            assert gc.get_freeze_count() > frozen  # what start-up made is left out of later collections
    finally:
        release_gc()
        gc.unfreeze()
        gc.enable()


def test_without_a_hold_release_changes_nothing() -> None:
    frozen = gc.get_freeze_count()
    release_gc()
    assert gc.isenabled() and gc.get_freeze_count() == frozen
