"""The hook counters' log: counts appended without a lock, folded exactly once, flushes on time."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from memkeeper.core.log import counters, progress
from memkeeper.core.log.activity import record
from memkeeper.core.store.paths import StorePaths


def write_config(store: StorePaths, flush_every: int) -> None:
    store.config.write_text(json.dumps({"memory": {"flushEvery": flush_every}}))


def on_disk(store: StorePaths) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(store.counters.read_text())
    return data


def test_a_count_within_its_budget_is_one_line_in_the_log(store: StorePaths) -> None:
    write_config(store, 5)
    assert record(str(store.project), "s1", tool_uses=1).counts is not None  # a new log: folded
    before = store.counters.read_bytes()
    done = record(str(store.project), "s1", tool_uses=1)
    assert done.counts is None and done.settings is None and not done.flush_due
    assert store.counters.read_bytes() == before  # counters.json untouched
    assert (store.state / counters.PENDING_FILE).read_bytes().endswith(b"\ns1\t1\t0\n")
    assert progress.read_counters(store)["sessions"]["s1"]["toolUses"] == 2


@pytest.mark.parametrize("flush_every", [1, 3, 7])
def test_the_flush_is_due_at_exactly_every_nth_event_of_a_session(
    store: StorePaths, flush_every: int
) -> None:
    """Two sessions interleaved, each flushed (as the hook does) whenever record says so."""
    write_config(store, flush_every)
    due: dict[str, list[int]] = {"a": [], "b": []}
    for event in range(1, 31):
        for sid in ("a", "b") if event % 3 else ("a",):
            done = record(str(store.project), sid, tool_uses=1)
            if done.flush_due:
                assert done.counts is not None and done.counts.unflushed_messages == flush_every
                due[sid].append(done.counts.session_tool_uses)
                counters.mark_flushed(store, sid, flush_every)
    uses = progress.read_counters(store)["sessions"]
    assert due["a"] == list(range(flush_every, uses["a"]["toolUses"] + 1, flush_every))
    assert due["b"] == list(range(flush_every, uses["b"]["toolUses"] + 1, flush_every))
    assert uses["a"]["toolUses"] == 30 and uses["b"]["toolUses"] == 20


def test_prompts_and_tool_uses_share_the_budget(store: StorePaths) -> None:
    write_config(store, 4)
    kinds = [(1, 0), (0, 1)] * 4  # (tool uses, messages)
    flushed_at = [
        i
        for i, (tools, prompts) in enumerate(kinds, 1)
        if record(str(store.project), "s", tool_uses=tools, messages=prompts).flush_due
    ]
    assert flushed_at == [4, 5, 6, 7, 8]  # never marked flushed: due at every event from the 4th


def test_with_memory_off_nothing_is_due_and_the_log_is_folded_every_so_often(store: StorePaths) -> None:
    store.config.write_text(json.dumps({"memory": {"enabled": False}}))
    folds = sum(record(str(store.project), "s", tool_uses=1).counts is not None for _ in range(130))
    assert 2 <= folds <= 130 // counters.FOLD_EVERY + 2
    assert progress.read_counters(store)["sessions"]["s"]["toolUses"] == 130


def test_a_line_written_to_a_log_after_it_was_closed_is_folded_once(store: StorePaths) -> None:
    """A hook that opened the log just before a fold closed it: its line still counts, once."""
    counters.bump(store, "s", tool_uses=1)
    late = os.open(store.state / counters.PENDING_FILE, os.O_WRONLY | os.O_APPEND)
    counters.bump(store, "s", tool_uses=1)  # closes the log the late hook holds open
    os.write(late, b"s\t1\t0\n")
    os.close(late)
    assert progress.read_counters(store)["toolUses"] == 3
    counters.bump(store, "s", tool_uses=1)
    counters.bump(store, "s", tool_uses=1)
    assert on_disk(store)["toolUses"] == 5 == progress.read_counters(store)["toolUses"]


def test_a_kill_between_the_write_and_the_cleanup_counts_nothing_twice(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Killed(BaseException):
        pass

    def killed(_paths: list[str]) -> None:
        raise Killed

    counters.bump(store, "s", tool_uses=1)
    counters.bump_at(os.fspath(store.state), "s", tool_uses=1)  # only logged
    counters.bump_at(os.fspath(store.state), "s", tool_uses=1)
    monkeypatch.setattr(counters, "_remove", killed)
    with pytest.raises(Killed):  # the closed log is still there, already added
        counters.bump(store, "s", tool_uses=1)
    monkeypatch.undo()
    assert on_disk(store)["toolUses"] == 4
    counters.bump(store, "s", tool_uses=1)
    assert on_disk(store)["toolUses"] == 5 == progress.read_counters(store)["toolUses"]


def test_an_unparsable_counters_file_counts_from_zero_without_the_logs_it_held(store: StorePaths) -> None:
    for _ in range(3):
        counters.bump(store, "s", tool_uses=1)
    store.counters.write_bytes(b"\x00\x00")
    assert counters.bump(store, "s", tool_uses=1).tool_uses == 1


def test_the_file_keeps_the_sessions_counted_last(store: StorePaths) -> None:
    old = {f"old-{i}": {"toolUses": 1, "lastSeen": f"2026-01-{i + 1:02d}T00:00:00.000Z"} for i in range(30)}
    old["old-0"]["lastSeen"] = "2026-03-01T00:00:00.000Z"  # an earlier version's, seen most recently
    store.counters.write_text(json.dumps({"toolUses": 30, "sessions": old}))
    for i in range(5):
        counters.bump(store, f"new-{i}", tool_uses=1)
    counters.bump(store, "old-5", tool_uses=1)  # counted again: now the latest
    sessions = on_disk(store)["sessions"]
    assert len(sessions) == counters.MAX_SESSIONS
    assert list(sessions)[-6:] == [*(f"new-{i}" for i in range(5)), "old-5"]
    assert "old-0" in sessions and "old-1" not in sessions and "old-2" not in sessions
    assert "lastSeen" not in sessions["old-5"]


@pytest.mark.parametrize("sid", ["a=b", "tab\there", "line\nbreak"])
def test_a_session_id_the_log_cannot_hold_is_counted_directly(store: StorePaths, sid: str) -> None:
    counters.bump(store, "plain", tool_uses=1)
    counts = counters.bump_at(os.fspath(store.state), sid, tool_uses=1)
    assert counts is not None and counts.session_tool_uses == 1
    assert on_disk(store)["sessions"][sid]["toolUses"] == 1


@pytest.mark.parametrize(
    ("log", "due"),
    [
        (b"", True),
        (b"s\t1\t0\n", True),  # no header: a hook raced a fold
        (b"#fold\t3\ns\t1\t0\ns\t1\t0\n", False),
        (b"#fold\t3\ns\t1\t0\ns\t1\t0\ns\t1\t0\n", True),
        (b"#fold\t3\ts=1\ns\t1\t0\n", True),
        (b"#fold\t3\tss=1\tx=1\ns\t1\t0\nss\t1\t0\n", False),  # another session's budget
        (b"#fold\t9\ns\t0\t1\n" + b"t\t1\t0\n" * (counters.FOLD_EVERY - 1), True),
        (b"#fold\tx\ns\t1\t0\n", True),
        (b"#fold\t9\ns\t1\t0\n#due\n", True),  # fold_soon
    ],
)
def test_when_a_fold_is_due(log: bytes, due: bool) -> None:
    assert counters.fold_due(log, "s") is due
