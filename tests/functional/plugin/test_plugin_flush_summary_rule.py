"""What the flush job leaves for others: the summary job by its own rule, and the hook counters."""

from __future__ import annotations

from typing import Any

import pytest

from memkeeper.core.log import flush
from memkeeper.core.store.memory_index import update_index
from memkeeper.core.store.memory_index_model import MAX_AUTO_ATTEMPTS
from memkeeper.core.store.paths import StorePaths


@pytest.mark.parametrize(("attempts", "starts"), [(2, True), (MAX_AUTO_ATTEMPTS, False)])
def test_a_failed_summary_with_tries_left_starts_the_summary_job(
    store: StorePaths, started_jobs: list[tuple[str, dict[str, Any] | None]], attempts: int, starts: bool
) -> None:
    name = "memory_20261101_120000.md"
    store.archive(name).write_text("## 2026-11-01_1200\n- [db]: chose SQLite\n", "utf-8")

    def failed_entry(index: dict[str, Any]) -> None:
        index["rotatedFiles"] = [
            {
                "file": name,
                "rotatedAt": "2026-11-01T12:00:00.000Z",
                "tokens": 10,
                "bytes": 40,
                "summary": name.replace(".md", ".summary.json"),
                "summaryGenerated": False,
                "summaryError": "claude -p timed out",
                "summaryAttempts": attempts,
            }
        ]

    update_index(store, failed_entry)
    flush.run_flush_job(store, {})
    assert (("summary", None) in started_jobs) is starts


def test_the_flush_job_keeps_events_counted_after_the_hook_started_it(
    store: StorePaths, started_jobs: list[tuple[str, dict[str, Any] | None]]
) -> None:
    from memkeeper.core.log import counters

    counters.bump(store, "s1", tool_uses=10)
    counters.mark_flushed(store, "s1")  # what the hook does before it starts the job
    counters.bump(store, "s1", tool_uses=3)  # events while the job is on its way
    flush.run_flush_job(store, {"session_id": "s1"})
    assert counters.bump(store, "s1").unflushed_messages == 3
