"""The activity screen reads every summary's decisions and open issues without the summary
models (their import and validation took most of a first open): it must read exactly what
``load_summary`` reads, on well-formed, JS-written and junk-filled files alike."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from memkeeper.core.search.history import Finding, _read_findings
from memkeeper.core.summaries.summary import SummaryError, load_summary

ARCHIVE = "memory_20260301_100000.md"


def model_findings(path: Path) -> list[Finding]:
    """What the screen read before: the summary through its models."""
    try:
        summary = load_summary(path, only=("keyDecisions", "issues"))
    except (SummaryError, OSError, ValueError):
        return []
    found = [
        Finding("decision", d.decision, d.date, ARCHIVE, d.reason) for d in summary.keyDecisions if d.decision
    ]
    found.extend(
        Finding("issue", i.issue, i.date, ARCHIVE, i.status)
        for i in summary.issues
        if i.issue and i.status != "resolved"
    )
    return found


JUNK: list[Any] = [
    None,
    "",
    "  ",
    "text",
    "Resolved ",
    "RESOLVED",
    "open",
    0,
    7,
    2.5,
    True,
    False,
    [],
    ["a"],
    {},
    {"x": 1},
]


def junk_item(rng: random.Random, fields: tuple[str, ...]) -> Any:
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(JUNK)  # a bare value in the list
    item = {name: rng.choice(JUNK) for name in fields if rng.random() < 0.8}
    if roll < 0.8:  # mostly text, as files usually hold
        item.update({name: f"{name} {rng.randint(0, 99)}" for name in fields if rng.random() < 0.7})
    if rng.random() < 0.2:
        item["extra"] = {"kept": True}
    return item


def junk_summary(rng: random.Random) -> Any:
    data: dict[str, Any] = {"overallSummary": rng.choice(JUNK), "themes": rng.choice(JUNK)}
    for key, fields in (
        ("keyDecisions", ("decision", "reason", "date")),
        ("issues", ("issue", "status", "date")),
    ):
        roll = rng.random()
        if roll < 0.1:
            continue
        if roll < 0.2:
            data[key] = rng.choice(JUNK)
        elif roll < 0.3:
            data[key] = junk_item(rng, fields)  # one object, not a list
        else:
            data[key] = [junk_item(rng, fields) for _ in range(rng.randint(0, 6))]
    return data if rng.random() > 0.03 else rng.choice([[data], "text", 3])


def test_the_plain_reading_equals_the_models_on_junk_filled_summaries(tmp_path: Path) -> None:
    rng = random.Random(14)
    refused = read = 0
    for n in range(600):
        path = tmp_path / f"s{n}.summary.json"
        path.write_text(json.dumps(junk_summary(rng)), "utf-8")
        expected = model_findings(path)
        assert _read_findings(str(path), ARCHIVE) == expected, path.read_text()
        read += bool(expected)
        try:
            load_summary(path, only=("keyDecisions", "issues"))
        except (SummaryError, ValueError):
            refused += 1
    assert read > 200 and refused > 50  # both kinds were met


def test_the_plain_reading_equals_the_models_on_odd_files(tmp_path: Path) -> None:
    well_formed = {
        "keyDecisions": [
            "Use flock",
            {"decision": "Keep JSONL", "reason": "append-only", "date": "2026-03-01"},
        ],
        "issues": [
            {"issue": "slow start", "status": "Open"},
            {"issue": "fixed", "status": " Resolved "},
            {"issue": "no status"},
            {"issue": 42, "status": None, "date": 20260301},
        ],
    }
    contents = [
        json.dumps(well_formed),
        "\ufeff" + json.dumps(well_formed),  # a byte-order mark
        json.dumps(well_formed, ensure_ascii=False).replace("Keep", "결정"),
        "{ not json",
        "",
        json.dumps({"keyDecisions": [{"decision": ["a list"]}], "issues": well_formed["issues"]}),
        json.dumps({"issues": [{"issue": "x", "date": {"y": 1}}]}),
    ]
    for n, text in enumerate(contents):
        path = tmp_path / f"odd{n}.summary.json"
        path.write_text(text, "utf-8")
        assert _read_findings(str(path), ARCHIVE) == model_findings(path), text
    path.write_bytes(b"\xff\xfe not utf-8")
    assert _read_findings(str(path), ARCHIVE) == model_findings(path) == []
    assert _read_findings(str(tmp_path / "missing.summary.json"), ARCHIVE) == []
    first = _read_findings(str(tmp_path / "odd0.summary.json"), ARCHIVE)
    assert [f.text for f in first] == ["Use flock", "Keep JSONL", "slow start", "no status", "42"]


def test_a_summary_behind_a_link_is_not_read(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text(json.dumps({"keyDecisions": ["Use flock"]}))
    link = tmp_path / "memory_20260301_100000.summary.json"
    link.symlink_to(real)
    assert _read_findings(str(link), ARCHIVE) == []
