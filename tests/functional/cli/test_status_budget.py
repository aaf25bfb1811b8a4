"""``memkeeper status`` reports the day's model budget and says when the cap switched summaries."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memkeeper.cli.main import main
from memkeeper.core.demo import create_demo_store
from memkeeper.core.store import StorePaths
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
