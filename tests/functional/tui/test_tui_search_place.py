"""Search that keeps its place: Esc back to the same results, paging, dates, n/N across documents, progress."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input
from textual.widgets.option_list import Option

from memkeeper.core.search import search as core_search
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.prefs import prefs_path
from memkeeper.tui.screens.browse import BrowseScreen
from memkeeper.tui.screens.hit import HitScreen
from memkeeper.tui.screens.search import HitList, SearchScreen, first_screen, split_dates
from memkeeper.tui.widgets.docview import DocView
from tests.functional.tui.scenes import open_screen, press_settled, settle

SIZE = (80, 24)


async def _search(app: MemkeeperApp, pilot: Pilot[None], query: str) -> SearchScreen:
    screen = await open_screen(pilot, "slash", SearchScreen)
    screen.query_one(Input).value = query
    await settle(pilot)
    return screen


async def test_escape_from_a_hit_returns_to_the_same_results_and_selection(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        search = await _search(app, pilot, "webhook")
        await pilot.press("f3")  # a type filter, to see that filters survive too
        await settle(pilot)
        assert len(search.hits) > 2
        hit_list = search.query_one(HitList)
        await pilot.press("down", "down")
        chosen = hit_list.highlighted
        hits_before = list(search.hits)
        filters_before = str(search.query_one("#filters").render())
        await pilot.press("enter")
        await settle(pilot)
        opened = app.screen
        assert isinstance(opened, HitScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is search
        assert search.query_one(Input).value == "webhook"
        assert hit_list.highlighted == chosen and search.hits == hits_before
        assert str(search.query_one("#filters").render()) == filters_before
        # Leaving search and coming back with / starts where it was left.
        await pilot.press("escape")
        await pilot.press("slash")
        await settle(pilot)
        again = app.screen
        assert isinstance(again, SearchScreen) and again is not search
        assert again.query_one(Input).value == "webhook"
        assert again.state.type_index == search.state.type_index
        assert again.query_one(HitList).highlighted == chosen


async def test_n_and_shift_n_step_through_hits_across_documents(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        search = await _search(app, pilot, "webhook")
        files = [hit.file for hit in search.hits]
        assert len(set(files)) > 1
        await pilot.press("enter")
        await settle(pilot)
        hit_screen = app.screen
        assert isinstance(hit_screen, HitScreen)
        seen = [hit_screen.hit.file]
        for _ in range(len(files) - 1):
            await pilot.press("n")
            await settle(pilot)
            seen.append(hit_screen.hit.file)
            doc = hit_screen.query_one(DocView)
            line = hit_screen.hit.line
            if line:
                assert doc.items[doc.cursor].line is not None and doc.items[doc.cursor].line <= line
        assert seen == files  # every hit, in the list's order, across documents
        await pilot.press("N")
        await settle(pilot)
        assert hit_screen.index == len(files) - 2
        assert f"[hit {len(files) - 1}/{len(files)}]" in str(hit_screen.query_one("#viewer-title").render())


async def test_results_page_beyond_twenty_with_n_more(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        search = await _search(app, pilot, "the")
        hit_list = search.query_one(HitList)
        more = [
            i
            for i in range(hit_list.option_count)
            if (hit_list.get_option_at_index(i).id or "").startswith("more:")
        ]
        assert more, "the store should have a tier with more than 20 hits for 'the'"
        label = str(hit_list.get_option_at_index(more[0]).prompt)
        assert "more" in label
        before = len(search.hits)
        hit_list.highlighted = more[0]
        await pilot.press("enter")
        await settle(pilot)
        assert len(search.hits) > before
        assert isinstance(app.screen, SearchScreen)


async def test_date_filters_like_the_cli(store: StorePaths) -> None:
    assert split_dates("webhook since:2026-11-01 until:2026-11-20") == ("webhook", "2026-11-01", "2026-11-20")
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        search = await _search(app, pilot, "the")
        dated = sorted({h.date[:10] for h in search.hits if h.date})
        assert len(dated) > 1
        cut = dated[len(dated) // 2]
        search.query_one(Input).value = f"the since:{cut}"
        await settle(pilot)
        assert search.hits and all(h.date is None or h.date[:10] >= cut for h in search.hits)
        assert f"dates: {cut}" in str(search.query_one("#filters").render())


async def test_l1_hit_opens_on_its_own_entry_unfolded_with_the_matched_terms(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        search = await _search(app, pilot, "pytest")
        await pilot.press("f2", "f2", "f2", "f2")  # tier: l1
        await settle(pilot)
        l1 = [i for i, h in enumerate(search.hits) if h.tier == "l1" and h.line]
        assert l1
        hit = search.hits[l1[-1]]
        search.query_one(HitList).highlighted = next(
            i
            for i in range(search.query_one(HitList).option_count)
            if search.query_one(HitList).get_option_at_index(i).id == str(l1[-1])
        )
        await pilot.press("enter")
        await settle(pilot)
        doc = app.screen.query_one(DocView)
        item = doc.items[doc.cursor]
        assert item.line is not None and item.line <= hit.line <= (item.end_line or item.line)
        if item.body:
            assert doc.cursor in doc._unfolded
        assert doc.terms == ("pytest",)


async def test_first_deep_search_shows_index_progress_and_deep_is_the_remembered_default(
    store: StorePaths, home: Path
) -> None:
    progress: list[tuple[int, int]] = []

    def hook(message: object) -> None:
        if isinstance(message, SearchScreen.IndexProgress):
            progress.append((message.done, message.total))

    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        search = await _search(app, pilot, "webhook")
        assert search.state.deep  # deep (sessions) on by default
        assert progress and progress[-1][0] == progress[-1][1] > 0
        await pilot.press("f4")
        await settle(pilot)
    assert json.loads(prefs_path().read_text())["deep"] is False
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        search = await _search(app, pilot, "webhook")
        assert not search.state.deep


async def test_index_progress_arriving_after_the_results_changes_nothing(store: StorePaths) -> None:
    """The index's progress is posted from the search thread and the results come by another way:
    under load the last progress can arrive after the results; it must not cover them."""
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        search = await _search(app, pilot, "webhook")
        shown = str(search.query_one("#filters").render())
        assert "hit" in shown
        late = SearchScreen.IndexProgress(10, 100, "sessions/late.l1.jsonl", 1)
        search.post_message(late)
        await settle(pilot)
        assert str(search.query_one("#filters").render()) == shown
        assert not search.query_one("#search-progress").display


async def test_show_in_tree_from_a_hit(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        search = await _search(app, pilot, "webhook")
        first = search.hits[0]
        await pilot.press("enter")
        await press_settled(pilot, "b")
        assert isinstance(app.screen, BrowseScreen)
        pane_doc = app.screen.pane.document
        assert pane_doc is not None and first.file.endswith(pane_doc.path.name if pane_doc.path else "?")


async def test_f5_toggles_exact_words_against_the_ranked_default(store: StorePaths) -> None:
    """A question in plain words finds hits ranked; in exact mode every word must occur, so it finds none."""
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        search = await _search(app, pilot, "how are outgoing webhooks signed zzqx")
        assert search.hits, "the ranked default answers a question"
        assert "exact" not in str(search.query_one("#filters").render())
        await pilot.press("f5")
        await settle(pilot)
        assert "exact substrings (F5)" in str(search.query_one("#filters").render())
        assert search.hits == []
        await pilot.press("f5")
        await settle(pilot)
        assert search.hits


def test_ranked_groups_start_with_the_tier_of_the_best_hit(tmp_path: Path) -> None:
    """Asked in plain words, the demo store's answer is an L3 decision; its group comes first,
    not after the weaker memory.md hits that the fixed tier order would put above it."""
    from rich.style import Style

    from memkeeper.core.demo import create_demo_store
    from memkeeper.core.search import search
    from memkeeper.tui.screens.search import TIER_NAMES, result_options

    folder = tmp_path / "demo"
    folder.mkdir()
    paths = create_demo_store(folder)
    results = search(paths, "why are invoice numbers gapless", deep=True)
    best = results.ranked[0]
    assert "gapless" in best.snippet.lower()
    assert results.tiers[0].tier != best.tier and results.tiers[0].hits  # the fixed order would hide it
    options, hits = result_options(results, Style(), Style())
    assert str(options[0].prompt).startswith(f"── {TIER_NAMES.get(best.tier, best.tier)} (")
    assert hits[0].tier == best.tier


async def test_a_page_longer_than_the_list_shows_its_first_screen_then_the_rest(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    added: list[int] = []
    real_add = HitList.add_options

    def counting(self: HitList, options: Iterable[Option]) -> HitList:
        options = list(options)
        added.append(len(options))
        return real_add(self, options)

    monkeypatch.setattr(HitList, "add_options", counting)
    shown: list[int] = []
    app = MemkeeperApp(store, watch=False)

    def hook(message: object) -> None:
        if isinstance(message, SearchScreen.ResultsShown):
            shown.append(app.screen.query_one(HitList).option_count)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        search = await _search(app, pilot, "the")
        hit_list = search.query_one(HitList)
        options = [hit_list.get_option_at_index(i) for i in range(hit_list.option_count)]
        first = first_screen(options, hit_list.size.height)
        assert first < len(options)  # the page is longer than the list
        assert [n for n in added if n] == [first, len(options) - first]  # the first screen, then the rest
        assert shown and set(shown) == {len(options)}  # "shown" once the whole page is in
        # newer results replace a page before its rest came in: nothing of the old one is added
        long, short = (core_search(store, q, deep=True) for q in ("the", "webhook"))
        search._show_results(long, 1.0, search._serial)
        search._show_results(short, 1.0, search._serial)
        await settle(pilot)
        ids = [str(hit_list.get_option_at_index(i).id) for i in range(hit_list.option_count)]
        assert sorted(h.id for h in search.hits) == sorted(h.id for h in short.hits)
        assert sorted(int(i) for i in ids if i.isdigit()) == list(range(len(search.hits)))
