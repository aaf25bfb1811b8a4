"""What a newcomer meets at 80×24: the footer's main keys, explained tiers, honest filters and counts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Button, Input, Static
from textual.widgets._footer import FooterKey

from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.modals.migrate import MigrateModal
from memkeeper.tui.screens.browse import BrowseScreen
from memkeeper.tui.screens.search import SearchScreen, hit_date
from memkeeper.tui.widgets.doc_pane import DocPane
from memkeeper.tui.widgets.tier_tree import TierTree
from tests.functional.tui.scenes import open_screen, press_settled, settle

SIZE = (80, 24)


def footer_labels(pilot: Pilot[None]) -> list[str]:
    """The footer keys drawn whole inside the 80 columns."""
    keys = [k for k in pilot.app.screen.query(FooterKey) if k.region.width and k.region.right <= SIZE[0]]
    return [str(k.description) for k in keys]


async def test_the_footer_shows_search_sessions_help_and_quit_at_80_columns(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = footer_labels(pilot)
        assert {"Search", "Sessions", "Help", "Quit"} <= set(shown), shown


async def test_sections_is_offered_only_for_a_document_with_sections(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Sections" in footer_labels(pilot)  # memory.md has dated sections
        tree = app.screen.query_one(TierTree)
        day = next(n for n in tree.root.children[-1].children if n.data and n.data.kind == "day")
        tree.move_cursor(day)
        await settle(pilot)
        assert "Sections" not in footer_labels(pilot)
        await press_settled(pilot, "s")
        assert isinstance(app.screen, BrowseScreen)  # nothing opened


async def test_a_tier_heading_explains_its_tier(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.screen.query_one(TierTree)
        for node, words in zip(
            tree.root.children, ("L2 · memory", "L3 · summaries", "L1 · sessions"), strict=True
        ):
            tree.move_cursor(node)
            await settle(pilot)
            assert str(app.screen.query_one("#viewer-title", Static).render()).startswith(words)


async def test_the_pane_names_the_keys_that_act_on_its_document(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys = str(app.screen.query_one(DocPane).query_one("#viewer-keys", Static).render())
        assert keys == "x remove · e edit · v pager · f follow · y copy"  # memory.md


async def test_f6_steps_the_type_filter_back_and_a_kept_filter_is_marked(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        search = await open_screen(pilot, "slash", SearchScreen)
        search.query_one(Input).value = "webhook"
        await settle(pilot)
        await press_settled(pilot, "f6")
        assert search.state.type_index == len(search._types) - 1  # the last type, not 13 presses away
        filters = search.query_one("#filters", Static).render()
        assert isinstance(filters, Content)
        assert "type: all" not in str(filters)
        assert any(getattr(span.style, "reverse", False) for span in filters.spans)  # marked: not the default
        await press_settled(pilot, "f3")
        assert search.state.type_index == 0
        assert str(search.query_one("#filters", Static).render()).split(" · ")[0].endswith("hits")


async def test_migrate_with_nothing_to_do_offers_no_migrate_button(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        modal = await open_screen(pilot, "m", MigrateModal)
        await settle(pilot)
        assert "Nothing to migrate" in str(modal.query_one("#migrate-body", Static).render())
        assert not modal.query_one("#run", Button).display
        assert "Migrate" not in footer_labels(pilot)


def test_hit_dates_are_read_as_people_read_them() -> None:
    assert hit_date(None) == "" and hit_date("") == ""  # no bare "?"
    assert hit_date("2026-11-20") == "2026-11-20"
    stamp = hit_date("2026-11-20T04:03:12.000Z")
    assert "T" not in stamp and stamp.startswith("2026-11-")  # local time, not the raw stamp


async def test_the_footer_keeps_help_and_quit_with_a_session_open(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        from tests.functional.tui.scenes import SCENES

        await SCENES["session"][1](pilot)  # an L1 session open, the viewer focused
        shown = footer_labels(pilot)
        assert {"Search", "Help", "Quit"} <= set(shown), shown
        keys = str(app.screen.query_one(DocPane).query_one("#viewer-keys", Static).render())
        assert keys.startswith("⏎ fold · M raw")


def test_the_status_line_says_nothing_is_captured_yet_and_counts_model_calls(tmp_path: Path) -> None:
    from memkeeper.tui.model import BackendHealth, SessionInfo, StoreSnapshot
    from memkeeper.tui.widgets.status import budget_part, capture_text

    empty = StoreSnapshot(project=tmp_path, exists=True)
    assert capture_text(empty) == (Text("nothing captured yet", style="bold"), 0)  # never dropped
    one = SessionInfo("2026-11-20_040000_aaaaaaaa.l1.jsonl", "2026-11-20", "04:00", "aaaaaaaa", 10)
    assert str(capture_text(replace(empty, sessions=(one,), flush_left=6))[0]) == "next flush in 6"
    claude = BackendHealth("claude", "claude", calls=3, daily_calls=50, tokens=9000, daily_tokens=500_000)
    assert [str(text) for text, _ in budget_part(claude)] == ["calls 3/50"]
    assert budget_part(BackendHealth("extractive", "extractive")) == []  # free: nothing to count
