"""load_summary(only=...) reads the named fields and leaves the others at their defaults."""

from __future__ import annotations

import json
from pathlib import Path

from memkeeper.core.summaries.summary import load_summary


def test_only_the_named_fields_are_read(tmp_path: Path) -> None:
    path = tmp_path / "memory_20260301_100000.summary.json"
    data = {
        "overallSummary": "A month of work.",
        "themes": [{"name": "locks"}],
        "keyDecisions": ["Use flock", {"decision": "Keep JSONL", "reason": "append-only"}],
        "issues": [{"issue": "slow start", "status": "Open"}],
    }
    path.write_text(json.dumps(data))
    whole = load_summary(path)
    some = load_summary(path, only=("keyDecisions", "issues"))
    assert some.keyDecisions == whole.keyDecisions and [d.decision for d in some.keyDecisions] == [
        "Use flock",
        "Keep JSONL",
    ]
    assert some.issues == whole.issues and some.issues[0].status == "open"
    assert whole.themes and not some.themes and not some.overallSummary
