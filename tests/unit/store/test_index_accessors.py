"""One typed view of memory-index.json: the accessors, their one rule for "generated", and
that nothing else reads an entry's summary flags."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.store import index_entries as entries
from memkeeper.core.store import memory_index as idx
from memkeeper.core.store.memory_index_model import RotatedFile, index_from_dict
from memkeeper.core.store.paths import StorePaths

SOURCE_ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("entry", "state"),
    [
        ({"file": "memory_20261121_114907.md", "summaryGenerated": True}, "generated"),
        ({"file": "memory_20261121_114907.md", "summaryGenerated": True, "summaryError": "old"}, "generated"),
        ({"file": "memory_20261121_114907.md", "summaryGenerated": "true"}, "pending"),
        ({"file": "memory_20261121_114907.md", "summaryGenerated": 1}, "pending"),
        ({"file": "memory_20261121_114907.md", "summaryGenerated": False, "summaryError": "529"}, "failed"),
        ({"file": "memory_20261121_114907.md", "summaryError": ""}, "pending"),
        ({"file": "memory_20261121_114907.md"}, "pending"),
    ],
)
def test_one_rule_for_generated_in_both_views(entry: dict[str, Any], state: str) -> None:
    assert entries.summary_state(entry) == state
    assert RotatedFile.model_validate(entry).state == state
    assert index_from_dict({"rotatedFiles": [entry]}).rotatedFiles[0].state == state


def test_writers_change_their_fields_and_keep_unknown_keys() -> None:
    entry: dict[str, Any] = {
        "file": "memory_20261121_114907.md",
        "futureKey": {"x": 1},
        "summaryGenerated": False,
    }
    entries.mark_failed(entry, "E" * 900, tries=2)
    assert entries.summary_state(entry) == "failed" and entries.summary_attempts(entry) == 2
    assert len(entries.summary_error(entry) or "") == 500
    entries.mark_generated(entry, "claude:haiku", tries=1)
    assert entries.summary_state(entry) == "generated" and entries.summary_error(entry) is None
    assert entries.summary_attempts(entry) == 3 and entries.summary_generator(entry) == "claude:haiku"
    entries.mark_pending(entry)
    assert entries.summary_state(entry) == "pending" and entry["futureKey"] == {"x": 1}
    assert entries.summary_file(entry) == "memory_20261121_114907.summary.json"


def test_index_readers_skip_what_is_not_an_entry(store: StorePaths) -> None:
    data: dict[str, Any] = {
        "rotatedFiles": [{"file": "memory_1.md"}, "junk", {"file": 7}, {"nofile": True}],
        "lastMemoryUpdateTs": "",
        "unknownTop": [1, 2],
    }
    assert entries.listed_files(data) == {"memory_1.md"}
    assert (
        entries.find_entry(data, "memory_1.md") == {"file": "memory_1.md"}
        and entries.find_entry(data, "x") is None
    )
    assert entries.last_memory_update(data) is None
    idx.update_index(store, lambda index: index.update(data))
    kept = idx.read_index(store)
    assert (
        kept["unknownTop"] == [1, 2] and "junk" in kept["rotatedFiles"]
    )  # writes keep what they do not know


def test_no_module_reads_summary_flags_outside_the_accessors() -> None:
    reading = re.compile(
        r"""\.get\(\s*["']summary(Generated|Error|Attempts|Generator)["']|\[["']summary(Generated|Error)["']\]"""
    )
    offenders = []
    for folder in ("core", "cli", "plugin", "tui"):
        for path in sorted((SOURCE_ROOT / folder).rglob("*.py")):
            if (
                path.relative_to(SOURCE_ROOT).as_posix() == "core/store/index_entries.py"
            ):  # the accessors themselves
                continue
            for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
                if reading.search(line):
                    offenders.append(f"{path.relative_to(SOURCE_ROOT)}:{number}: {line.strip()}")
    assert offenders == []
