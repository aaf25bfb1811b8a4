"""L1 entries and files as test data, and a store to hold them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memkeeper.core.store.paths import StorePaths, ensure_store, paths_for


def l1_entry(minute: int, role: str, **fields: Any) -> dict[str, Any]:
    """An L1 entry of 2026-11-20 at 10:``minute``."""
    return {"ts": f"2026-11-20T10:{minute:02d}:00.000Z", "role": role, **fields}


def write_l1(paths: StorePaths, name: str, entries: list[dict[str, Any]]) -> Path:
    """An L1 file with ``entries`` (appended if it exists)."""
    paths.sessions.mkdir(parents=True, exist_ok=True)
    path = paths.sessions / name
    with open(path, "a", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path


def store_with_memory(project: Path, memory: str) -> StorePaths:
    """A new project folder with its store, ``memory`` as memory.md."""
    project.mkdir()
    store = paths_for(project)
    ensure_store(store)
    store.memory.write_text(memory, "utf-8")
    return store


#: Lines a store meets: blank, a BOM, invalid UTF-8, two values, a cut one, not an object.
ODD_LINES = [
    b"",
    b"  \r",
    b'{"role": "user", "text": "hi"}',
    ' {"text": "무지개다리 ok"} \r'.encode(),
    b'\xef\xbb\xbf{"text": "after a byte-order mark"}',
    b'{"text": "bad \xff byte"}',
    b'{"text": "one"} {"text": "two"}',
    b'{"text": "one"} trailing',
    b'{"text": "cut',
    b'"a string"',
    b"1 2",
    b'{"text": "ok"}\x0c',
    b"[1, 2]",
    b"nul",
]
