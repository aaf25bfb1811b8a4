"""The settings screen (,): each setting changed in place reaches its config file, ``memkeeper
status`` and the status line; a bad value is refused on screen with nothing written; unknown keys
are kept; each value shows its source; snapshots at 80×24 and 120×40."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

from memkeeper.cli.main import main as cli_main
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.screens.settings import SettingsScreen, widget_id
from memkeeper.tui.widgets.status import StatusLine
from tests.functional.tui.scenes import SCENES, press_settled, running, settle
from tests.functional.tui.settings_kit import change, open_settings
from tests.refused_settings import REFUSED_VALUES


def _global(home: Path) -> Path:
    return home / ".claude" / "memory-keeper" / "config.json"


def _status(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert cli_main(["--project", str(store.project), "status", "--json"]) == 0
    answer: dict[str, Any] = json.loads(capsys.readouterr().out)
    return answer


def _row(screen: SettingsScreen, key: str, part: str) -> str:
    return str(screen.query_one(f"#row-{widget_id(key)} .setting-{part}", Static).render())


#: Every config setting on the screen, a new value for it, and what the file then holds.
CHANGES: list[tuple[str, str | bool, Any]] = [
    ("memory.enabled", False, False),
    ("memory.flushEvery", "3", 3),
    ("memory.retentionDays", "14", 14),
    ("summarizer.backend", "extractive", "extractive"),
    ("summarizer.model", "sonnet", "sonnet"),
    ("budget.dailyCalls", "50", 50),
    ("budget.dailyTokens", "100000", 100_000),
    ("recall.enabled", False, False),
    ("recall.minConfidence", "0.8", 0.8),
]


async def test_each_setting_changed_on_the_screen_reaches_the_file_and_status(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    before = json.loads(store.config.read_text())
    async with running(store) as (app, pilot):
        screen = await open_settings(pilot)
        for key, typed, _written in CHANGES:
            await change(pilot, key, typed)
            assert _row(screen, key, "source") == "this project", key
        status_line = str(screen.query_one(StatusLine).render())
        assert "memory off recall off" in status_line  # the app re-read the store at once
        assert app.snapshot is not None and not app.snapshot.memory_enabled
    written = json.loads(store.config.read_text())
    for key, _typed, value in CHANGES:
        section, leaf = key.split(".")
        assert written[section][leaf] == value, key
    assert {k: v for k, v in written["summarizer"].items() if k not in ("backend", "model")} == {
        k: v for k, v in before["summarizer"].items() if k not in ("backend", "model")
    }
    settings = _status(store, capsys)["settings"]
    assert settings == {
        "memoryEnabled": False,
        "flushEvery": 3,
        "recallEnabled": False,
        "recallMinConfidence": 0.8,
    }
    budget = _status(store, capsys)["modelBudget"]
    assert (budget["dailyCalls"], budget["dailyTokens"]) == (50, 100_000)


@pytest.mark.parametrize(("key", "typed", "why"), REFUSED_VALUES)
async def test_a_bad_value_is_refused_on_screen_and_nothing_is_written(
    store: StorePaths, key: str, typed: str, why: str
) -> None:
    before = store.config.read_bytes()
    async with running(store) as (_app, pilot):
        screen = await open_settings(pilot)
        await change(pilot, key, typed)
        error = str(screen.query_one("#settings-error", Static).render())
        assert error.startswith("Not saved:") and f"'{key}'" in error and why in error
        editor = screen.query_one(f"#{widget_id(key)}", Input)
        assert editor.value == typed and editor.has_class("-refused")  # kept, to be corrected
        assert _row(screen, key, "source") == "default"
        await change(pilot, key, "7" if key != "recall.minConfidence" else "0.7")  # corrected: saved
        assert not screen.query_one("#settings-error").display and not editor.has_class("-refused")
    assert store.config.read_bytes() != before


async def test_opening_and_closing_the_screen_changes_nothing(store: StorePaths, home: Path) -> None:
    store.config.write_text(json.dumps({"memory": {"enabled": False}, "summarizer": {"backend": "claude"}}))
    before = store.config.read_bytes()
    async with running(store) as (app, pilot):
        theme = app.theme
        screen = await open_settings(pilot)
        assert (
            str(screen.query_one(f"#row-{widget_id('memory.enabled')} .switch-state", Static).render())
            == "off"
        )
        await press_settled(pilot, "escape")
        assert app.theme == theme
    assert store.config.read_bytes() == before and not _global(home).exists()


async def test_a_store_change_keeps_what_is_being_typed(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        screen = await open_settings(pilot)
        field = screen.query_one(f"#{widget_id('memory.flushEvery')}", Input)
        field.focus()
        await pilot.press("end", "ctrl+u", "4")
        app.reload_snapshot()  # as a hook's write would: the rows are read again
        await settle(pilot)
        assert field.value == "4" and store.config.read_text().count("flushEvery") == 0
        await press_settled(pilot, "enter")
    assert json.loads(store.config.read_text())["memory"] == {"flushEvery": 4}


async def test_unknown_and_js_keys_are_kept(store: StorePaths) -> None:
    mine = {"keepRaw": True, "someday": {"a": [1, 2]}, "memory": {"flushEvery": 4, "later": "kept"}}
    store.config.write_text(json.dumps(mine))
    async with running(store) as (_app, pilot):
        await open_settings(pilot)
        await change(pilot, "memory.enabled", False)
    written = json.loads(store.config.read_text())
    assert written == {
        "keepRaw": True,
        "someday": {"a": [1, 2]},
        "memory": {"flushEvery": 4, "later": "kept", "enabled": False},
    }


async def test_global_and_project_values_show_their_sources_and_f2_saves_globally(
    store: StorePaths, home: Path
) -> None:
    _global(home).parent.mkdir(parents=True)
    _global(home).write_text(json.dumps({"recall": {"minConfidence": 0.5}, "memory": {"flushEvery": 6}}))
    store.config.write_text(json.dumps({"memory": {"flushEvery": 4}}))
    async with running(store) as (_app, pilot):
        screen = await open_settings(pilot)
        assert _row(screen, "recall.minConfidence", "source") == "global"
        assert screen.query_one(f"#{widget_id('recall.minConfidence')}", Input).value == "0.5"
        assert _row(screen, "memory.flushEvery", "source") == "this project"
        assert screen.query_one(f"#{widget_id('memory.flushEvery')}", Input).value == "4"
        assert _row(screen, "memory.retentionDays", "source") == "default"
        await press_settled(pilot, "f2")  # changes go to the global file now
        await change(pilot, "memory.retentionDays", "60")
        assert _row(screen, "memory.retentionDays", "source") == "global"
        screen.query_one(f"#{widget_id('memory.flushEvery')}").focus()
        await press_settled(pilot, "f2", "f3")  # back to this project; unset its flushEvery
        assert _row(screen, "memory.flushEvery", "source") == "global"
        assert screen.query_one(f"#{widget_id('memory.flushEvery')}", Input).value == "6"
    assert json.loads(_global(home).read_text())["memory"] == {"flushEvery": 6, "retentionDays": 60}
    assert json.loads(store.config.read_text()) == {}


async def test_the_tui_preferences_are_set_from_the_screen(store: StorePaths, home: Path) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_settings(pilot)
        await change(pilot, "tui.theme", "textual-light")
        await change(pilot, "tui.deep", False)
        await settle(pilot)
        assert app.theme == "textual-light" and app.prefs.deep is False
        assert _row(screen, "tui.deep", "source") == "your TUI prefs"
    saved = json.loads((home / ".config" / "memkeeper" / "tui.json").read_text())
    assert saved == {"theme": "textual-light", "deep": False}


async def test_the_cost_is_todays_model_use_against_the_cap(store: StorePaths) -> None:
    from datetime import UTC, datetime

    from memkeeper.core.summarizers import log_call

    record = {
        "backend": "claude",
        "purpose": "summary",
        "outcome": "ok",
        "inputTokens": 900,
        "outputTokens": 300,
    }
    for _ in range(2):
        log_call(store, {"ts": datetime.now(UTC).isoformat(), **record})
    async with running(store) as (_app, pilot):
        screen = await open_settings(pilot)
        assert _row(screen, "budget.dailyCalls", "cost") == "2/50 today"
        assert _row(screen, "budget.dailyTokens", "cost") == "2.4k/500.0k today"
        assert _row(screen, "summarizer.backend", "cost") == "2 calls today"
        assert not screen.query_one(f"#row-{widget_id('budget.dailyCalls')} .setting-cost").has_class(
            "-capped"
        )
        await change(pilot, "budget.dailyCalls", "2")  # the cap reached: shown as such at once
        cost = screen.query_one(f"#row-{widget_id('budget.dailyCalls')} .setting-cost", Static)
        assert str(cost.render()) == "2/2 today" and cost.has_class("-capped")


async def test_the_palette_opens_it(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        await press_settled(pilot, "ctrl+p")
        await pilot.press(*"settings")
        await press_settled(pilot, "enter")
        assert isinstance(app.screen, SettingsScreen)
        await press_settled(pilot, "escape")
        assert not isinstance(app.screen, SettingsScreen)


def test_settings_snapshot_wide(store: StorePaths, snap_compare: Any) -> None:
    """At 120×40 (80×24 is ``test_tui_snapshots.py::test_snapshot[settings]``)."""
    _, scene = SCENES["settings"]
    assert snap_compare(MemkeeperApp(store, watch=False), terminal_size=(120, 40), run_before=scene)
