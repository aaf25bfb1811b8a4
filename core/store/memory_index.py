"""``memory-index.json``: its one locked read-modify-write, corruption recovery, rebuild.

Stdlib only (the hook path uses it). The file keeps the JS plugin's key names and order
(``JSON.stringify(obj, null, 2)``, no trailing newline) and every key we do not know.
A file that does not parse is moved aside to ``memory-index.json.corrupt-<UTC>`` and
the index is rebuilt from the archives and summaries on disk, never reset to empty.
The typed view is :mod:`memkeeper.core.store.memory_index_model`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..basics.timestamps import file_stamp, iso_from_epoch
from ..basics.tokens import tokens_for_bytes
from .atomic import atomic_write_text, dumps_js
from .lock import reentrant_lock
from .names import archive_time, is_archive, summary_name
from .paths import StorePaths, is_safe_basename

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

DATE_HEADER_RE = re.compile(r"^## (\d{4}-\d{2}-\d{2})", re.MULTILINE)


def default_index() -> dict[str, Any]:
    return {
        "version": 1,
        "current": "memory.md",
        "rotatedFiles": [],
        "stats": {"totalRotations": 0, "lastRotation": None},
        "counter": 0,
    }


def date_range(text: str) -> dict[str, str] | None:
    dates = DATE_HEADER_RE.findall(text)
    if not dates:
        return None
    return {"first": min(dates), "last": max(dates)}


def list_archives(paths: StorePaths) -> list[str]:
    """Archive basenames on disk (``memory_*.md`` but not memory.md), sorted by name."""
    try:
        names = os.listdir(paths.root)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if is_archive(n))


def _summary_ok(path: Path) -> bool:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict)


def archive_entry(paths: StorePaths, name: str, rotated_at: str | None = None) -> dict[str, Any]:
    """An index entry for an archive on disk, in the reference's key order."""
    path = paths.archive(name)
    data = path.read_bytes()
    entry: dict[str, Any] = {
        "file": name,
        "rotatedAt": rotated_at or _rotated_at_from_name(name, path),
        "tokens": tokens_for_bytes(len(data)),
        "bytes": len(data),
        "summary": summary_name(name),
        "summaryGenerated": _summary_ok(paths.archive(summary_name(name))),
    }
    found = date_range(data.decode("utf-8", "replace"))
    if found:
        entry["dateRange"] = found
    return entry


def _rotated_at_from_name(name: str, path: Path) -> str:
    moment = archive_time(name)
    return iso_from_epoch(moment if moment is not None else path.stat().st_mtime)


def rebuild_index(paths: StorePaths, salvage: str = "") -> dict[str, Any]:
    """An index made from the files on disk, keeping what ``salvage`` text still tells."""
    index = default_index()
    for name in list_archives(paths):
        try:
            index["rotatedFiles"].append(archive_entry(paths, name))
        except OSError:
            continue
    if index["rotatedFiles"]:
        index["stats"] = {
            "totalRotations": len(index["rotatedFiles"]),
            "lastRotation": max(e["rotatedAt"] for e in index["rotatedFiles"]),
        }
    match = re.search(r'"lastMemoryUpdateTs"\s*:\s*"([^"]+)"', salvage)
    if match:
        index["lastMemoryUpdateTs"] = match.group(1)
    return index


def _corrupt_backup_name(paths: StorePaths) -> Path:
    stamp = file_stamp()
    candidate = paths.index.with_name(f"{paths.index.name}.corrupt-{stamp}")
    n = 1
    while candidate.exists():
        candidate = paths.index.with_name(f"{paths.index.name}.corrupt-{stamp}-{n}")
        n += 1
    return candidate


def _load_unlocked(paths: StorePaths) -> tuple[dict[str, Any], bool]:
    """(index, changed): changed is True when it was created or recovered and must be written."""
    try:
        raw = paths.index.read_bytes()
    except FileNotFoundError:
        return rebuild_index(paths), True
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("rotatedFiles", []), list):
            raise ValueError("not an index object")
    except (ValueError, UnicodeDecodeError, RecursionError):  # nested too deep is corrupt too
        backup = _corrupt_backup_name(paths)
        os.replace(paths.index, backup)
        index = rebuild_index(paths, raw.decode("utf-8", "replace"))
        index["recoveredFrom"] = backup.name
        return index, True
    changed = False
    for key, value in default_index().items():
        if key not in data:
            data[key] = value
            changed = True
    return data, changed


def read_index(paths: StorePaths) -> dict[str, Any]:
    """The index as a dict; recovers (under the lock) if it is missing or corrupt."""
    try:
        data = json.loads(paths.index.read_bytes().decode("utf-8"))
        if isinstance(data, dict) and isinstance(data.get("rotatedFiles", []), list):
            return data
    except FileNotFoundError:
        if not paths.root.is_dir():
            return default_index()
    except (ValueError, UnicodeDecodeError, RecursionError):
        pass
    try:
        return update_index(paths, lambda index: index)
    except OSError:
        # A read-only or vanished folder: show what the disk holds, change nothing.
        return rebuild_index(paths)


def update_index(paths: StorePaths, change: Callable[[dict[str, Any]], T]) -> T:
    """Under the store lock: read (recovering if needed), apply ``change``, write atomically.

    ``change`` edits the dict in place; its return value is passed back. A change that
    leaves the index as it was writes nothing, so callers need no read-first check. What
    SessionStart needs of a written index is saved beside it
    (:mod:`memkeeper.core.store.index_glance`).
    """
    with reentrant_lock(paths.lock):
        index, created = _load_unlocked(paths)
        before = None if created else dumps_js(index)
        result = change(index)
        text = dumps_js(index)
        if text != before:
            atomic_write_text(paths.index, text)
            from .index_glance import save_glance

            save_glance(str(paths.root), index)
        return result


def safe_entries(index: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Entries whose file and summary are plain names inside the store, and warnings for the rest."""
    good: list[dict[str, Any]] = []
    refused: list[str] = []
    for entry in index.get("rotatedFiles", []):
        if not isinstance(entry, dict):
            refused.append(f"index entry is not an object: {entry!r:.80}")
            continue
        name = entry.get("file")
        summary = entry.get("summary", summary_name(name) if isinstance(name, str) else None)
        if (
            isinstance(name, str)
            and is_safe_basename(name)
            and isinstance(summary, str)
            and is_safe_basename(summary)
        ):
            good.append(entry)
        else:
            refused.append(f"index entry names a file outside the memory folder (refused): {name!r:.120}")
    return good, refused


# --- the typed accessors ------------------------------------------------------------------
# Every reader and writer of an entry's fields goes through these (the pydantic view in
# index_model too), so "generated" has one rule and unknown keys stay where they are: a
# writer changes its fields in the entry dict it was given and leaves every other key.
