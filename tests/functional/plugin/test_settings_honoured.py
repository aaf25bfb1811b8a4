"""A setting changed on the TUI's settings screen is honoured by the next hook event: memory off,
no flush starts; recall off, nothing is injected; the resident lookup reads it again too."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memkeeper.core.recall.lookup import KeptSettings
from memkeeper.core.search import refresh
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from tests.functional.plugin.capture_helpers import payload_for
from tests.functional.tui.scenes import settle
from tests.functional.tui.settings_kit import change, open_settings

RunHook = Callable[[str, dict[str, Any] | bytes], tuple[int, str]]
Jobs = list[tuple[str, dict[str, Any] | None]]
EARLIER = "1111aaaa-0000-4000-8000-000000000001"
ANSWER = "The flaky S3 upload retry was fixed with exponential backoff and jitter in the uploader client."
QUESTION = "flaky S3 upload retry"


async def _on_screen(store: StorePaths, *changes: tuple[str, str | bool]) -> None:
    """Make ``changes`` on the settings screen, as a user does."""
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_settings(pilot)
        for key, value in changes:
            await change(pilot, key, value)


async def test_memory_off_on_the_screen_starts_no_flush(
    store: StorePaths, run_hook: RunHook, started_jobs: Jobs
) -> None:
    tool = payload_for("PostToolUse", store.project)
    await _on_screen(store, ("memory.flushEvery", "1"))
    run_hook("PostToolUse", tool)
    assert [kind for kind, _ in started_jobs] == ["flush"]  # on: every tool use is due
    await _on_screen(store, ("memory.enabled", False))
    run_hook("PostToolUse", tool)
    run_hook("Stop", payload_for("Stop", store.project, session_id=tool["session_id"]))
    assert [kind for kind, _ in started_jobs] == ["flush"]  # off: nothing more
    assert json.loads(store.config.read_text()) == {"memory": {"flushEvery": 1, "enabled": False}}


def _indexed(store: StorePaths) -> None:
    lines = [
        {"ts": "2026-11-02T10:00:00Z", "role": "user", "text": "the S3 uploads keep failing at random"},
        {"ts": "2026-11-02T10:01:00Z", "role": "assistant", "text": ANSWER},
    ]
    name = f"2026-11-02_100000_{EARLIER[:8]}.l1.jsonl"
    (store.sessions / name).write_text("".join(json.dumps({**e, "session": EARLIER}) + "\n" for e in lines))
    refresh(store)


async def test_recall_off_on_the_screen_injects_nothing(store: StorePaths, run_hook: RunHook) -> None:
    _indexed(store)

    def prompt(session: str) -> str:
        payload = payload_for("UserPromptSubmit", store.project, session_id=session, prompt=QUESTION)
        code, out = run_hook("UserPromptSubmit", payload)
        assert code == 0
        return out

    await _on_screen(store, ("recall.minConfidence", "0.5"))
    assert "exponential backoff" in prompt("aaaa0001-0000-4000-8000-000000000001")  # on: injected
    await _on_screen(store, ("recall.enabled", False))
    assert prompt("aaaa0002-0000-4000-8000-000000000002") == ""
    await _on_screen(store, ("recall.enabled", True))
    assert "exponential backoff" in prompt("aaaa0003-0000-4000-8000-000000000003")


async def test_the_resident_lookup_reads_a_change_at_its_next_question(store: StorePaths) -> None:
    kept = KeptSettings(store)
    assert kept.settings().recall_enabled is True
    await _on_screen(store, ("recall.enabled", False))
    assert kept.settings().recall_enabled is False
    await _on_screen(store, ("recall.minConfidence", "0.7"))
    assert kept.settings().recall_min_confidence == 0.7
