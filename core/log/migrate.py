"""Legacy migration: split an oversized ``memory.md`` into dated archives, losing nothing.

As the JS ``migrate-legacy`` (reference §5.4): only when memory.md is over the threshold
(strictly), split it into sections at ``## YYYY-MM-DD`` headers, force-split a section
over the threshold at line boundaries, pack sections greedily into chunks of at most
the threshold, and name archives ``memory_<last section date YYYYMMDD>_2359NN.md`` with
one sequence NN per run. Unlike it, every byte is kept: the pieces are exact slices of
the original, so the archives followed by the new memory.md are the original file (the
text before the first header goes with the first section, no blank line is added, the
last chunk is archived except its carryover tail). The original is copied to
``.backups/`` first, each index entry records ``dateRange``, an existing archive name is
never reused, and a second run finds nothing to do. :func:`plan_migration` is the dry run.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..basics.timestamps import day_of_epoch, file_stamp, iso_now
from ..basics.tokens import extract_tail_bytes, tokens_for_bytes
from ..config.reader import hook_settings
from ..store import intents, jobs
from ..store.atomic import append_bytes, atomic_write_bytes
from ..store.index_entries import listed_files
from ..store.lock import reentrant_lock
from ..store.memory_index import archive_entry, list_archives, read_index, update_index
from ..store.names import archive_name_on
from ..store.paths import DIR_MODE, StorePaths, ensure_store, is_safe_basename
from ..store.records import json_fields
from .rotation import ROTATE_TRIGGER

DATE_HEADER = re.compile(rb"## (\d{4})-(\d{2})-(\d{2})")


@dataclass(frozen=True)
class PlannedArchive:
    name: str
    start: int  # byte offset of the slice in the original memory.md
    end: int
    tokens: int
    first_date: str
    last_date: str
    sections: int

    @property
    def bytes(self) -> int:
        return self.end - self.start

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.name,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "dateRange": {"first": self.first_date, "last": self.last_date},
            "sections": self.sections,
        }


@dataclass(frozen=True)
class MigrationPlan:
    needed: bool
    reason: str
    memory_bytes: int
    memory_tokens: int
    threshold_tokens: int
    archives: list[PlannedArchive] = field(default_factory=list)
    carryover_start: int = 0  # memory.md becomes original[carryover_start:]
    backup: str | None = None
    dry_run: bool = True

    @property
    def carryover_bytes(self) -> int:
        return self.memory_bytes - self.carryover_start

    @property
    def trigger_lines(self) -> list[str]:
        return [ROTATE_TRIGGER.format(a.name) for a in self.archives]

    def as_dict(self) -> dict[str, Any]:
        return json_fields(self, camel_case=True, keys={"carryover_start": None}) | {
            "archives": [a.as_dict() for a in self.archives],
            "carryoverBytes": self.carryover_bytes,
            "carryoverTokens": tokens_for_bytes(self.carryover_bytes),
        }


@dataclass
class _Piece:
    start: int
    end: int
    date: str
    sections: int = 1

    @property
    def tokens(self) -> int:
        return tokens_for_bytes(self.end - self.start)


def _line_spans(content: bytes) -> list[tuple[int, int]]:
    """(start, end) of every line including its ``\\n``; the last may lack one."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while pos < len(content):
        nl = content.find(b"\n", pos)
        end = len(content) if nl < 0 else nl + 1
        spans.append((pos, end))
        pos = end
    return spans


def _sections(content: bytes, fallback_date: str) -> list[_Piece]:
    """Sections at ``## YYYY-MM-DD`` headers; text before the first one joins the first."""
    sections: list[_Piece] = []
    for start, end in _line_spans(content):
        match = DATE_HEADER.match(content, start, end)
        if match:
            day = b"-".join(match.groups()).decode("ascii")
            if sections or start == 0:
                sections.append(_Piece(start, end, day))
            else:  # preamble: the first section starts at byte 0 and takes the first date
                sections.append(_Piece(0, end, day))
            continue
        if sections:
            sections[-1].end = end
    if not sections:
        return [_Piece(0, len(content), fallback_date)] if content else []
    return sections


def _force_split(content: bytes, piece: _Piece, threshold: int) -> list[_Piece]:
    """Split a section over the threshold at line boundaries (a single huge line stays whole)."""
    if piece.tokens <= threshold:
        return [piece]
    parts: list[_Piece] = []
    current: _Piece | None = None
    for start, end in _line_spans(content[piece.start : piece.end]):
        start += piece.start
        end += piece.start
        if current is not None and tokens_for_bytes(end - current.start) > threshold:
            parts.append(current)
            current = None
        if current is None:
            current = _Piece(start, end, piece.date, sections=0)
        else:
            current.end = end
    if current is not None:
        parts.append(current)
    parts[0].sections = 1
    return parts


def _chunks(pieces: list[_Piece], threshold: int) -> list[list[_Piece]]:
    """Greedy packing into chunks whose summed piece estimates stay within the threshold."""
    chunks: list[list[_Piece]] = []
    current: list[_Piece] = []
    total = 0
    for piece in pieces:
        if current and total + piece.tokens > threshold:
            chunks.append(current)
            current, total = [], 0
        current.append(piece)
        total += piece.tokens
    if current:
        chunks.append(current)
    return chunks


