"""Typing in search checks the index's freshness once per burst, not on every keystroke."""

from __future__ import annotations

from typing import Any

import pytest

import memkeeper.core.search as search_module
from memkeeper.core.search import engine
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.prefs import Prefs
from memkeeper.tui.screens import search as search_screen
from memkeeper.tui.screens.search import SearchScreen
from tests.functional.tui.scenes import press_settled, settle


@pytest.mark.parametrize(
    ("fresh_seconds", "expected"), [(60.0, [True, False, False]), (0.0, [True, True, True])]
)
async def test_keystrokes_within_the_window_skip_the_freshness_check(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch, fresh_seconds: float, expected: list[bool]
) -> None:
    real_search = search_module.search
    refreshes: list[bool] = []

    def recording_search(*args: Any, **kwargs: Any) -> Any:
        if args[1] in ("w", "we", "web"):  # the typed keys (not the app's warm-up search)
            refreshes.append(bool(kwargs.get("refresh", True)))
        return real_search(*args, **kwargs)

    monkeypatch.setattr(search_module, "search", recording_search)
    monkeypatch.setattr(search_screen, "FRESH_SECONDS", fresh_seconds)
    app = MemkeeperApp(store, watch=False)
    app.prefs = Prefs(deep=False)  # a deep first search updates the whole index first (another test)
    async with app.run_test(size=(80, 24)) as pilot:
        await press_settled(pilot, "slash")
        assert isinstance(app.screen, SearchScreen)
        for key in "web":
            await pilot.press(key)
            await settle(pilot)
    assert refreshes == expected


async def test_a_key_that_changes_nothing_asks_nothing_and_the_warm_up_searched_first(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_search = search_module.search
    asked: list[str] = []

    def recording_search(*args: Any, **kwargs: Any) -> Any:
        asked.append(args[1])
        return real_search(*args, **kwargs)

    search_module.refresh(store)  # an index exists (the warm-up never builds one)
    monkeypatch.setattr(search_module, "search", recording_search)
    monkeypatch.setattr(engine, "search", recording_search)  # the warm-up's (engine.warm_up)
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert asked == ["memkeeper"]  # after the first paint: the index is opened before any key
        await press_settled(pilot, "slash")
        for key in ("w", "e", "b", "x", "backspace", "space"):
            await press_settled(pilot, key)
        # Back from "webx" to "web" asks again (webx's answer is on screen); a trailing space
        # changes no word of "web": not asked a second time.
        assert asked[1:] == ["w", "we", "web", "webx", "web"]
        screen = app.screen
        assert isinstance(screen, SearchScreen) and screen.state.query == "web "
