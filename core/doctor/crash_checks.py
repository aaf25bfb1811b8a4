"""Checks for work a kill interrupted: rotation, migration, an L1 update, a flush.

The operations record an intent first and the next ordinary operation finishes them
(:mod:`memkeeper.core.store.intents`); these checks also find what an older version (or the
JS plugin) left without an intent, by content.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..basics.tokens import CARRYOVER_TOKENS, extract_tail_bytes
from ..store.atomic import atomic_write_bytes, atomic_write_json
from ..store.lock import file_lock
from ..store.memory_index import list_archives
from ..store.paths import StorePaths, is_safe_basename
from .base import (
    ERROR,
    WARNING,
    Check,
    Context,
    Finding,
    listed_archives,
    load_json,
    lock_held,
    rel,
)


def carryover_tokens(paths: StorePaths) -> int:
    try:
        from ..config.reader import hook_settings

        return hook_settings(paths).carryover_tokens
    except Exception:  # a broken config is reported by status, not here
        return CARRYOVER_TOKENS


def migration_orphans(paths: StorePaths) -> list[str]:
    """Archives written by a legacy migration that was killed before it replaced memory.md.

    Migration backs up memory.md first, then writes the archives, then memory.md, then the
    index. While memory.md still begins with the newest pre-migration backup, archives the
    index does not list whose text is a slice of that backup are copies of text memory.md
    still holds: running the migration again would archive it twice.
    """
    try:
        backups = [p for p in paths.backups.iterdir() if p.name.startswith("memory.md.pre-migration-")]
    except OSError:
        return []
    if not backups:
        return []
    newest = max(backups, key=lambda p: p.stat().st_mtime)
    try:
        original = newest.read_bytes()
        memory = paths.memory.read_bytes()
    except OSError:
        return []
    if not original or not memory.startswith(original):
        return []
    listed = listed_archives(paths)
    orphans: list[str] = []
    for name in list_archives(paths):
        if name in listed:
            continue
        try:
            data = paths.archive(name).read_bytes()
        except OSError:
            continue
        if data and data in original:
            orphans.append(name)
    return orphans


class MigrationOrphansCheck(Check):
    """No archive left by a killed migration whose text memory.md still holds."""

    codes = ("migration-interrupted",)

    def diagnose(self, ctx: Context) -> list[Finding]:
        return [
            Finding(
                ERROR,
                "migration-interrupted",
                f"{name} was left by an interrupted migration; its text is still in memory.md",
                name,
            )
            for name in migration_orphans(ctx.paths)
        ]

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        # copies of text memory.md still holds: moved aside so a rerun of the migration starts clean
        for finding in findings:
            ctx.backed_up().move(ctx.paths.root / str(finding.path))


def interrupted_rotation(paths: StorePaths, carryover: int) -> tuple[str, bytes, bytes] | None:
    """(archive, memory, carryover) when memory.md still holds the whole newest archive.

    A rotation killed after writing the archive but before replacing memory.md leaves
    memory.md beginning with the archive's full text and the archive missing from the
    index (the entry is written last); its carryover is all that should stay. Requiring the
    missing entry keeps memory.md that merely repeats old lines from being touched.
    """
    orphans = set(migration_orphans(paths))
    archives = [n for n in list_archives(paths) if n not in orphans]
    if not archives or archives[-1] in listed_archives(paths):
        return None  # rotation writes the index entry last: a listed archive was completed
    newest = archives[-1]
    try:
        archived = paths.archive(newest).read_bytes()
        memory = paths.memory.read_bytes()
    except OSError:
        return None
    tail = extract_tail_bytes(archived, carryover)
    if len(archived) > len(tail) and memory.startswith(archived):
        return newest, memory, tail
    return None


class InterruptedRotationCheck(Check):
    """memory.md does not still hold the whole text of an archive a killed rotation wrote."""

    codes = ("rotation-interrupted",)

    def diagnose(self, ctx: Context) -> list[Finding]:
        found = interrupted_rotation(ctx.paths, carryover_tokens(ctx.paths))
        if not found:
            return []
        return [
            Finding(
                ERROR,
                "rotation-interrupted",
                f"a rotation into {found[0]} was interrupted: memory.md still holds the "
                "whole archived text, which would be archived twice",
                "memory.md",
            )
        ]

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        found = interrupted_rotation(ctx.paths, carryover_tokens(ctx.paths))
        if not found:
            return
        archive, memory, tail = found
        ctx.backed_up().copy(ctx.paths.memory)
        archived_len = ctx.paths.archive(archive).stat().st_size
        atomic_write_bytes(ctx.paths.memory, tail + memory[archived_len:])


def _l1_states(paths: StorePaths) -> list[tuple[Path, dict[str, Any]]]:
    folder = paths.state / "l1"
    found: list[tuple[Path, dict[str, Any]]] = []
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        try:
            data = load_json(path)
        except (OSError, ValueError, UnicodeDecodeError):
            continue  # the L1 update backs an unreadable state up and reconciles by content
        if isinstance(data, dict):
            found.append((path, data))
    return found


class L1PendingCheck(Check):
    """No L1 append whose offsets were never recorded (rolled back as the L1 update itself would)."""

    codes = ("l1-interrupted",)

    def diagnose(self, ctx: Context) -> list[Finding]:
        return [
            Finding(
                WARNING,
                "l1-interrupted",
                "an update of a session file was interrupted; its unconfirmed lines are "
                "set aside and read again from the transcript",
                rel(ctx.paths, path),
            )
            for path, state in _l1_states(ctx.paths)
            if isinstance(state.get("pending"), dict) and not lock_held(path.with_suffix(".lock"))
        ]

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        """The rolled-back lines are kept in the backup; the next update reads them again from
        the transcript (its offset still points before them)."""
        for path, _state in _l1_states(ctx.paths):
            with file_lock(path.with_suffix(".lock"), timeout=1.0):
                self._roll_back(ctx, path)

    @staticmethod
    def _roll_back(ctx: Context, path: Path) -> None:
        try:
            state = load_json(path)
        except (OSError, ValueError, UnicodeDecodeError):
            return
        pending = state.get("pending") if isinstance(state, dict) else None
        if not isinstance(pending, dict):
            return
        name = state.get("l1")
        if isinstance(name, str) and is_safe_basename(name):
            l1 = ctx.paths.sessions / name
            keep = int(pending.get("l1_size", 0))
            if l1.exists() and l1.stat().st_size > keep:
                ctx.backed_up().copy(l1)
                os.truncate(l1, keep)
        state["entries"] = int(pending.get("entries", state.get("entries", 0)))
        state["pending"] = None
        atomic_write_json(path, state)


class FlushJournalCheck(Check):
    """No flush left half-committed (its journal is finished as the next flush would)."""

    codes = ("flush-interrupted",)

    def diagnose(self, ctx: Context) -> list[Finding]:
        journal = ctx.paths.state / "flush-journal.json"
        # A flush writes its journal under the store lock: held by someone else, it is live.
        if (
            journal.exists()
            and ctx.age(journal) > ctx.stale_seconds
            and (ctx.holding_lock or not lock_held(ctx.paths.lock))
        ):
            return [
                Finding(
                    WARNING,
                    "flush-interrupted",
                    "a flush into memory.md was interrupted; it can be finished",
                    rel(ctx.paths, journal),
                )
            ]
        return []

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        from ..log.flush import recover_journal

        ctx.backed_up().copy(ctx.paths.state / "flush-journal.json")
        recover_journal(ctx.paths)


class IntentsCheck(Check):
    """No rotation, migration or restore left half done (its recorded intent is finished)."""

    codes = ("operation-interrupted",)

    def diagnose(self, ctx: Context) -> list[Finding]:
        from ..store import intents
        from ..store.layout import intent_path

        if not ctx.holding_lock and lock_held(ctx.paths.lock):
            return []  # the operation may be running right now
        return [
            Finding(
                ERROR,
                "operation-interrupted",
                f"a {kind} was interrupted; the next store operation (or this repair) completes it",
                rel(ctx.paths, Path(intent_path(str(ctx.paths.root), kind))),
            )
            for kind in intents.pending(ctx.paths)
        ]

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        from ..store import intents

        intents.recover_pending(ctx.paths)
