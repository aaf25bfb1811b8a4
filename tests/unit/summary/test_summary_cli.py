"""``memkeeper regenerate`` / ``generate-l3`` and ``memkeeper summaries``."""

from __future__ import annotations

import json

import pytest

from memkeeper.cli.main import main
from memkeeper.core.store.paths import StorePaths
from tests.unit.summary.summary_helpers import add_archive


def run(store: StorePaths, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["--project", str(store.project), *args])
    out, err = capsys.readouterr()
    return code, " ".join(out.split()) if not args[-1] == "--json" else out, err


def test_regenerate_json_and_the_generate_l3_alias(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    add_archive(store)
    code, out, _ = run(store, capsys, "generate-l3", "--backend", "extractive", "--json")
    assert code == 0
    assert json.loads(out)["outcomes"] == [
        {
            "file": "memory_20260302_150000.md",
            "outcome": "generated",
            "generator": "extractive",
            "error": None,
            "notes": [],
        }
    ]
    code, out, _ = run(store, capsys, "regenerate", "--backend", "extractive")
    assert code == 3 and "nothing is pending" in out  # nothing left to do
    code, out, _ = run(store, capsys, "regenerate", "--all", "--backend", "extractive")
    assert code == 0 and "✓ memory_20260302_150000.md generated (extractive)" in out


def test_regenerate_failure_is_exit_1_with_the_reason(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    add_archive(store, data=b"")
    code, out, _ = run(store, capsys, "regenerate", "memory_20260302_150000.md", "--backend", "extractive")
    assert code == 1
    assert "✗ memory_20260302_150000.md failed: the archive is empty, nothing to summarize" in out


def test_regenerate_usage_errors(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(store, capsys, "regenerate", "memory_x.md", "--all")
    assert code == 2 and "not both" in err
    store.config.write_text("{broken")
    code, _, err = run(store, capsys, "regenerate")
    assert code == 2 and "config.json" in err and err.count("\n") == 1


def test_no_store_is_one_line(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    code = main(["--project", str(tmp_path / "nowhere"), "summaries"])
    assert code == 3 and "no memory store" in capsys.readouterr().err


def test_summaries_lists_pending_failed_and_budget(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    add_archive(store)
    add_archive(store, "memory_20260303_090000.md", data=b"")
    run(store, capsys, "regenerate", "memory_20260303_090000.md", "--backend", "extractive")
    code, out, _ = run(store, capsys, "summaries", "--json")  # --json last: raw output
    data = json.loads(out)
    assert code == 0 and data["archives"] == 2 and data["generated"] == 0
    states = {p["file"]: (p["state"], p["error"]) for p in data["pending"]}
    assert states["memory_20260302_150000.md"] == ("pending", None)
    assert (
        states["memory_20260303_090000.md"][0] == "failed"
        and "empty" in states["memory_20260303_090000.md"][1]
    )
    assert data["budget"]["calls"] == 0 and data["budget"]["exceeded"] is False
    code, out, _ = run(store, capsys, "summaries")
    assert "2 archives: 0 summarized, 2 pending or failed." in out
    assert "memory_20260303_090000.md" in out and "failed" in out and "Model budget today" in out


def test_summaries_says_when_the_budget_is_reached(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    store.config.write_text(json.dumps({"budget": {"dailyCalls": 0}}))
    code, out, _ = run(store, capsys, "summaries")
    assert code == 0 and "Budget reached: summaries use the extractive backend until tomorrow." in out
