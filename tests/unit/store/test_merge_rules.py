"""The merge driver's rules (core/sharing/merge.py), file by file, without git."""

from __future__ import annotations

import json

from memkeeper.core.sharing.merge import (
    MACHINE_KEYS,
    kind_of,
    merge_index,
    merge_sections,
    merge_texts,
    split_sections,
)


def section(stamp: str, word: str) -> str:
    return f"\n## 2026-11-{stamp} (local 11-{stamp[:2]})\n- [note]: {word} one\n- [note]: {word} two\n"


S1, S2, S3 = section("28_0900", "alpha"), section("28_1000", "bravo"), section("28_1100", "charlie")
BASE = S1 + S2 + S3


def words_in_sections(text: str) -> list[str]:
    _head, sections = split_sections(text)
    return [s.split("[note]: ")[1].split()[0] for s in sections]


def test_appends_on_both_sides_are_a_union_in_time_order_each_once() -> None:
    ours = BASE + section("29_1005", "ours1") + section("29_1200", "ours2")
    theirs = BASE + section("29_1100", "theirs1")
    merged = merge_sections(BASE, ours, theirs)
    assert words_in_sections(merged) == ["alpha", "bravo", "charlie", "ours1", "theirs1", "ours2"]
    assert merge_sections(BASE, theirs, ours) == merged  # the same whichever side merges
    assert merged.startswith(S1)  # the flush's own layout is kept


def test_a_rotation_against_appends_keeps_the_carryover_once_and_doubles_nothing() -> None:
    # their rotation: the archive took S1..S3, memory.md kept a line-aligned tail (a fragment of S3)
    carryover = "- [note]: charlie two\n"
    rotated = carryover + section("29_0800", "afterrotation")
    appended = BASE + section("29_0900", "appended")
    for ours, theirs in ((appended, rotated), (rotated, appended)):
        merged = merge_sections(BASE, ours, theirs)
        head, _sections = split_sections(merged)
        assert head.strip() == carryover.strip()
        assert words_in_sections(merged) == ["afterrotation", "appended"]
        assert merged.count("charlie two") == 1


def test_a_section_forgotten_on_one_side_stays_gone() -> None:
    ours = S1 + S3 + section("29_0900", "new")
    assert words_in_sections(merge_sections(BASE, ours, BASE)) == ["alpha", "charlie", "new"]
    assert words_in_sections(merge_sections(BASE, BASE, ours)) == ["alpha", "charlie", "new"]


def test_the_same_section_added_on_both_sides_is_kept_once() -> None:
    added = section("29_0900", "same")
    assert words_in_sections(merge_sections(BASE, BASE + added, BASE + added)) == [
        "alpha",
        "bravo",
        "charlie",
        "same",
    ]


def entry(name: str, size: int = 100, generated: bool = False, **extra: object) -> dict[str, object]:
    return {
        "file": name,
        "rotatedAt": f"2026-11-{name[13:15]}T10:00:00.000Z",
        "tokens": size // 4,
        "bytes": size,
        "summary": name.replace(".md", ".summary.json"),
        "summaryGenerated": generated,
        **extra,
    }


def index(*entries: dict[str, object], **top: object) -> str:
    return json.dumps(
        {
            "version": 1,
            "current": "memory.md",
            "rotatedFiles": list(entries),
            "stats": {"totalRotations": len(entries), "lastRotation": None},
            "counter": 0,
            **top,
        },
        indent=2,
    )


def test_index_entries_are_a_union_and_a_summary_generated_anywhere_is_generated() -> None:
    old = entry("memory_20261120_100000.md")
    base = index(old)
    ours = index(old, entry("memory_20261125_100000.md"), counter=7, lastFlushAt="2026-11-29T10:00:00Z")
    theirs = index(
        {**old, "summaryGenerated": True, "summaryGenerator": "model"},
        entry("memory_20261127_100000.md"),
        counter=3,
        lastFlushAt="2026-11-29T11:00:00Z",
        lastMemoryUpdateTs="2026-11-29T11:00:00Z",
    )
    merged = json.loads(merge_index(base, ours, theirs) or "")
    assert [e["file"] for e in merged["rotatedFiles"]] == [
        "memory_20261120_100000.md",
        "memory_20261125_100000.md",
        "memory_20261127_100000.md",
    ]
    assert merged["rotatedFiles"][0]["summaryGenerated"] is True
    assert merged["rotatedFiles"][0]["summaryGenerator"] == "model"
    assert merged["stats"]["totalRotations"] == 3
    # this machine's own state is ours, never a conflict, never theirs
    assert merged["counter"] == 7 and merged["lastFlushAt"] == "2026-11-29T10:00:00Z"
    assert "lastMemoryUpdateTs" not in merged
    assert {"counter", "lastFlushAt", "lastMemoryUpdateTs"} <= set(MACHINE_KEYS)


def test_two_archives_of_one_name_are_pending_again_and_a_forgotten_one_goes() -> None:
    same = "memory_20261129_100000.md"
    gone = entry("memory_20261120_100000.md", generated=True)
    base = index(gone)
    ours = index(gone, entry(same, 300, generated=True, summaryGenerator="extractive"))
    theirs = index(entry(same, 500))
    merged = json.loads(merge_index(base, ours, theirs) or "")
    assert [e["file"] for e in merged["rotatedFiles"]] == [same]
    assert merged["rotatedFiles"][0]["summaryGenerated"] is False


def test_kinds_and_an_unparsable_index_is_left_to_git() -> None:
    assert kind_of(".claude/memory/memory.md") == "memory"
    assert kind_of("sub/.claude/memory/memory_20261129_100000.md") == "memory"
    assert kind_of(".claude/memory/memory-index.json") == "index"
    assert kind_of(".claude/memory/memory_20261129_100000.summary.json") == "summary"
    assert kind_of(".claude/memory/config.json") is None
    assert merge_texts("index", "{}", "{not json", "{}") is None
    assert merge_texts("summary", "", '{"overallSummary": "ours"}', '{"overallSummary": "theirs"}') == (
        '{"overallSummary": "ours"}'
    )
