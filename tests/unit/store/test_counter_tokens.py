"""A count token: an event two processes may both count (the recall server, then a hook whose reply was lost) counts once."""

from __future__ import annotations

import pytest

from memkeeper.core import counters
from memkeeper.core.store import StorePaths, ensure_store
from tests.lock_holder import held


def _entry(store: StorePaths, session: str = "s") -> dict[str, object]:
    entry: dict[str, object] = counters.read_counters(store)["sessions"][session]
    return entry


def test_a_token_counted_once_adds_nothing_the_second_time(store: StorePaths) -> None:
    ensure_store(store)
    state = str(store.state)
    first = counters.bump_at(state, "s", messages=1, token="aaaa0001")
    again = counters.bump_at(state, "s", messages=1, token="aaaa0001")
    assert first.session_messages == again.session_messages == 1
    assert again.unflushed_messages == 1
    assert counters.bump_at(state, "s", messages=1, token="aaaa0002").session_messages == 2
    assert counters.bump_at(state, "s", messages=1).session_messages == 3  # no token: always counted
    assert counters.bump_at(state, "other", messages=1, token="aaaa0001").session_messages == 1  # per session


def test_only_the_last_tokens_are_kept(store: StorePaths) -> None:
    ensure_store(store)
    state = str(store.state)
    for i in range(10):
        counters.bump_at(state, "s", messages=1, token=f"t{i}")
    assert _entry(store)["tokens"] == ["t8", "t9"]  # the counters file stays small
    assert counters.bump_at(state, "s", messages=1, token="t8").session_messages == 10


def test_a_deferred_count_keeps_its_token(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both processes could not wait for the lock and deferred the same prompt: folded in once."""
    ensure_store(store)
    state = str(store.state)
    monkeypatch.setattr(counters, "LOCK_WAIT", 0.05)
    with held(store.state / "counters.lock"):  # (by another process)
        for _ in range(2):
            assert (
                counters.bump_at(state, "s", messages=1, token="cafe0001").session_messages == 0
            )  # deferred
    assert counters.read_counters(store)["sessions"]["s"]["messages"] == 1  # as a reader sees it
    assert counters.bump_at(state, "s", tool_uses=1).session_messages == 1  # folded in once
    assert not list(store.state.glob("counters.pending*"))
