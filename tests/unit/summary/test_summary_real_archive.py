"""The extractive summary of a real archive is useful: the themes, decisions and issues a person
would name are found. The archive was written from real Claude Code sessions (see the fixture README).
"""

from __future__ import annotations

import json
import shutil

from memkeeper.core.store.paths import StorePaths
from memkeeper.core.summaries.summary import Summary, generate_summary
from tests.unit.summary.make_fixture_summary import ARCHIVE_NAME, generate
from tests.unit.summary.summary_helpers import FIXTURES


def _summary(store: StorePaths) -> Summary:
    shutil.copyfile(FIXTURES / "real_archive.md", store.archive(ARCHIVE_NAME))
    return generate_summary(store, ARCHIVE_NAME, backend="extractive")


def test_themes_are_the_work_that_was_done(store: StorePaths) -> None:
    summary = _summary(store)
    names = [t.name for t in summary.themes]
    assert names[0] == "otel"  # the epic that dominated the archive comes first
    for expected in ("quality-tools", "beads", "dialyzer", "plugin-hooks", "terminal"):
        assert expected in names
    otel = summary.themes[0]
    assert "spotter-4te" in otel.summary and otel.sessions == ["2026-02-12"]
    beads = next(t for t in summary.themes if t.name == "beads")
    assert beads.sessions == ["2026-02-10", "2026-02-12"]
    assert all(t.summary for t in summary.themes)


def test_decisions_carry_their_reasons(store: StorePaths) -> None:
    decisions = {d.decision: d for d in _summary(store).keyDecisions}
    igniter = next(d for k, d in decisions.items() if "mix igniter.install" in k)
    assert "already depends on igniter" in igniter.reason and igniter.date == "2026-02-10"
    korean = next(d for k, d in decisions.items() if "하기로 결정" in k)
    assert "PLT" in korean.reason  # the Korean note: the reason before the dash, the decision after
    spans = next(d for k, d in decisions.items() if "per-line spans" in k)
    assert spans.reason.startswith("to avoid")
    propagators = next(d for k, d in decisions.items() if "application env" in k)
    assert "single propagator" in propagators.reason
    assert not any(k.lower().startswith("fixed") for k in decisions)  # fixes are issues, not decisions


def test_issues_link_problems_to_their_fixes_and_keep_the_open_one(store: StorePaths) -> None:
    issues = _summary(store).issues
    dialyzer = next(i for i in issues if "get_current_trace_id" in i.issue)
    assert dialyzer.status == "resolved" and "hex_trace_id" in dialyzer.issue
    batch = next(i for i in issues if "batch processor" in i.issue)
    assert batch.status == "resolved" and "traces_exporter" in batch.issue
    xterm = next(i for i in issues if "xterm.js" in i.issue)
    assert xterm.status == "open"
    assert [i.status for i in issues].count("open") == 1
    texts = " ".join(i.issue for i in issues)
    assert "fails gracefully" not in texts and "failed enrichments" not in texts  # features, not problems


def test_overall_summary_reads_as_a_summary(store: StorePaths) -> None:
    summary = _summary(store)
    assert summary.dateRange is not None
    assert (summary.dateRange.first, summary.dateRange.last) == ("2026-02-10", "2026-02-12")
    assert summary.sectionCount == 9
    overall = summary.overallSummary
    assert "9 sections with 45 notes from 2026-02-10 to 2026-02-12" in overall
    assert "On 2026-02-10" in overall and "On 2026-02-12" in overall
    assert "still open at the end: scrollback in the xterm.js terminal" in overall
    assert summary.generator == "extractive" and overall.endswith("without a model.)")


def test_committed_fixture_matches_what_the_extractor_makes() -> None:
    committed = json.loads((FIXTURES / "real_archive.summary.json").read_text("utf-8"))
    fresh = generate()
    for data in (committed, fresh):
        data.pop("generatedAt")
    assert fresh == committed, "run tests/unit/summary/make_fixture_summary.py and read the new summary"
