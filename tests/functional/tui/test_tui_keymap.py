"""The key table (tui/keymap.json) and the classes that take their BINDINGS from it agree."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from collections import Counter

import pytest
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

import memkeeper.tui
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui import keymap
from memkeeper.tui.keymap import KeymapError, KeyTable
from memkeeper.tui.screens.browse import BrowseScreen
from memkeeper.tui.screens.search import SearchScreen
from tests.functional.tui.scenes import open_screen, press_settled, running


def keyed_classes() -> dict[str, type]:
    """Every class of the TUI package whose own BINDINGS come from the key table, by section."""
    for info in pkgutil.walk_packages(memkeeper.tui.__path__, "memkeeper.tui."):
        importlib.import_module(info.name)
    found: dict[str, type] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("memkeeper.tui."):
            continue
        for cls in vars(module).values():
            own = inspect.isclass(cls) and cls.__module__ == name and cls.__dict__.get("BINDINGS")
            if own:
                assert isinstance(own, KeyTable), f"{cls.__qualname__}.BINDINGS is not from the key table"
                sections = {b.id.split(".")[0] for b in own if isinstance(b, Binding) and b.id}
                assert len(sections) == 1, (cls.__qualname__, sections)
                section = sections.pop()
                assert section not in found, f"{section!r} taken by {found[section]} and {cls}"
                found[section] = cls
    return found


def test_every_section_belongs_to_one_class_and_every_class_has_its_rows() -> None:
    classes = keyed_classes()
    assert set(classes) == set(keymap.table())
    for section, cls in classes.items():
        assert list(cls.__dict__["BINDINGS"]) == keymap.table()[section]


def test_every_action_exists_on_its_class_or_the_app() -> None:
    for section, cls in keyed_classes().items():
        for binding in keymap.table()[section]:
            name = f"action_{binding.action}"
            assert callable(getattr(cls, name, None)) or callable(getattr(App, name, None)), binding.id


def test_every_id_is_unique_and_names_its_section() -> None:
    ids = [b.id for section, rows in keymap.table().items() for b in rows]
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    for section, rows in keymap.table().items():
        assert all(b.id and b.id.startswith(f"{section}.") for b in rows)
        assert all(b.description for b in rows)  # every binding described


def test_the_table_reads_rows_with_their_defaults_and_skips_comments() -> None:
    parsed = keymap.parse(
        '{"$comment": "note", "x": {"$comment": "Owner",'
        ' "a": {"keys": "d,delete", "action": "forget", "description": "Forget"},'
        ' "b": {"keys": "n", "action": "next", "description": "Next", "show": false, "priority": true}}}'
    )
    assert parsed == {
        "x": [
            Binding("d,delete", "forget", "Forget", id="x.a"),
            Binding("n", "next", "Next", show=False, priority=True, id="x.b"),
        ]
    }


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ('{"keys": "a", "action": "go"}', r"x\.a: unknown \[\], missing or empty \['description'\]"),
        ('{"keys": "a", "action": "go", "description": "Go", "hidden": true}', r"x\.a: unknown \['hidden'\]"),
        ('{"keys": "a", "action": "go", "description": "Go", "show": "no"}', r"x\.a: show must be a bool"),
        ('{"keys": "a", "action": "app.quit", "description": "Quit"}', r"x\.a: action 'app.quit' must be"),
        ('"a"', r"x\.a: a binding is an object"),
    ],
)
def test_a_malformed_row_is_refused_naming_its_id(row: str, says: str) -> None:
    with pytest.raises(KeymapError, match=says):
        keymap.parse(f'{{"x": {{"a": {row}}}}}')


def test_a_name_given_twice_is_refused() -> None:
    row = '{"keys": "a", "action": "go", "description": "Go"}'
    with pytest.raises(KeymapError, match="a given twice"):
        keymap.parse(f'{{"x": {{"a": {row}, "b": {row}, "a": {row}}}}}')


def test_an_unknown_section_is_refused() -> None:
    with pytest.raises(KeymapError, match="no section 'nowhere'"):
        keymap.bindings("nowhere")


def test_a_class_without_the_action_fails_at_its_definition_naming_the_id() -> None:
    with pytest.raises((KeymapError, RuntimeError)) as raised:

        class Lacking(Screen[None]):
            BINDINGS = keymap.bindings("sessions")

            def action_close(self) -> None: ...

    chain = f"{raised.value} {raised.value.__cause__}"  # Python 3.11 wraps __set_name__'s error
    assert "sessions.down: " in chain and "has no action_row_down" in chain


def test_a_class_with_every_action_is_made() -> None:
    class Complete(Screen[None]):
        BINDINGS = keymap.bindings("confirm")

        def action_confirm(self) -> None: ...

        def action_cancel(self) -> None: ...

    assert [b.id for b in Complete.BINDINGS if isinstance(b, Binding)] == ["confirm.yes", "confirm.no"]


async def test_a_textual_keymap_rebinds_a_binding_by_its_table_id(store: StorePaths) -> None:
    async with running(store) as (app, pilot):
        app.set_keymap({"browse.search": "f9"})
        await press_settled(pilot, "slash")
        assert isinstance(app.screen, BrowseScreen)  # the old key no longer searches
        await open_screen(pilot, "f9", SearchScreen)
