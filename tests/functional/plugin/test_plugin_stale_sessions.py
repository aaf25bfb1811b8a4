"""A session killed before its SessionEnd is flushed once, not again at every start."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from memkeeper.core.capture import live_sessions
from memkeeper.core.log import flush
from memkeeper.core.store.paths import StorePaths


def _transcript(folder: Path, name: str, age_seconds: float) -> Path:
    path = folder / f"{name}.jsonl"
    record = {
        "type": "user",
        "sessionId": name,
        "timestamp": "2026-11-20T10:00:00.000Z",
        "message": {"role": "user", "content": f"hello from {name}"},
    }
    path.write_text(json.dumps(record) + "\n", "utf-8")
    stamp = time.time() - age_seconds
    os.utime(path, (stamp, stamp))
    return path


def test_idle_or_vanished_sessions_are_marked_ended_after_they_are_copied(
    store: StorePaths, tmp_path: Path
) -> None:
    folder = tmp_path / "transcripts"
    folder.mkdir()
    killed = _transcript(folder, "killed-session", age_seconds=3 * 3600)
    running = _transcript(folder, "running-session", age_seconds=5)
    gone = _transcript(folder, "gone-session", age_seconds=5)
    for path in (killed, running, gone):
        live_sessions.note_session(store, path.stem, str(path))
    gone.unlink()
    assert sorted(live_sessions.unfinished_sessions(store)) == [
        "gone-session",
        "killed-session",
        "running-session",
    ]

    flush.refine_sessions(store, {})

    assert live_sessions.unfinished_sessions(store) == ["running-session"]
    copied = b"".join(p.read_bytes() for p in store.sessions.glob("*.l1.jsonl"))
    assert b"hello from killed-session" in copied and b"hello from running-session" in copied
