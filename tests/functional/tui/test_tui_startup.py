"""Start-up holds cyclic garbage collection until the store is on screen, then turns it back on."""

from __future__ import annotations

import gc

import pytest

from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.startup import hold_gc, release_gc, settle_gc
from tests.functional.tui.scenes import settle


async def test_collection_held_at_start_is_back_on_once_the_store_is_drawn(
    store: StorePaths, gc_restored: None
) -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    hold_gc()  # as the console script does before it imports the app
    assert not gc.isenabled()
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.snapshot is not None
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen  # what start-up made is left out of later collections


def test_without_a_hold_release_and_settle_change_nothing() -> None:
    frozen = gc.get_freeze_count()
    release_gc()
    settle_gc()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


async def test_what_the_warm_up_made_is_frozen_once_it_is_done(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch, gc_restored: None
) -> None:
    """After the first frame, the work it started (the warm-up search, the rest of the tree)
    makes objects of its own: once the warm-up is done they are frozen too, once."""
    import memkeeper.tui.app as app_module

    counts: list[tuple[int, int]] = []  # freeze counts before and after each settle

    def settling() -> None:
        before = gc.get_freeze_count()
        settle_gc()
        counts.append((before, gc.get_freeze_count()))

    monkeypatch.setattr(app_module, "settle_gc", settling)
    hold_gc()
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert len(counts) == 1
        before, after = counts[0]
        assert after > before  # the warm-up's objects left out of later collections
        settling()  # a second call freezes nothing more
        assert counts[1][1] == counts[1][0]


async def test_a_store_of_many_days_shows_every_day_once_drawn(store: StorePaths) -> None:
    """The first build adds the newest days before the first frame and the older ones after it:
    once settled, the tree holds every day, newest first, and the oldest session can be reached."""
    from datetime import date, timedelta

    from memkeeper.tui.model import Target
    from memkeeper.tui.widgets.tier_tree import FIRST_DAYS, TierTree

    line = '{"role": "user", "ts": "%sT09:00:00.000Z", "text": "day %d"}\n'
    start = date(2020, 1, 1)
    for number in range(FIRST_DAYS + 40):
        day = (start + timedelta(days=number)).isoformat()
        path = store.sessions / f"{day}_090000_{number:08x}.l1.jsonl"
        path.write_text(line % (day, number), "utf-8")
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        tree = app.screen.query_one(TierTree)
        l1 = next(node for node in tree.root.children if node.data == Target("tier", "l1"))
        days = [node.data.name for node in l1.children if node.data is not None]
        assert len(days) == len(app.snapshot.days) > FIRST_DAYS  # type: ignore[union-attr]
        assert days == sorted(days, reverse=True)
        assert tree.select_target(Target("l1", f"2020-01-01_090000_{0:08x}.l1.jsonl"))
        await settle(pilot)
        assert tree.cursor_node is not None and tree.cursor_node.data == Target(
            "l1", f"2020-01-01_090000_{0:08x}.l1.jsonl"
        )
