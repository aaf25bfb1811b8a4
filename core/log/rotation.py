"""Rotation of ``memory.md`` into ``memory_YYYYMMDD_HHMMSS.md`` archives.

As the JS plugin: rotate when ``ceil(bytes / 4) >= threshold`` (94,997 bytes by
default), the archive is a byte-identical copy named by the UTC time, the new
``memory.md`` is the line-aligned carryover tail, an index entry is appended.
Better than it: an archive name is never reused (the second is bumped until free),
and bytes appended to ``memory.md`` by another process while we rotate are carried
into the new file instead of being lost. The whole operation holds the store lock;
the order archive → memory.md → index means a kill at any point loses nothing (an
archive missing from the index is picked up by :func:`reconcile_archives`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..basics.timestamps import iso_now
from ..basics.tokens import (
    CARRYOVER_TOKENS,
    ROTATION_THRESHOLD_TOKENS,
    extract_tail_bytes,
    tokens_for_bytes,
)
from ..store import intents
from ..store.atomic import append_bytes, atomic_write_bytes
from ..store.index_entries import listed_files
from ..store.lock import reentrant_lock
from ..store.memory_index import archive_entry, list_archives, read_index, update_index
from ..store.names import archive_name
from ..store.paths import StorePaths, ensure_store

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

ROTATE_TRIGGER = "[MEMORY_KEEPER_ROTATE] file={}"


@dataclass(frozen=True, slots=True)
class RotationResult:
    """What a rotation did."""

    archive: str
    tokens: int
    bytes: int
    carryover_bytes: int
    late_bytes: int  # appended by someone else during the rotation, carried over

    @property
    def trigger_line(self) -> str:
        return ROTATE_TRIGGER.format(self.archive)


#: memory.md over this many times the threshold did not grow there by flushes (a section is
#: a few hundred bytes): it is legacy content, split by date by the migration, not rotated whole.
LEGACY_FACTOR = 2


def far_over(tokens: int, threshold_tokens: int) -> bool:
    return tokens > LEGACY_FACTOR * threshold_tokens


def memory_tokens(paths: StorePaths) -> int:
    try:
        return tokens_for_bytes(paths.memory.stat().st_size)
    except FileNotFoundError:
        return 0


def is_due(paths: StorePaths, threshold_tokens: int = ROTATION_THRESHOLD_TOKENS) -> bool:
    """Cheap check (one stat) used by the hook path."""
    return memory_tokens(paths) >= threshold_tokens


def free_archive_name(paths: StorePaths, moment: datetime | None = None) -> str:
    """The archive name for ``moment`` (now), bumped a second at a time until unused."""
    epoch = int(moment.timestamp() if moment is not None else time.time())
    taken = set(list_archives(paths))
    name = archive_name(epoch)
    while name in taken or paths.archive(name).exists():
        epoch += 1
        name = archive_name(epoch)
    return name


class RotationRefused(ValueError):
    """A forced rotation of a memory.md no bigger than its carryover: it would only copy it."""


def rotate(
    paths: StorePaths,
    threshold_tokens: int = ROTATION_THRESHOLD_TOKENS,
    carryover_tokens: int = CARRYOVER_TOKENS,
    force: bool = False,
    lock_timeout: float = 30.0,
) -> RotationResult | None:
    """Rotate if due (or ``force`` and non-empty); None when there is nothing to do.

    Raises LockTimeout if the store stays locked for ``lock_timeout`` seconds (hooks pass
    a short one: a rotation skipped now is done by the next event). An intent is recorded
    before the archive is written, so a rotation killed half way is completed by the next
    store operation (:mod:`memkeeper.core.store.intents`) instead of being archived twice.
    """
    ensure_store(paths)
    with reentrant_lock(paths.lock, timeout=lock_timeout):
        intents.recover_pending(paths, timeout=lock_timeout)
        try:
            fd = os.open(paths.memory, os.O_RDONLY)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as old:
            content = old.read()
            tokens = tokens_for_bytes(len(content))
            if not content or (tokens < threshold_tokens and not force):
                return None
            if tokens <= carryover_tokens:
                raise RotationRefused(
                    f"memory.md holds {tokens:,} tokens, no more than the carryover ({carryover_tokens:,}): "
                    "rotating now would copy it whole into an archive; nothing done"
                )
            name = free_archive_name(paths)
            carryover = extract_tail_bytes(content, carryover_tokens)
            intent = {
                "archive": name,
                "bytes": len(content),
                "carryoverBytes": len(carryover),
                "tokens": tokens,
            }
            intents.record(paths, "rotation", intent)
            intents.crash_point("rotation:intent")
            atomic_write_bytes(paths.archive(name), content)
            intents.crash_point("rotation:archive")
            atomic_write_bytes(paths.memory, carryover)
            # ``old`` still reads the replaced file: anything another process appended
            # to it after our read belongs at the end of the new memory.md.
            late = old.read()
            if late:
                append_bytes(paths.memory, late)
        intents.crash_point("rotation:memory")
        _add_index_entry(paths, name, tokens)
        intents.crash_point("rotation:index")
        intents.clear(paths, "rotation")
        return RotationResult(name, tokens, len(content), len(carryover), len(late))


def _add_index_entry(paths: StorePaths, name: str, tokens: int) -> None:
    """List the new archive ``name`` in the index (once, whatever the index held)."""
    moment = iso_now()

    def add_entry(index: dict[str, Any]) -> None:
        entry = archive_entry(paths, name, rotated_at=moment)
        entry["tokens"] = tokens
        # A missing index is rebuilt from disk inside update_index and may already list
        # the new archive: replace rather than duplicate.
        before = len(index["rotatedFiles"])
        index["rotatedFiles"] = [
            e for e in index["rotatedFiles"] if not (isinstance(e, dict) and e.get("file") == name)
        ]
        rebuilt = before - len(index["rotatedFiles"])  # already counted by the rebuild
        index["rotatedFiles"].append(entry)
        raw_stats = index.get("stats")
        stats: dict[str, Any] = raw_stats if isinstance(raw_stats, dict) else {}
        stats["totalRotations"] = int(stats.get("totalRotations") or 0) + 1 - rebuilt
        stats["lastRotation"] = moment
        index["stats"] = stats

    update_index(paths, add_entry)


def finish_interrupted(paths: StorePaths, intent: dict[str, Any]) -> None:
    """Complete a rotation a kill interrupted (the store lock is held; idempotent).

    No archive yet: nothing visible happened, so there is nothing to do. The archive
    written but memory.md still holding its whole text: memory.md becomes the carryover
    followed by whatever was appended since. Then the index entry, if it is missing.
    """
    name = intent.get("archive")
    size = intent.get("bytes")
    carry = intent.get("carryoverBytes")
    if not (isinstance(name, str) and isinstance(size, int) and isinstance(carry, int)):
        return
    archive = paths.archive(name)
    try:
        archived = archive.read_bytes()
    except FileNotFoundError:
        return  # killed before the archive was written: rolled back by doing nothing
    if len(archived) != size:
        return  # not the file this rotation wrote: leave it to doctor
    try:
        memory = paths.memory.read_bytes()
    except FileNotFoundError:
        memory = b""
    if memory.startswith(archived) and carry < size:
        atomic_write_bytes(paths.memory, archived[size - carry :] + memory[size:])
    if name not in listed_files(read_index(paths)):
        _add_index_entry(paths, name, int(intent.get("tokens") or tokens_for_bytes(size)))


def reconcile_archives(paths: StorePaths) -> list[str]:
    """Add index entries for archives on disk that the index does not list (after a kill)."""

    def add_missing(index: dict[str, Any]) -> list[str]:
        known = listed_files(index)
        added = [n for n in list_archives(paths) if n not in known]
        for name in added:
            index["rotatedFiles"].append(archive_entry(paths, name))
        return added

    return update_index(paths, add_missing)  # writes only when something was added
