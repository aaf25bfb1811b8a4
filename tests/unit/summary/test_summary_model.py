"""The Summary model: JS-written files load leniently, our writes are capped, model answers validated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memkeeper.core.summaries.summary import (
    InvalidOutput,
    Summary,
    SummaryError,
    load_summary,
    parse_model_output,
    raw_output_path,
    summary_path,
)
from tests.unit.summary.summary_helpers import FIXTURES, GOOD_ANSWER


def test_js_agent_spec_file_loads_with_all_fields() -> None:
    summary = load_summary(FIXTURES / "js_summary_full.json")
    assert summary.dateRange is not None and summary.dateRange.first == "2026-01-10"
    assert summary.sectionCount == 45
    assert summary.themes[0].name == "로테이션 구현"
    assert summary.themes[0].sessions == ["2026-01-10", "2026-01-12"]
    assert summary.keyDecisions[0].reason == "no tokenizer dependency"
    assert [i.status for i in summary.issues] == ["resolved", "open"]
    assert summary.generator is None


def test_incomplete_js_file_loads_with_defaults() -> None:
    summary = load_summary(FIXTURES / "js_summary_incomplete.json")
    hooks = summary.themes[0]
    assert hooks.name == "Hooks" and hooks.summary == "" and hooks.sessions == []  # no summary: fine
    assert summary.themes[1].sessions == ["2026-01-09"]  # a bare string becomes a list
    assert summary.themes[2].name == "a bare string theme"
    assert summary.keyDecisions[0].reason == "" and summary.keyDecisions[0].date == ""
    assert [i.issue for i in summary.issues] == ["Stop hook fires every turn"]  # 42 dropped
    assert summary.issues[0].status == "open"
    assert summary.sectionCount == 12
    assert summary.overallSummary == "" and summary.dateRange is None


def test_architecture_spec_file_keeps_unknown_fields() -> None:
    summary = load_summary(FIXTURES / "js_summary_arch_spec.json")
    assert summary.sourceFile == "memory_20260113_235959.md"
    assert summary.themes[0].sessions == []
    assert summary.to_json()["someFutureField"] == {"kept": True}


def test_bad_files_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{not json")
    (tmp_path / "b.json").write_text("[1, 2]")
    for name in ("a.json", "b.json", "missing.json"):
        with pytest.raises(SummaryError) as info:
            load_summary(tmp_path / name)
        assert "\n" not in str(info.value) and name in str(info.value)


def test_capped_keeps_ten_per_list() -> None:
    many = {
        "themes": [{"name": f"t{i}"} for i in range(14)],
        "keyDecisions": [{"decision": f"d{i}"} for i in range(11)],
        "issues": [{"issue": f"i{i}"} for i in range(30)],
        "overallSummary": "x",
    }
    loaded = Summary.model_validate(many)
    assert len(loaded.themes) == 14  # loading keeps what a file has
    capped = loaded.capped()
    assert (len(capped.themes), len(capped.keyDecisions), len(capped.issues)) == (10, 10, 10)
    assert capped.themes[-1].name == "t9"


def test_parse_accepts_bare_and_fenced_json() -> None:
    bare = parse_model_output(json.dumps(GOOD_ANSWER))
    fenced = parse_model_output("Here is the summary:\n```json\n" + json.dumps(GOOD_ANSWER) + "\n```\nDone.")
    assert bare.themes[0].name == fenced.themes[0].name == "auth"


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ("I cannot summarize this file.", "not JSON"),
        ("", "not JSON"),
        (json.dumps({"themes": [], "keyDecisions": []}), "issues, overallSummary"),
        (json.dumps({**GOOD_ANSWER, "themes": "auth"}), "themes"),
        (json.dumps({**GOOD_ANSWER, "overallSummary": "  "}), "overallSummary"),
    ],
)
def test_parse_rejects_invalid_answers(answer: str, words: str) -> None:
    with pytest.raises(InvalidOutput) as info:
        parse_model_output(answer)
    assert words in str(info.value)


def test_paths_of_summary_and_raw(store) -> None:  # type: ignore[no-untyped-def]
    assert summary_path(store, "memory_20260101_000000.md").name == "memory_20260101_000000.summary.json"
    assert (
        raw_output_path(store, "memory_20260101_000000.md").name == "memory_20260101_000000.summary.raw.txt"
    )
    with pytest.raises(ValueError):
        summary_path(store, "../escape.md")
