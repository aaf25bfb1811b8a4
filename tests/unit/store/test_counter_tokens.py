"""A count token: an event two processes may both count (the recall server, then a hook whose reply was lost) counts once."""

from __future__ import annotations

import pytest

from memkeeper.core import counters
from memkeeper.core.store import StorePaths, ensure_store
from tests.lock_holder import held


def _messages(store: StorePaths, session: str = "s") -> int:
    return int(counters.read_counters(store)["sessions"][session]["messages"])


def test_a_token_counted_once_adds_nothing_the_second_time(store: StorePaths) -> None:
    ensure_store(store)
    state = str(store.state)
    first = counters.bump_at(state, "s", messages=1, token="aaaa0001", fold=True)
    again = counters.bump_at(state, "s", messages=1, token="aaaa0001", fold=True)
    assert first is not None and again is not None
    assert first.session_messages == again.session_messages == 1
    assert again.unflushed_messages == 1
    counters.bump_at(state, "s", messages=1, token="aaaa0002")
    assert _messages(store) == 2
    counters.bump_at(state, "s", messages=1)  # no token: always counted
    assert _messages(store) == 3
    counters.bump_at(state, "other", messages=1, token="aaaa0001")  # tokens are per session
    assert _messages(store, "other") == 1


def test_the_same_token_twice_in_the_log_is_read_and_folded_once(store: StorePaths) -> None:
    ensure_store(store)
    state = str(store.state)
    counters.bump_at(state, "s", tool_uses=1, fold=True)  # (the log now has a header: appends stay logged)
    for _ in range(2):
        assert counters.bump_at(state, "s", messages=1, token="beef0001") is None  # only logged
    assert _messages(store) == 1  # as a reader sees it
    folded = counters.bump_at(state, "s", tool_uses=1, fold=True)
    assert folded is not None and folded.session_messages == 1 and folded.unflushed_messages == 3


def test_only_the_last_tokens_are_kept(store: StorePaths) -> None:
    ensure_store(store)
    state = str(store.state)
    for i in range(10):
        counters.bump_at(state, "s", messages=1, token=f"t{i}", fold=True)
    assert counters.read_counters(store)["sessions"]["s"]["tokens"] == [
        "t8",
        "t9",
    ]  # counters.json stays small
    counters.bump_at(state, "s", messages=1, token="t8", fold=True)
    assert _messages(store) == 10


def test_counts_under_one_token_past_a_held_lock_are_folded_once(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both processes counted the prompt while the lock was held: the log keeps both lines, the fold adds one."""
    ensure_store(store)
    state = str(store.state)
    monkeypatch.setattr(counters, "LOCK_WAIT", 0.05)
    with held(store.state / "counters.lock"):  # (by another process)
        for _ in range(2):
            assert counters.bump_at(state, "s", messages=1, token="cafe0001", fold=True) is None
    assert _messages(store) == 1
    folded = counters.bump_at(state, "s", tool_uses=1, fold=True)
    assert folded is not None and folded.session_messages == 1
