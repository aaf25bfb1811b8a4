"""Pilot tests of every flow of memkeeper-tui, at 80×24, on the fixed store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, OptionList, Select

from memkeeper.core.capture.titles import session_titles
from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.modals.help import HelpModal, key_label, key_sections
from memkeeper.tui.modals.migrate import MigrateModal
from memkeeper.tui.model import Target
from memkeeper.tui.screens.browse import BrowseScreen
from memkeeper.tui.screens.hit import HitScreen
from memkeeper.tui.screens.pending import PendingScreen
from memkeeper.tui.screens.search import HitList, SearchScreen
from memkeeper.tui.screens.trash import TrashScreen
from memkeeper.tui.widgets.docview import DocView
from memkeeper.tui.widgets.tier_tree import TierTree
from tests.functional.tui.scenes import open_screen, press_settled, running, settle, snapshot_of

SIZE = (80, 24)


def _doc(app: MemkeeperApp) -> DocView:
    return app.screen.query_one(DocView)


def _screen_text(app: MemkeeperApp) -> str:
    return app.export_screenshot()


async def test_startup_shows_tiers_memory_and_status(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        tree = app.screen.query_one(TierTree)
        labels = [str(n.label) for n in tree.root.children]
        assert labels[0].startswith("L2") and labels[1].startswith("L3") and labels[2].startswith("L1")
        doc = _doc(app)
        assert doc.items[0].kind == "h2"  # memory.md opened at its first ## section
        status = str(app.screen.query_one("#status").render())
        assert "2 pending" in status and "live off" in status and "/23.8k" in status
        assert app.snapshot is not None and app.snapshot.pending == 2 and app.snapshot.failed == 1


async def test_user_text_is_literal(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        doc = _doc(app)
        doc.focus()
        await pilot.press("end")
        await settle(pilot)
        plain = doc.rendered_text()
        assert "[bold red]not markup[/bold red]" in plain
        assert "\x1b" not in plain and "^[[31mnot red^[[0m" in plain


async def test_l1_day_counts_session_conversation_and_folding(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        snapshot = snapshot_of(app)
        agent = next(
            s.name for s in snapshot.sessions if '"sidechain"' in (store.sessions / s.name).read_text()
        )
        tree = app.screen.query_one(TierTree)
        assert tree.select_target(Target("l1", agent))
        await settle(pilot)
        labels = [str(n.label) for n in tree.root.children[2].children if n.is_expanded for n in n.children]
        assert any("⚙" in label for label in labels)  # length and tool calls
        titles = session_titles(store)
        assert titles and all(any(t[:20] in label for label in labels) for t in [titles[agent]])
        doc = _doc(app)
        kinds = {item.kind for item in doc.items}
        assert {"user", "assistant", "tool"} <= kinds
        assert any(item.sidechain for item in doc.items)
        folded = next(i for i, item in enumerate(doc.items) if item.body)
        doc.focus()
        doc.move_to(folded)
        await pilot.pause()
        rows_before = len(doc._strips(folded))
        await pilot.press("enter")
        await pilot.pause()
        assert len(doc._strips(folded)) > rows_before
        await pilot.press("enter")
        await pilot.pause()
        assert len(doc._strips(folded)) == rows_before


async def test_l3_summary_and_failed_summary(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        snapshot = snapshot_of(app)
        tree = app.screen.query_one(TierTree)
        tree.select_target(Target("summary", snapshot.archives[0].name))
        await settle(pilot)
        headings = [item.text.split(" (")[0] for item in _doc(app).items if item.kind == "h2"]
        assert headings == ["Overall", "Themes", "Decisions", "Issues"]
        failed = next(a for a in snapshot.archives if a.summary_state == "failed")
        tree.select_target(Target("summary", failed.name))
        await settle(pilot)
        texts = [item.text for item in _doc(app).items]
        assert texts[0].startswith("Summary FAILED") and failed.error in texts


async def test_sections_navigation(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        doc = _doc(app)
        sections = doc.sections()
        assert len(sections) > 3
        assert doc.cursor == sections[-1][0]  # memory.md opens at its newest section
        doc.focus()
        await pilot.press("home", "right_square_bracket")
        assert doc.cursor == sections[1][0]
        await pilot.press("left_square_bracket")
        assert doc.cursor == sections[0][0]
        await pilot.press("s")
        await press_settled(pilot, "down", "down", "enter")
        assert doc.cursor == sections[2][0]


async def test_search_as_you_type_filters_open_and_next_hit(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    shown: list[int] = []

    def hook(message: object) -> None:
        if isinstance(message, SearchScreen.ResultsShown):
            shown.append(message.count)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await press_settled(pilot, "slash")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"webhook")
        await settle(pilot)
        assert shown and shown[-1] > 0
        options = app.screen.query_one(HitList)
        headers = [
            str(options.get_option_at_index(i).prompt)
            for i in range(options.option_count)
            if options.get_option_at_index(i).disabled
        ]
        order = ["memory", "L3", "L2", "L1"]
        found = [next(o for o in order if o in h) for h in headers]
        # grouped by tier, each once (ranked: the group holding the best hit first, see _groups_best_first)
        assert len(found) == len(set(found)) > 1
        await pilot.press("f2")  # tier: memory only
        await settle(pilot)
        headers = [
            str(options.get_option_at_index(i).prompt)
            for i in range(options.option_count)
            if options.get_option_at_index(i).disabled
        ]
        assert len(headers) == 1 and "memory" in headers[0]
        await pilot.press("f2", "f2", "f2", "f2")  # back to all
        assert "deep: on" in str(app.screen.query_one("#filters").render())  # deep by default
        await pilot.press("f4")  # deep off
        await settle(pilot)
        assert "deep: off" in str(app.screen.query_one("#filters").render())
        await pilot.press("f4")
        await press_settled(pilot, "enter")
        assert isinstance(app.screen, HitScreen)
        doc = _doc(app)
        assert doc.terms == ("webhook",) and doc.hits
        screen = app.screen
        assert doc.items[doc.cursor].line == screen.hit.line  # on the hit's own entry
        assert "webhook" in _screen_text(app)


async def test_search_escape_returns(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        await press_settled(pilot, "slash")
        app.screen.query_one(Input).value = "zzzznothing"
        await settle(pilot)
        assert "0 hits" in str(app.screen.query_one("#filters").render())
        await pilot.press("escape")
        assert isinstance(app.screen, BrowseScreen)


async def pending_screen(pilot: Pilot[None]) -> PendingScreen:
    """The pending screen, its backend set to extractive (no model is asked)."""
    screen = await open_screen(pilot, "p", PendingScreen)
    screen.query_one("#backend", Select).value = "extractive"
    return screen


async def test_pending_regenerate_one_with_backend(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        screen = await pending_screen(pilot)
        table = screen.query_one(DataTable)
        assert table.row_count == 2
        table.focus()
        await pilot.press("g")
        await settle(pilot)
        await settle(pilot)
        assert table.row_count == 1
        assert app.snapshot is not None and app.snapshot.pending == 1
        assert "finished: 1 generated" in str(screen.query_one("#pending-log").render())
        await pilot.press("a")
        await settle(pilot)
        await settle(pilot)
        assert table.row_count == 0
        await pilot.press("g")  # nothing left: refused with a notification
        await pilot.press("c")
        await pilot.press("escape")
        assert isinstance(app.screen, BrowseScreen)


async def test_pending_cancel_stops_between_archives(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        screen = await pending_screen(pilot)
        screen.query_one(DataTable).focus()
        await pilot.press("a", "c")
        await settle(pilot)
        await settle(pilot)
        assert not screen._job_running
        pending = [e for e in read_index(store)["rotatedFiles"] if not e.get("summaryGenerated")]
        assert len(pending) in (0, 1, 2)  # stopped between archives, never half-written
        for entry in read_index(store)["rotatedFiles"]:
            if entry.get("summaryGenerated"):
                json.loads(store.archive(entry["summary"]).read_text())


async def test_rotate_now_and_refusal(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        before = len(read_index(store)["rotatedFiles"])
        await pilot.press("r")
        await press_settled(pilot, "y")
        assert len(read_index(store)["rotatedFiles"]) == before + 1
        assert app.snapshot is not None and len(app.snapshot.archives) == before + 1
        store.memory.write_text("")
        app.reload_snapshot()
        await press_settled(pilot, "r")
        assert isinstance(app.screen, BrowseScreen)  # refused, no dialog
        assert any("Nothing to rotate" in str(n.message) for n in app._notifications)


async def test_migrate_refuses_when_nothing_to_do(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        await press_settled(pilot, "m")
        assert isinstance(app.screen, MigrateModal)
        assert "Nothing to migrate" in str(app.screen.query_one("#migrate-body").render())
        assert app.screen.query_one("#run").disabled
        await pilot.press("y")
        await pilot.press("escape")
        assert isinstance(app.screen, BrowseScreen)


async def test_migrate_preview_confirm_result(store: StorePaths) -> None:
    sections = []
    for day in range(1, 29):
        body = "\n".join(f"- [note]: legacy fact {day}-{n} " + "x" * 120 for n in range(30))
        sections.append(f"## 2026-09-{day:02d}_1000\n{body}\n")
    store.memory.write_text("\n".join(sections))
    async with running(store) as (app, pilot):
        before = len(read_index(store)["rotatedFiles"])
        await pilot.press("m")
        await settle(pilot)
        body = str(app.screen.query_one("#migrate-body").render())
        assert "will create" in body
        await pilot.press("y")
        await settle(pilot)
        await settle(pilot)
        assert "Created" in str(app.screen.query_one("#migrate-body").render())
        await pilot.press("escape")
        await settle(pilot)
        assert len(read_index(store)["rotatedFiles"]) > before
        assert app.snapshot is not None and len(app.snapshot.archives) > before


async def test_forget_archive_then_restore_from_trash(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        snapshot = snapshot_of(app)
        name = snapshot.archives[0].name
        app.screen.query_one(TierTree).select_target(Target("archive", name))
        await press_settled(pilot, "d")
        await pilot.press("n")  # cancel first: nothing happens
        await settle(pilot)
        assert store.archive(name).exists()
        await pilot.press("d")
        await press_settled(pilot, "y")
        assert not store.archive(name).exists()
        assert app.snapshot is not None and name not in [a.name for a in app.snapshot.archives]
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TrashScreen)
        assert app.screen.query_one(DataTable).row_count == 1
        await pilot.press("u")
        await settle(pilot)
        await settle(pilot)
        assert store.archive(name).exists()
        assert app.screen.query_one(DataTable).row_count == 0
        assert name in [a.name for a in app.snapshot.archives]


async def test_forget_needs_a_forgettable_selection(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        await pilot.press("d")  # cursor on memory.md: refused
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        assert store.memory.exists()


async def test_projects_switcher(store: StorePaths, home: Path, tmp_path: Path) -> None:
    from tests.functional.tui.scenes import build_store

    other = build_store(home / "other")
    for index, project in enumerate((store.project, other.project)):
        folder = home / ".claude" / "projects" / f"-p{index}"
        folder.mkdir(parents=True)
        (folder / "t.jsonl").write_text(json.dumps({"cwd": str(project)}) + "\n")
    async with running(store) as (app, pilot):
        await press_settled(pilot, "o")
        options = app.screen.query_one(OptionList)
        assert options.option_count == 2
        target = next(i for i in range(2) if "other" in str(options.get_option_at_index(i).prompt))
        options.highlighted = target
        await pilot.press("enter")
        await settle(pilot)
        assert app.paths.project == other.project
        assert isinstance(app.screen, BrowseScreen)
        assert app.snapshot is not None and app.snapshot.project == other.project

        # Switching from a screen that holds the current project's paths closes that screen.
        await pilot.press("p")
        await settle(pilot)
        assert isinstance(app.screen, PendingScreen)
        app.open_projects()
        await settle(pilot)
        options = app.screen.query_one(OptionList)
        options.highlighted = next(
            i for i in range(2) if "other" not in str(options.get_option_at_index(i).prompt)
        )
        await pilot.press("enter")
        await settle(pilot)
        assert app.paths.project == store.project
        assert isinstance(app.screen, BrowseScreen) and len(app.screen_stack) == 1


async def test_help_lists_every_binding(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        await press_settled(pilot, "f1")
        assert isinstance(app.screen, HelpModal)
        table = app.screen.help_table
        from rich.console import Console

        console = Console(width=120, record=True)
        console.print(table)
        text = console.export_text()
        for _title, bindings in key_sections():
            for binding in bindings:
                assert binding.description, f"{binding.action} has no description"
                assert binding.id, f"{binding.action} has no id"
                assert binding.description in text
                assert key_label(binding.key) in text
        await pilot.press("escape")
        assert isinstance(app.screen, BrowseScreen)


async def test_command_palette_has_every_action(store: StorePaths) -> None:
    from memkeeper.tui.commands import palette_actions

    async with running(store) as (app, pilot):
        names = [name for name, _, _ in palette_actions(app)]
        for wanted in (
            "Search",
            "Pending summaries",
            "Regenerate summaries",
            "Rotate now",
            "Migrate legacy memory.md",
            "Forget selection",
            "Trash",
            "Switch project",
            "Toggle live refresh",
            "Help",
        ):
            assert wanted in names
        await pilot.press("ctrl+p")
        await press_settled(pilot, *"pending summ")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, PendingScreen)


async def test_toggle_live_refresh(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(50):
            await pilot.pause(0.02)
            if app.live:
                break
        assert app.live
        await pilot.press("w")
        await pilot.pause(0.05)
        assert not app.live
        assert "live off" in str(app.screen.query_one("#status").render())
        await pilot.press("w")
        for _ in range(50):
            await pilot.pause(0.02)
            if app.live:
                break
        assert app.live


def test_main_without_store_says_so_and_offers_demo(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    home: Path,
    gc_restored: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from memkeeper.tui import launch as app_module

    ran: list[MemkeeperApp] = []
    monkeypatch.setattr(MemkeeperApp, "run", lambda self: ran.append(self))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert app_module.main([str(empty)]) == 2
    assert ran == []
    err = capsys.readouterr().err
    assert str(empty) in err and "--demo" in err and len(err.strip().splitlines()) == 1
    assert not (empty / ".claude").exists()


def test_demo_store_removed_on_exit_unless_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, gc_restored: None
) -> None:
    from memkeeper.tui import launch as app_module

    ran: list[MemkeeperApp] = []
    monkeypatch.setattr(MemkeeperApp, "run", lambda self: ran.append(self))
    assert app_module.main(["--demo", "--no-watch"]) == 0
    assert not ran[0]._watch_wanted and ran[0]._note and "Demo" in ran[0]._note
    assert not ran[0].paths.project.exists() and not ran[0].paths.project.parent.exists()
    assert app_module.main(["--demo", "--keep-demo"]) == 0
    kept = ran[1].paths.project
    assert ran[1].paths.exists()
    shutil.rmtree(kept.parent)


async def test_large_session_is_wrapped_lazily(store: StorePaths) -> None:
    name = "2026-11-21_090000_bigbig12.l1.jsonl"
    lines = []
    for n in range(6000):
        role = ("user", "assistant", "tool", "tool_result")[n % 4]
        entry = {
            "ts": "2026-11-21T09:00:00.000Z",
            "role": role,
            "text": f"entry {n} " + "word " * 30,
            "tool_use_id": f"t{n // 4}",
            "name": "Bash",
            "cmd": f"echo {n}",
            "result": "ok",
            "output": "fine",
        }
        lines.append(json.dumps(entry))
    (store.sessions / name).write_text("\n".join(lines) + "\n")
    async with running(store) as (app, pilot):
        app.screen.query_one(TierTree).select_target(Target("l1", name))
        await settle(pilot)
        doc = _doc(app)
        assert len(doc.items) >= 4500
        assert len(doc._cache) < 50  # only what is on screen was wrapped
        doc.focus()
        await pilot.press("end")
        await settle(pilot)
        assert doc.cursor == len(doc.items) - 1
        assert len(doc._cache) < 100
        assert doc.scroll_y > 0


def test_core_modules_of_this_feature_do_not_import_textual_or_rich() -> None:
    import subprocess
    import sys

    code = (
        "import sys, memkeeper.core.store.trash, memkeeper.core.capture.projects; "
        "print(any(m.split('.')[0] in ('textual', 'rich', 'pydantic') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
