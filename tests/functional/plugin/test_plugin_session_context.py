"""Session-start memory: its sections, their shares of the 10,000-character limit, compaction."""

from __future__ import annotations

import json

from memkeeper.core.context.session_start import CONTEXT_LIMIT, build_context
from memkeeper.core.store.memory_index import update_index
from memkeeper.core.store.paths import StorePaths
from tests.l1_data import write_l1


def add_archive(paths: StorePaths, name: str, summary: dict[str, object] | None, **extra: object) -> None:
    paths.archive(name).write_text("## 2026-11-01\n- old\n")
    if summary is not None:
        paths.archive(name.replace(".md", ".summary.json")).write_text(json.dumps(summary))

    def change(index: dict[str, object]) -> None:
        files = index["rotatedFiles"]
        assert isinstance(files, list)
        files.append(
            {
                "file": name,
                "rotatedAt": f"2026-11-{name[13:15]}T00:00:00.000Z",
                "tokens": 1,
                "bytes": 1,
                "summary": name.replace(".md", ".summary.json"),
                "summaryGenerated": summary is not None,
                **extra,
            }
        )

    update_index(paths, change)


SUMMARY: dict[str, object] = {
    "dateRange": {"first": "2026-11-01", "last": "2026-11-09"},
    "overallSummary": "The team built the search index and the TUI.",
    "keyDecisions": [{"decision": "Use SQLite FTS5", "reason": "no daemon", "date": "2026-11-02"}],
    "issues": [
        {"issue": "Korean substring search misses short words", "status": "open"},
        {"issue": "Old crash on empty store", "status": "resolved"},
    ],
    "themes": [],
}


def test_empty_store_gives_no_context(store: StorePaths) -> None:
    assert build_context(store, "startup") == ""


def test_all_sections_are_present(store: StorePaths) -> None:
    store.named("project").write_text("memkeeper keeps memory for Claude Code.")
    store.named("conventions").write_text("Type hints everywhere.")
    add_archive(store, "memory_20261105_000000.md", SUMMARY)
    add_archive(store, "memory_20261108_000000.md", None, summaryError="timeout")
    store.memory.write_text("## 2026-11-10_1200 (local 11-10_2100)\n- [search]: Phrase queries work.\n")
    write_l1(
        store,
        "2026-11-21_090000_prevsess.l1.jsonl",
        [
            {
                "ts": "2026-11-21T09:00:00.000Z",
                "role": "user",
                "text": "fix the flaky test",
                "session": "prevsess-1",
            },
            {"ts": "2026-11-21T09:00:05.000Z", "role": "tool", "name": "Bash", "cmd": "pytest"},
            {"ts": "2026-11-21T09:00:09.000Z", "role": "assistant", "text": "The flaky test is fixed."},
        ],
    )
    text = build_context(store, "startup", session_id="current-session")
    assert len(text) <= CONTEXT_LIMIT
    for expected in (
        "## Project overview\nmemkeeper keeps memory for Claude Code.",
        "## Conventions\nType hints everywhere.",
        "The team built the search index and the TUI.",
        "- Korean substring search misses short words",
        "- Use SQLite FTS5 (because no daemon)",
        "- [search]: Phrase queries work.",
        "- asked: fix the flaky test",
        "- tools used: Bash ×1",
        "- last answer: The flaky test is fixed.",
        "## Archive summaries pending: 1 (1 failed",
        "memory_20261108_000000.md: failed: timeout",
    ):
        assert expected in text, expected
    assert "Old crash on empty store" not in text  # resolved issues are left out


def test_last_session_shows_only_what_was_not_flushed(store: StorePaths) -> None:
    store.memory.write_text("## x\n- y\n")
    write_l1(
        store,
        "2026-11-21_090000_prevsess.l1.jsonl",
        [
            {"ts": "2026-11-21T09:00:00.000Z", "role": "user", "text": "already flushed prompt"},
            {"ts": "2026-11-21T09:10:00.000Z", "role": "user", "text": "said after the flush"},
        ],
    )
    update_index(store, lambda index: index.__setitem__("lastMemoryUpdateTs", "2026-11-21T09:00:00.000Z"))
    text = build_context(store, "startup")
    assert "said after the flush" in text and "already flushed prompt" not in text
    update_index(store, lambda index: index.__setitem__("lastMemoryUpdateTs", "2026-11-21T09:10:00.000Z"))
    assert "Last session" not in build_context(store, "startup")


def test_compact_reinjects_this_session(store: StorePaths) -> None:
    sid = "abcdef12-3456-7890-abcd-ef1234567890"
    write_l1(
        store,
        "2026-11-22_080000_abcdef12.l1.jsonl",
        [
            {
                "ts": "2026-11-22T08:00:00.000Z",
                "role": "user",
                "text": "keep the secret word PAPAYA",
                "session": sid,
            }
        ],
    )
    text = build_context(store, "compact", session_id=sid)
    assert "Re-supplied after the conversation was compacted." in text
    assert "## This session before the compaction" in text and "PAPAYA" in text
    # At a normal start the current session is not "the last session".
    assert "PAPAYA" not in build_context(store, "startup", session_id=sid)


def test_limits_hold_with_huge_files(store: StorePaths) -> None:
    for name in ("project", "architecture", "conventions"):
        store.named(name).write_text(f"{name} " * 5_000)
    big: dict[str, object] = dict(
        SUMMARY, overallSummary="word " * 5_000, keyDecisions=[{"decision": "d" * 500}] * 20
    )
    add_archive(store, "memory_20261105_000000.md", big)
    for day in range(8):
        add_archive(store, f"memory_202611{10 + day:02d}_000000.md", None)
    store.memory.write_text(
        "".join(f"## 2026-11-20_{i:04d}\n- [t]: fact {i} " + "z" * 200 + "\n" for i in range(600))
    )
    write_l1(
        store,
        "2026-11-21_090000_prevsess.l1.jsonl",
        [{"ts": "2026-11-21T09:00:00.000Z", "role": "user", "text": "q" * 9_000}] * 30,
    )
    text = build_context(store, "startup")
    assert len(text) <= CONTEXT_LIMIT
    assert "fact 599" in text  # the newest memory always makes it in
    assert "## Project overview" in text and "## Summary of archived memory" in text
    assert "## Archive summaries pending: 8" in text
    assert len(build_context(store, "startup", limit=3_000)) <= 3_000


def test_unreadable_files_are_left_out(store: StorePaths) -> None:
    store.index.write_text("{not json")
    store.memory.write_bytes(b"## 2026-11-20\n- caf\xe9 \xff bytes\n")
    (store.sessions / "2026-11-21_090000_prevsess.l1.jsonl").write_bytes(b"\x00garbage\n{broken\n")
    text = build_context(store, "startup")
    assert "caf" in text and len(text) <= CONTEXT_LIMIT


def test_compact_reads_what_was_dropped_from_the_transcript(store: StorePaths) -> None:
    """The L1 copy may lag at compaction time: the live transcript is read instead."""
    from tests.functional.plugin.capture_helpers import SESSION_43B, TRANSCRIPT_43B

    store.memory.write_text("## x\n- [m]: memory stays\n")
    text = build_context(store, "compact", session_id=SESSION_43B, transcript_path=str(TRANSCRIPT_43B))
    assert "## This session before the compaction" in text
    assert "- asked: USE_TOOL: run echo." in text and "- asked: second prompt after resume" in text
    assert "- tools used: Bash ×2" in text
    assert "- [m]: memory stays" in text
