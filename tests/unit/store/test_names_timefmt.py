"""One module for file names, one for timestamps: round trips and the tier of every kind of file."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from memkeeper.core.basics import timestamps as timefmt
from memkeeper.core.store import names


def test_archive_and_summary_names_round_trip() -> None:
    moment = datetime(2026, 11, 21, 11, 49, 7, tzinfo=UTC)
    archive = names.archive_name_for(moment)
    assert archive == "memory_20261121_114907.md" == names.archive_name(moment.timestamp())
    assert names.is_archive(archive) and not names.is_archive("memory.md") and not names.is_summary(archive)
    summary = names.summary_name(archive)
    assert summary == "memory_20261121_114907.summary.json" and names.is_summary(summary)
    assert names.archive_of_summary(summary) == archive
    assert names.raw_summary_name(archive) == "memory_20261121_114907.summary.raw.txt"
    assert names.archive_time(archive) == moment.timestamp()
    assert names.archive_date(archive) == names.name_date(summary) == "2026-11-21"
    legacy = names.archive_name_on("2026-11-21", "235960")
    assert legacy == "memory_20261121_235960.md" and names.archive_time(legacy) is None


def test_l1_names_round_trip() -> None:
    started = datetime(2026, 11, 20, 10, 15, 0, 999_000, tzinfo=UTC)
    name = names.l1_name(started, "1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809")
    assert name == "2026-11-20_101500_1a2b3c4d.l1.jsonl"
    assert names.is_l1(name) and names.is_l1(name + ".gz") and names.is_l1_gz(name + ".gz")
    assert names.l1_session(name) == names.l1_session("sessions/" + name + ".gz") == "1a2b3c4d"
    assert names.l1_started(name) == "2026-11-20T10:15:00Z" and names.name_date(name) == "2026-11-20"
    assert names.l1_started("2026-11-20_1015.l1.jsonl") == "2026-11-20T10:15:00Z"
    assert names.l1_session("2026-11-20_1015.l1.jsonl") is None
    assert names.short_session("ab/cd..ef") == "ab-cd--e" and names.short_session("") == "session"


@pytest.mark.parametrize(
    ("rel", "tier"),
    [
        ("memory.md", "memory"),
        ("project.md", "memory"),
        ("memory_20261121_114907.md", "l2"),
        ("memory_20261121_114907.summary.json", "l3"),
        ("memory_20261121_114907.summary.raw.txt", None),
        ("sessions/2026-11-20_101500_1a2b3c4d.l1.jsonl", "l1"),
        ("sessions/2026-11-20_101500_1a2b3c4d.l1.jsonl.gz", "l1"),
        ("sessions/notes.md", None),
        ("2026-11-20_101500_1a2b3c4d.l1.jsonl", None),
        (".memory_20261121_114907.md.123.tmp", None),
        ("memory-index.json", None),
        ("config.json", None),
    ],
)
def test_tier_of_every_kind_of_file(rel: str, tier: str | None) -> None:
    assert names.tier_of(rel, {"project.md"}) == tier


def test_timestamps_match_javascript_and_parse_back() -> None:
    assert timefmt.iso_from_epoch(0.25) == "1970-01-01T00:00:00.250Z"
    moment = datetime(2026, 11, 21, 11, 49, 0, 123_456, tzinfo=UTC)
    assert timefmt.iso(moment) == "2026-11-21T11:49:00.123Z"
    assert timefmt.iso(moment.astimezone(timezone(timedelta(hours=9)))) == "2026-11-21T11:49:00.123Z"
    assert timefmt.parse_iso("2026-11-21T11:49:00.123Z") == moment.replace(microsecond=123_000)
    assert timefmt.parse_iso("2026-11-21T20:49:00+09:00") == moment.replace(microsecond=0)
    assert timefmt.parse_iso("2026-11-21T11:49:00") == moment.replace(microsecond=0)
    assert timefmt.parse_iso("yesterday") is None and timefmt.parse_iso(None) is None
    now = timefmt.parse_iso(timefmt.iso_now())
    assert now is not None and abs((now - timefmt.utc_now()).total_seconds()) < 60
    assert timefmt.utc_day(moment) == timefmt.day_of_epoch(moment.timestamp()) == "2026-11-21"
    assert len(timefmt.file_stamp()) == 15 and len(timefmt.file_stamp(micros=True)) == 22
    assert timefmt.short_time("2026-11-21T11:49:00.000Z") == "2026-11-21 11:49Z"
    assert timefmt.short_time(None) == "never"
    # the JS plugin's JSON carries the same strings
    assert json.loads(json.dumps(timefmt.iso(moment))) == "2026-11-21T11:49:00.123Z"


def test_section_header_shows_utc_then_local() -> None:
    moment = datetime(2026, 11, 21, 23, 30, tzinfo=UTC)
    assert (
        timefmt.section_header(moment, moment + timedelta(hours=9)) == "## 2026-11-21_2330 (local 11-22_0830)"
    )
    assert timefmt.section_header(moment).startswith("## 2026-11-21_2330 (local ")
