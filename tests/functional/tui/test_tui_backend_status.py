"""The status line names the summarizer backend and says when it rests (read off the event loop)."""

from __future__ import annotations

import json

from memkeeper.core.store.paths import StorePaths
from memkeeper.core.summarizers.health import record_down
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.widgets.status import StatusLine
from tests.functional.tui.scenes import settle


def _status(app: MemkeeperApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


async def test_status_shows_the_backend_and_that_it_rests(store: StorePaths) -> None:
    store.config.write_text(json.dumps({"summarizer": {"backend": "claude"}}))
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert app.backend is not None and app.backend.in_use == "claude"
        assert "summarizer claude" in _status(app)
        record_down(store, "claude", "connection refused")  # as a failed summary call would
        app.reload_snapshot()
        await settle(pilot)
        assert app.backend.resting and app.backend.in_use == "extractive"
        status = _status(app)
        assert "summarizer extractive (claude rests →" in status, status


async def test_a_narrow_status_line_drops_the_rotation_time_first(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        narrow = _status(app)
        assert "summarizer " in narrow and "live " in narrow and "pending" in narrow
        assert "rot " not in narrow
        await pilot.resize_terminal(140, 30)
        await settle(pilot)
        assert "rot " in _status(app)
