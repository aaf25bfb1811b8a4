"""Keys that keep their word, small truths, the sessions list and the activity screen."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable, Input, OptionList

from memkeeper.core.search.history import daily_activity, findings
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.items import DocItem
from memkeeper.tui.l1_items import l1_items
from memkeeper.tui.modals.help import HelpModal
from memkeeper.tui.modals.projects import ProjectsModal
from memkeeper.tui.model import Target
from memkeeper.tui.prefs import prefs_path
from memkeeper.tui.screens.activity import ActivityScreen
from memkeeper.tui.screens.browse import BrowseScreen
from memkeeper.tui.screens.pending import PendingScreen
from memkeeper.tui.screens.sessions import SessionsScreen
from memkeeper.tui.widgets.docview import DocView
from memkeeper.tui.widgets.tier_tree import TierTree
from tests.functional.tui.scenes import open_screen, press_settled, settle

SIZE = (80, 24)


async def test_j_k_move_in_the_tree_and_q_goes_back_from_sub_screens(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.screen.query_one(TierTree)
        start = tree.cursor_line
        await pilot.press("j", "j")
        assert tree.cursor_line == start + 2
        await pilot.press("k")
        assert tree.cursor_line == start + 1
        for key, screen in (("p", PendingScreen), ("A", ActivityScreen)):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, screen)
            await pilot.press("q")
            await settle(pilot)
            assert isinstance(app.screen, BrowseScreen)
        assert app.is_running  # q on a sub-screen went back, it did not quit


async def test_viewer_line_keys_move_by_line_inside_a_tall_entry(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        doc = app.screen.query_one(DocView)
        tall = "\n".join(f"row {n}" for n in range(60))
        doc.set_items([DocItem("first"), DocItem(tall), DocItem("last")])
        doc.focus()
        await pilot.press("down")
        assert doc.cursor == 1
        await pilot.press("down")
        assert doc.cursor == 1 and doc.scroll_y >= 1  # scrolled one row inside the tall entry
        await pilot.press("J")  # the entry key jumps to the next entry
        assert doc.cursor == 2


async def test_clicking_the_fold_mark_unfolds(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        doc = app.screen.query_one(DocView)
        doc.set_items([DocItem("call", kind="tool", body="details\nmore")])
        await pilot.pause()
        text = "".join(s.text for s in doc._strips(0)[0])
        column = text.index("▸")
        await pilot.click(DocView, offset=(column + doc.region.x - doc.content_region.x + 1, 0))
        await pilot.pause()
        assert 0 in doc._unfolded


async def test_help_shows_the_current_screen_first(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, "S")
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpModal)
        table = app.screen.help_table
        first_title = str(table.columns[0]._cells[0])
        assert first_title.startswith("Sessions")


async def test_project_picker_opens_on_the_current_project(store: StorePaths, home: Path) -> None:
    other = home / "other"
    (other / ".claude" / "memory").mkdir(parents=True)
    for name, project in (("-a", other), ("-b", store.project)):
        folder = home / ".claude" / "projects" / name
        folder.mkdir(parents=True)
        (folder / "t.jsonl").write_text(json.dumps({"cwd": str(project)}) + "\n")
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, "o")
        assert isinstance(app.screen, ProjectsModal)
        options = app.screen.query_one(OptionList)
        assert options.option_count >= 2
        assert "current" in str(options.get_option_at_index(options.highlighted or 0).prompt)


async def test_theme_persists(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.theme = "textual-light"
        await settle(pilot)
    assert json.loads(prefs_path().read_text())["theme"] == "textual-light"
    assert MemkeeperApp(store, watch=False).theme == "textual-light"


async def test_forgetting_the_open_session_says_so(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        name = app.snapshot.sessions[0].name  # type: ignore[union-attr]
        app.screen.query_one(TierTree).select_target(Target("l1", name))
        await press_settled(pilot, "d", "y")
        doc = app.screen.query_one(DocView)
        assert "was forgotten" in doc.items[0].text
        assert "forgotten" in str(app.screen.query_one("#viewer-title").render())


async def test_a_corrupt_session_shows_as_unreadable(store: StorePaths) -> None:
    bad = store.sessions / "2026-11-21_0900_deadbeef.l1.jsonl"
    bad.write_bytes(b"\x00\x01 not json\n{broken\n")
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one(TierTree).select_target(Target("l1", bad.name))
        await settle(pilot)
        doc = app.screen.query_one(DocView)
        assert "cannot be read" in doc.items[0].text and doc.items[0].kind == "error"
        labels = [str(n.label) for n in app.screen.query_one(TierTree)._all_nodes()]
        assert any("unreadable" in label for label in labels)


def test_task_skill_and_webfetch_calls_show_their_description() -> None:
    entries = [
        {"role": "tool", "name": "Task", "params": "description,prompt", "detail": "Find the flaky test"},
        {"role": "tool", "name": "WebFetch", "params": "url,prompt", "detail": "https://example.org/x"},
    ]
    items = l1_items(entries)
    assert items[0].text == "Find the flaky test" and items[1].text == "https://example.org/x"


async def test_sessions_filter_as_you_type_jump_to_a_date_and_open(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_screen(pilot, "S", SessionsScreen)
        everything = list(screen.shown)
        assert [s.name for s in everything] == sorted((s.name for s in everything), reverse=True)
        table = screen.query_one(DataTable)
        assert table.row_count == len(everything)
        title_word = next(w for w in str(table.get_row_at(0)[4]).split() if len(w) > 4)
        screen.query_one(Input).value = title_word
        await settle(pilot)
        assert 0 < len(screen.shown) <= len(everything)
        day = everything[len(everything) // 2].day
        screen.query_one(Input).value = day
        await settle(pilot)
        assert screen.shown[table.cursor_row].day <= day
        chosen = screen.shown[table.cursor_row]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        document = app.screen.pane.document
        assert document is not None and document.target == Target("l1", chosen.name)


async def test_activity_screen_plots_and_lists_decisions_that_open_their_source(store: StorePaths) -> None:
    days = daily_activity(store)
    assert sum(d.sessions for d in days) == len(list(store.sessions.glob("*.l1.jsonl")))
    assert sum(d.prompts for d in days) > 0 and sum(d.tools for d in days) > 0
    found = findings(store)
    assert found and {f.kind for f in found} <= {"decision", "issue"}
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_screen(pilot, "A", ActivityScreen)
        assert screen.findings == found
        assert "rotations" in str(screen.query_one("#activity-summary").render())
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        document = app.screen.pane.document
        assert document is not None and document.target == Target("summary", found[0].archive)
        doc = app.screen.query_one(DocView)
        assert doc.hits  # the decision is highlighted in its summary
