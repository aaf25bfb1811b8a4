"""Changing a setting on the settings screen as a user does (keys), for the TUI and hook tests."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input, Select, Switch

from memkeeper.tui.screens.settings import SettingsScreen, widget_id
from tests.functional.tui.scenes import open_screen, settle


async def open_settings(pilot: Pilot[None]) -> SettingsScreen:
    """Press ``,`` in the browser: the settings screen, its rows read."""
    screen = await open_screen(pilot, "comma", SettingsScreen)
    await settle(pilot)
    return screen


async def change(pilot: Pilot[None], key: str, value: str | bool) -> None:
    """Set ``key`` on the open settings screen: a switch toggled (enter), a choice made, or a
    value typed over the field's text and entered."""
    editor = pilot.app.screen.query_one(f"#{widget_id(key)}")
    editor.focus()
    await settle(pilot)
    if isinstance(editor, Switch):
        if editor.value != value:
            await pilot.press("enter")
    elif isinstance(editor, Select):
        editor.value = value
    else:
        assert isinstance(editor, Input) and isinstance(value, str)
        await pilot.press("end", "ctrl+u", *value, "enter")  # ctrl+u: delete what is left of the cursor
    await settle(pilot)
