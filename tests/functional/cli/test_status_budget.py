"""``memkeeper status`` reports the day's model budget and says when the cap switched summaries."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memkeeper.cli.main import main
from memkeeper.core.demo import create_demo_store
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.summarizers import log_call


@pytest.fixture()
def store(tmp_path: Path) -> StorePaths:
    paths = create_demo_store(tmp_path / "project")
    paths.config.write_text(json.dumps({"budget": {"dailyCalls": 2, "dailyTokens": 10_000}}))
    return paths


def _status(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert main(["--project", str(store.project), "status", "--json"]) == 0
    answer: dict[str, object] = json.loads(capsys.readouterr().out)
    return answer


def test_status_counts_todays_calls_and_flags_the_cap(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    budget = _status(store, capsys)["modelBudget"]
    assert isinstance(budget, dict)
    assert (budget["calls"], budget["dailyCalls"], budget["exceeded"]) == (0, 2, False)

    now = datetime.now(UTC).isoformat()
    for _ in range(2):
        log_call(
            store,
            {
                "ts": now,
                "backend": "claude",
                "purpose": "summary",
                "outcome": "ok",
                "inputTokens": 100,
                "outputTokens": 20,
            },
        )
    budget = _status(store, capsys)["modelBudget"]
    assert isinstance(budget, dict)
    assert (budget["calls"], budget["tokens"], budget["exceeded"]) == (2, 240, True)

    assert main(["--project", str(store.project), "status"]) == 0
    assert "cap reached" in capsys.readouterr().out


def test_status_says_nothing_is_captured_yet_and_when_the_first_flush_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memkeeper.core.store.paths import ensure_store

    paths = StorePaths(tmp_path / "fresh")
    ensure_store(paths)
    capture = _status(paths, capsys)["capture"]
    assert capture == {
        "captured": False,
        "flushEvery": 10,
        "sessions": 0,
        "lastCaptureAt": None,
        "nextFlush": None,
    }
    assert main(["--project", str(paths.project), "status"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "captured nothing yet: start `claude` in this project" in out
    assert "next flush after the first 10 prompts and tool uses of a session, or when it ends" in out


def test_status_counts_down_to_the_next_flush_of_the_session_counted_last(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    from memkeeper.core.log import counters

    counters.bump(store, "older-session", messages=1)
    counters.bump(store, "4f2a9c1e-live", messages=1, tool_uses=0)
    for _ in range(3):
        counters.bump(store, "4f2a9c1e-live", tool_uses=1)
    capture = _status(store, capsys)["capture"]
    assert isinstance(capture, dict)
    assert capture["captured"] is True and capture["sessions"] == 9  # the demo's L1 files
    assert capture["nextFlush"] == {
        "session": "4f2a9c1e-live",
        "ended": False,
        "unflushed": 4,
        "every": 10,
        "eventsLeft": 6,
    }
    assert main(["--project", str(store.project), "status"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "captured 9 sessions, last " in out
    assert "after 6 more prompts or tool uses in session 4f2a9c1e (every 10), or when it ends" in out
