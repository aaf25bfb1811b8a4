"""Snapshot tests: every screen and main state at 80×24 on the fixed store (watcher off)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scenes import SCENES

from memkeeper.core.store import StorePaths
from memkeeper.tui.app import MemkeeperApp


@pytest.mark.parametrize("name", list(SCENES))
def test_snapshot(name: str, store: StorePaths, home: Path, snap_compare: Any) -> None:
    folder = home / ".claude" / "projects" / "-work-ledgerline"
    folder.mkdir(parents=True)
    (folder / "t.jsonl").write_text(json.dumps({"cwd": str(store.project)}) + "\n")
    _, scene = SCENES[name]
    assert snap_compare(MemkeeperApp(store, watch=False), terminal_size=(80, 24), run_before=scene)