def _archive_names(paths: StorePaths, dates: list[str]) -> list[str]:
    """``memory_<date>_2359NN.md`` with one running NN; a name already taken is skipped."""
    taken = set(list_archives(paths))
    names: list[str] = []
    seq = 0
    for day in dates:
        while True:
            minute, second = divmod(seq, 100)
            name = archive_name_on(day, f"{2359 - minute:04d}{second:02d}")
            seq += 1
            if name not in taken and not paths.archive(name).exists():
                break
        names.append(name)
        taken.add(name)
    return names


def _plan(
    paths: StorePaths, content: bytes, threshold: int, carryover: int, mtime: float | None
) -> MigrationPlan:
    tokens = tokens_for_bytes(len(content))
    if tokens <= threshold:
        return MigrationPlan(
            False,
            f"memory.md is {tokens:,} tokens, not over the threshold of {threshold:,}",
            len(content),
            tokens,
            threshold,
            carryover_start=0,
        )
    fallback = day_of_epoch(mtime or 0)
    pieces: list[_Piece] = []
    for section in _sections(content, fallback):
        pieces.extend(_force_split(content, section, threshold))
    chunks = _chunks(pieces, threshold)
    last = chunks[-1]
    last_start = last[0].start
    tail = extract_tail_bytes(content[last_start:], carryover)
    carryover_start = len(content) - len(tail)
    spans: list[tuple[list[_Piece], int, int]] = [(c, c[0].start, c[-1].end) for c in chunks[:-1]]
    if carryover_start > last_start:  # the last chunk minus its tail is archived too
        kept = [p for p in last if p.start < carryover_start]
        spans.append((kept, last_start, carryover_start))
    if not spans:  # the carryover would keep everything (carryover >= the whole file): nothing to split
        return MigrationPlan(
            False,
            f"memory.md is {tokens:,} tokens but the carryover of {carryover:,} tokens keeps all of it",
            len(content),
            tokens,
            threshold,
        )
    names = _archive_names(paths, [max(p.date for p in chunk) for chunk, _, _ in spans])
    archives = [
        PlannedArchive(
            name,
            start,
            end,
            tokens_for_bytes(end - start),
            min(p.date for p in chunk),
            max(p.date for p in chunk),
            sum(p.sections for p in chunk),
        )
        for name, (chunk, start, end) in zip(names, spans, strict=True)
    ]
    return MigrationPlan(
        True,
        f"memory.md is {tokens:,} tokens, over the threshold of {threshold:,}",
        len(content),
        tokens,
        threshold,
        archives,
        carryover_start,
    )


def _settings(paths: StorePaths, threshold: int | None, carryover: int | None) -> tuple[int, int]:
    if threshold is not None and carryover is not None:
        return threshold, carryover
    settings = hook_settings(paths)
    return (
        threshold if threshold is not None else settings.threshold_tokens,
        carryover if carryover is not None else settings.carryover_tokens,
    )


def plan_migration(
    paths: StorePaths, threshold_tokens: int | None = None, carryover_tokens: int | None = None
) -> MigrationPlan:
    """What :func:`migrate_legacy` would do now; changes nothing."""
    threshold, carryover = _settings(paths, threshold_tokens, carryover_tokens)
    try:
        content = paths.memory.read_bytes()
        mtime = paths.memory.stat().st_mtime
    except FileNotFoundError:
        return MigrationPlan(False, "there is no memory.md", 0, 0, threshold)
    return _plan(paths, content, threshold, carryover, mtime)


def _backup_path(paths: StorePaths) -> str:
    stamp = file_stamp()
    name = f"memory.md.pre-migration-{stamp}"
    n = 1
    while (paths.backups / name).exists():
        name = f"memory.md.pre-migration-{stamp}-{n}"
        n += 1
    return name


def _archive_intent(archive: PlannedArchive) -> dict[str, Any]:
    return {
        "file": archive.name,
        "start": archive.start,
        "end": archive.end,
        "first": archive.first_date,
        "last": archive.last_date,
    }


def _add_index_entries(paths: StorePaths, archives: list[PlannedArchive]) -> None:
    """List the migration's archives in the index (each once, whatever the index held)."""
    moment = iso_now()

    def add_entries(index: dict[str, Any]) -> None:
        names = {a.name for a in archives}
        before = len(index["rotatedFiles"])
        # A missing index is rebuilt from disk inside update_index and may already list
        # the new archives: replace those entries, and count only the really new ones.
        index["rotatedFiles"] = [
            e for e in index["rotatedFiles"] if not (isinstance(e, dict) and e.get("file") in names)
        ]
        rebuilt = before - len(index["rotatedFiles"])
        for archive in archives:
            entry = archive_entry(paths, archive.name, rotated_at=moment)
            entry["dateRange"] = {"first": archive.first_date, "last": archive.last_date}
            index["rotatedFiles"].append(entry)
        raw_stats = index.get("stats")
        stats: dict[str, Any] = raw_stats if isinstance(raw_stats, dict) else {}
        stats["totalRotations"] = int(stats.get("totalRotations") or 0) + len(archives) - rebuilt
        stats["lastRotation"] = moment
        index["stats"] = stats

    update_index(paths, add_entries)


