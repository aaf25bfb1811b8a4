"""Snapshot tests: every screen and main state at 80×24 on the fixed store (watcher off).

The screens added for daily use are also taken at 120×40 and in the light theme.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from tests.functional.tui.scenes import NEW_SCREENS, SCENES


def _projects_home(home: Path, store: StorePaths) -> None:
    folder = home / ".claude" / "projects" / "-work-ledgerline"
    folder.mkdir(parents=True)
    (folder / "t.jsonl").write_text(json.dumps({"cwd": str(store.project)}) + "\n")


@pytest.mark.parametrize("name", [n for n in SCENES if n != "activity"])
def test_snapshot(name: str, store: StorePaths, home: Path, snap_compare: Any) -> None:
    _projects_home(home, store)
    _, scene = SCENES[name]
    assert snap_compare(MemkeeperApp(store, watch=False), terminal_size=(80, 24), run_before=scene)


#: 80×24 dark is taken by test_snapshot.
VARIANTS = [
    pytest.param((80, 24), "textual-light", id="80x24-light"),
    pytest.param((120, 40), "textual-dark", id="120x40-dark"),
    pytest.param((120, 40), "textual-light", id="120x40-light"),
]


@pytest.mark.parametrize(("size", "theme"), VARIANTS)
@pytest.mark.parametrize("name", [n for n in NEW_SCREENS if n != "activity"])
def test_new_screen_snapshot(
    name: str, size: tuple[int, int], theme: str, store: StorePaths, home: Path, snap_compare: Any
) -> None:
    _projects_home(home, store)
    _, scene = SCENES[name]

    async def themed(pilot: Pilot[None]) -> None:
        pilot.app.theme = theme
        await scene(pilot)

    assert snap_compare(MemkeeperApp(store, watch=False), terminal_size=size, run_before=themed)


@pytest.mark.parametrize(
    ("size", "theme"),
    [pytest.param((80, 24), "textual-dark", id="80x24-dark"), *VARIANTS],
)
async def test_activity_snapshot(
    size: tuple[int, int], theme: str, store: StorePaths, home: Path, snapshot: Any
) -> None:
    """The activity screen as SVG, its id normalised: the plots' styles hash differently per process."""
    _, scene = SCENES["activity"]
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=size) as pilot:
        app.theme = theme
        await scene(pilot)
        svg = app.export_screenshot()
    assert re.sub(r"terminal-\d+", "terminal", svg) == snapshot
