"""Live refresh: files written by another process appear in the running app, selection kept."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from textual.pilot import Pilot

from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.messages import StoreChanged
from memkeeper.tui.model import Target
from memkeeper.tui.widgets.docview import DocView
from memkeeper.tui.widgets.tier_tree import TierTree
from tests.functional.tui.scenes import settle

APPEND = """
import sys
from pathlib import Path
from memkeeper.core.store.atomic import append_text
append_text(Path(sys.argv[1]), "\\n## 2026-11-22_0100 (local 11-22_1000)\\n- [live]: written by a hook process\\n")
"""

NEW_SESSION = """
import json, sys
from pathlib import Path
from memkeeper.core.store.atomic import atomic_write_text
entry = {"ts": "2026-11-22T01:00:00.000Z", "role": "user", "text": "hello from a new session", "session": "abcdef12-0000"}
atomic_write_text(Path(sys.argv[1]) / "2026-11-22_010000_abcdef12.l1.jsonl", json.dumps(entry) + "\\n")
"""


async def _wait_for(pilot: Pilot[None], condition: Callable[[], object], rounds: int = 100) -> bool:
    for _ in range(rounds):
        if condition():
            return True
        await pilot.pause(0.05)
    return bool(condition())


async def test_hook_write_in_another_process_appears(store: StorePaths) -> None:
    changes: list[StoreChanged] = []

    def hook(message: object) -> None:
        if isinstance(message, StoreChanged):
            changes.append(message)

    app = MemkeeperApp(store, watch=True)
    async with app.run_test(size=(80, 24), message_hook=hook) as pilot:
        await settle(pilot)
        assert await _wait_for(pilot, lambda: app.live)
        doc = app.screen.query_one(DocView)
        doc.focus()
        doc.move_to(5)
        await settle(pilot)
        tokens_before = app.snapshot.memory_tokens if app.snapshot else 0
        subprocess.run([sys.executable, "-c", APPEND, str(store.memory)], check=True)
        assert await _wait_for(
            pilot, lambda: any(item.text == "[live]: written by a hook process" for item in doc.items)
        )
        assert doc.cursor == 5  # position kept
        assert app.snapshot is not None and app.snapshot.memory_tokens > tokens_before
        assert "l2" in changes[0].tiers
        # An atomic rename (how every state file is written) is seen too: a new L1 session.
        subprocess.run([sys.executable, "-c", NEW_SESSION, str(store.sessions)], check=True)
        assert await _wait_for(
            pilot,
            lambda: app.snapshot is not None and any(s.session == "abcdef12" for s in app.snapshot.sessions),
        )
        tree = app.screen.query_one(TierTree)
        assert tree.cursor_node is not None and tree.cursor_node.data == Target("memory")  # selection kept
        assert any("2026-11-22" in str(n.label) for n in tree.root.children[2].children)


def test_watch_ignores_own_temp_and_private_files(store: StorePaths) -> None:
    from pathlib import Path

    from memkeeper.tui.watch import tier_of

    root = store.root
    assert tier_of(store, root / "memory.md") == "l2"
    assert tier_of(store, root / "memory_20261009_085924.summary.json") == "l3"
    assert tier_of(store, root / "memory-index.json") == "index"
    assert tier_of(store, store.sessions / "2026-11-22_010000_abcdef12.l1.jsonl") == "l1"
    assert tier_of(store, root / "memory_20261009_085924.md") == "l2"
    assert tier_of(store, root / "project.md") == "named"
    assert tier_of(store, store.sessions / "notes.txt") is None
    for ignored in (
        ".memory.md.abc.tmp",
        ".search.sqlite3",
        ".search.sqlite3-wal",
        ".memkeeper.lock",
        "x.lock",
    ):
        assert tier_of(store, root / ignored) is None
    assert tier_of(store, store.state / "counters.json") is None
    assert tier_of(store, Path("/elsewhere/memory.md")) is None
