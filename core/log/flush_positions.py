"""The flush watermark, by position: per L1 file, the byte offset up to which it was flushed.

A timestamp watermark skips every entry that reaches L1 after the flush has passed its
time (a resumed session, a late subagent transcript, an old-format transcript refined
late). Positions cannot: an L1 file only grows, so what lies past its recorded offset is
exactly what has not been summarized, whatever its ``ts``. The positions live in our own
state, ``.state/flush-positions.json`` (``{"files": {"<name>.l1.jsonl": offset}}``); the
JS plugin's ``lastMemoryUpdateTs`` in the index is still kept (the newest ``ts`` flushed)
for the JS tools and for display.

A store without the file starts from its ``lastMemoryUpdateTs``: each L1 file's position is
the end of its leading entries at or before that time (as the timestamp watermark saw
them); a store with neither takes the newest :data:`FIRST_FLUSH_ENTRIES` entries.
Compressed files (``.l1.jsonl.gz``) keep the position of their plain name, counted in
uncompressed bytes.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..basics.timestamps import parse_iso
from ..store.atomic import atomic_write_json
from ..store.paths import StorePaths

POSITIONS = "flush-positions.json"
#: When this machine last flushed, and with what (``{"at": ISO, "generator": name}``): one
#: machine's state, kept out of the shared ``memory-index.json`` (an older store has it there).
LAST_FLUSH = "last-flush.json"
#: Each new entry carries ``(file, end offset)`` under this key while a flush handles it.
POSITION_KEY = "_l1pos"
#: With no watermark at all (first flush of a store), only the newest entries are taken.
FIRST_FLUSH_ENTRIES = 50
L1_SUFFIXES = (".l1.jsonl", ".l1.jsonl.gz")

Positions = dict[str, int]


def file_key(path: Path) -> str:
    return path.name.removesuffix(".gz")


def _l1_paths(paths: StorePaths) -> list[Path]:
    try:
        found = [p for p in paths.sessions.iterdir() if p.name.endswith(L1_SUFFIXES) and p.is_file()]
    except OSError:
        return []
    plain = {p.name for p in found}
    # a file both plain and compressed (a compress killed half way) counts once, plain
    return sorted(p for p in found if not (p.name.endswith(".gz") and file_key(p) in plain))


def read_from(path: Path, start: int) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(start, end, entry) for every whole JSON-object line of an L1 file from byte ``start``."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as handle:
            handle.seek(start)
            offset = start
            for raw in handle:
                end = offset + len(raw)
                if not raw.endswith(b"\n"):
                    return  # a line still being written: the next flush takes it whole
                entry = _decode(raw)
                if entry is not None:
                    yield offset, end, entry
                offset = end
    except (OSError, EOFError):
        return


def _content_size(path: Path) -> int:
    """The file's size in (uncompressed) bytes; for a gzip its trailer's ISIZE, read without inflating."""
    try:
        if not path.name.endswith(".gz"):
            return path.stat().st_size
        with path.open("rb") as handle:
            handle.seek(-4, 2)
            return int.from_bytes(handle.read(4), "little")
    except OSError:
        return 0


def _decode(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def load(paths: StorePaths) -> Positions | None:
    try:
        data = json.loads((paths.state / POSITIONS).read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        _set_aside(paths)
        return None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return None
    return {str(k): v for k, v in files.items() if isinstance(v, int) and not isinstance(v, bool) and v >= 0}


def _set_aside(paths: StorePaths) -> None:
    """An unreadable positions file is kept for a person; positions start again from the index."""
    import os

    source = paths.state / POSITIONS
    os.replace(source, source.with_name(source.name + ".unreadable"))


def save(paths: StorePaths, positions: Positions) -> None:
    atomic_write_json(paths.state / POSITIONS, {"version": 1, "files": dict(sorted(positions.items()))})


def _after(ts: Any, mark: Any) -> bool:
    when = parse_iso(ts)
    return when is None or when > mark


def initial(paths: StorePaths, legacy_ts: str | None) -> Positions:
    """Positions for a store that has none yet (see the module docstring)."""
    mark = parse_iso(legacy_ts) if legacy_ts else None
    positions: Positions = {}
    newest: list[tuple[str, str, int]] = []  # (ts, file, start) when there is no watermark
    for path in _l1_paths(paths):
        key = file_key(path)
        positions[key] = 0
        for start, end, entry in read_from(path, 0):
            if mark is None:
                positions[key] = end
                newest.append((str(entry.get("ts") or ""), key, start))
            elif _after(entry.get("ts"), mark):
                break
            else:
                positions[key] = end
    if mark is None:
        for _ts, key, start in sorted(newest)[-FIRST_FLUSH_ENTRIES:]:
            positions[key] = min(positions[key], start)
    return positions


def new_entries(paths: StorePaths, positions: Positions) -> list[dict[str, Any]]:
    """The entries past each file's position, file by file (files in the order of their first
    new entry's ``ts``), each file's in file order; each carries its position under
    :data:`POSITION_KEY`. A prefix of this list is a prefix of every file's new entries, so
    moving each file to the end of its last entry in a prefix is exact."""
    groups: list[list[dict[str, Any]]] = []
    for path in _l1_paths(paths):
        key = file_key(path)
        if positions.get(key, 0) >= _content_size(path):
            continue  # flushed to its end: not even opened
        group = []
        for _start, end, entry in read_from(path, positions.get(key, 0)):
            if isinstance(entry.get("ts"), str):
                group.append({**entry, POSITION_KEY: (key, end)})
        if group:
            groups.append(group)
    groups.sort(key=lambda group: str(group[0]["ts"]))
    return [entry for group in groups for entry in group]


def moves(chunk: list[dict[str, Any]]) -> Positions:
    """``{file: new position}`` after flushing ``chunk`` (a prefix of :func:`new_entries`)."""
    moved: Positions = {}
    for entry in chunk:
        key, end = entry[POSITION_KEY]
        moved[key] = max(end, moved.get(key, 0))
    return moved


def newest_ts(chunk: list[dict[str, Any]], previous: str | None = None) -> str:
    """The newest ``ts`` of ``chunk`` and ``previous`` (compared as instants): the JS watermark."""
    stamps = [str(e["ts"]) for e in chunk] + ([previous] if previous else [])
    known = [(when, ts) for ts in stamps if (when := parse_iso(ts)) is not None]
    return max(known)[1] if known else stamps[-1]


def save_last_flush(paths: StorePaths, at: str, generator: str | None) -> None:
    record = {"at": at, **({"generator": generator} if generator else {})}
    atomic_write_json(paths.state / LAST_FLUSH, record, durable=False)


def last_flush(paths: StorePaths, index: dict[str, Any] | None = None) -> str | None:
    """When this machine last flushed (ISO), else the ``lastFlushAt`` an older ``index`` holds."""
    try:
        data = json.loads((paths.state / LAST_FLUSH).read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        data = None
    found = data.get("at") if isinstance(data, dict) else (index or {}).get("lastFlushAt")
    return found if isinstance(found, str) and found else None