def _planned(item: Any, original: bytes) -> PlannedArchive | None:
    """An archive of a recorded migration intent, checked against the original it slices."""
    if not isinstance(item, dict):
        return None
    name, start, end = item.get("file"), item.get("start"), item.get("end")
    if not (isinstance(name, str) and isinstance(start, int) and isinstance(end, int)):
        return None
    if not (is_safe_basename(name) and 0 <= start < end <= len(original)):
        return None
    first, last = str(item.get("first") or ""), str(item.get("last") or "")
    return PlannedArchive(name, start, end, tokens_for_bytes(end - start), first, last, 0)


def finish_interrupted(paths: StorePaths, intent: dict[str, Any]) -> None:
    """Complete a migration a kill interrupted (the store lock is held; idempotent).

    No backup yet: nothing visible happened. Otherwise the backup is the original
    memory.md: every archive missing is written from it, memory.md still beginning with
    the original becomes its carryover (plus whatever was appended since), and the
    archives missing from the index are listed.
    """
    backup, size, carry = intent.get("backup"), intent.get("bytes"), intent.get("carryoverStart")
    if not (isinstance(backup, str) and is_safe_basename(backup) and isinstance(size, int)):
        return
    try:
        original = (paths.backups / backup).read_bytes()
    except FileNotFoundError:
        return  # killed before the backup: rolled back by doing nothing
    if len(original) != size or not isinstance(carry, int):
        return
    archives = [a for a in (_planned(i, original) for i in intent.get("archives") or []) if a is not None]
    for archive in archives:
        path = paths.archive(archive.name)
        if not path.exists():
            atomic_write_bytes(path, original[archive.start : archive.end])
    try:
        memory = paths.memory.read_bytes()
    except FileNotFoundError:
        memory = b""
    if memory.startswith(original):
        atomic_write_bytes(paths.memory, original[carry:] + memory[size:])
    listed = listed_files(read_index(paths))
    missing = [a for a in archives if a.name not in listed]
    if missing:
        _add_index_entries(paths, missing)


def migrate_legacy(
    paths: StorePaths,
    dry_run: bool = False,
    threshold_tokens: int | None = None,
    carryover_tokens: int | None = None,
    start_summaries: bool = True,
) -> MigrationPlan:
    """Split memory.md as planned (backup → archives → memory.md → index), or just plan.

    Holds the store lock throughout. Bytes appended to memory.md by another process while
    it runs are carried into the new memory.md.
    """
    if dry_run:
        return plan_migration(paths, threshold_tokens, carryover_tokens)
    threshold, carryover = _settings(paths, threshold_tokens, carryover_tokens)
    ensure_store(paths)
    with reentrant_lock(paths.lock):
        intents.recover_pending(paths)
        try:
            fd = os.open(paths.memory, os.O_RDONLY)
        except FileNotFoundError:
            return MigrationPlan(False, "there is no memory.md", 0, 0, threshold, dry_run=False)
        with os.fdopen(fd, "rb") as old:
            content = old.read()
            plan = _plan(paths, content, threshold, carryover, os.fstat(old.fileno()).st_mtime)
            if not plan.needed:
                return MigrationPlan(
                    False, plan.reason, plan.memory_bytes, plan.memory_tokens, threshold, dry_run=False
                )
            paths.backups.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            backup = _backup_path(paths)
            intent = {
                "backup": backup,
                "bytes": len(content),
                "carryoverStart": plan.carryover_start,
                "archives": [_archive_intent(a) for a in plan.archives],
            }
            intents.record(paths, "migration", intent)
            intents.crash_point("migration:intent")
            atomic_write_bytes(paths.backups / backup, content)
            intents.crash_point("migration:backup")
            for archive in plan.archives:
                atomic_write_bytes(paths.archive(archive.name), content[archive.start : archive.end])
                intents.crash_point("migration:archive")
            atomic_write_bytes(paths.memory, content[plan.carryover_start :])
            late = old.read()  # appended by someone else after our read
            if late:
                append_bytes(paths.memory, late)
        intents.crash_point("migration:memory")
        _add_index_entries(paths, plan.archives)
        intents.crash_point("migration:index")
        intents.clear(paths, "migration")
    done = MigrationPlan(
        True,
        plan.reason,
        plan.memory_bytes,
        plan.memory_tokens,
        threshold,
        plan.archives,
        plan.carryover_start,
        backup=backup,
        dry_run=False,
    )
    if start_summaries and plan.archives:
        jobs.start_job(paths, "summary")
    return done


def run_migrate_job(paths: StorePaths, options: dict[str, Any]) -> None:
    """The ``migrate`` job: a hook found memory.md far over the threshold (legacy content)."""
    migrate_legacy(paths)
