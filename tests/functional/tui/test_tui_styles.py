"""Styles live in ``tui/styles/*.tcss``: no class of the TUI declares ``DEFAULT_CSS``, and every
rule of ``widgets.tcss`` that styles a component class reaches the widget that draws it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

import memkeeper.tui
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.screens.search import HitList, SearchScreen
from memkeeper.tui.widgets.docview import DocView
from memkeeper.tui.widgets.tier_tree import TierTree
from tests.functional.tui.scenes import open_screen, running

WIDGETS_TCSS = Path(memkeeper.tui.__file__).parent / "styles" / "widgets.tcss"


def test_no_tui_class_declares_default_css() -> None:
    for info in pkgutil.walk_packages(memkeeper.tui.__path__, "memkeeper.tui."):
        importlib.import_module(info.name)
    declared = [
        f"{name}.{cls.__name__}"
        for name, module in list(sys.modules.items())
        if name.startswith("memkeeper.tui.")
        for cls in vars(module).values()
        if inspect.isclass(cls) and cls.__module__ == name and "DEFAULT_CSS" in vars(cls)
    ]
    assert declared == []


def _styled_component_classes() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for widget, name in re.findall(r"^(\w+)(?::\w+)? > \.([\w-]+) \{", WIDGETS_TCSS.read_text("utf-8"), re.M):
        found.setdefault(widget, set()).add(name)
    return found


async def test_the_component_classes_are_styled_from_the_tcss(store: StorePaths) -> None:
    styled = _styled_component_classes()
    assert set(styled) == {"DocView", "TierTree", "HitList"}
    async with running(store) as (app, pilot):
        widgets = [app.screen.query_one(DocView), app.screen.query_one(TierTree)]
        search = await open_screen(pilot, "slash", SearchScreen)
        widgets.append(search.query_one(HitList))
        for widget in widgets:
            names = styled[type(widget).__name__]
            assert names <= widget.COMPONENT_CLASSES
            unstyled = [n for n in sorted(names) if not widget.get_component_rich_style(n, partial=True)]
            assert unstyled == [], type(widget).__name__
