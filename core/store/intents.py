"""Intent records: a multi-step store operation says what it is about to do before doing it.

Rotation, legacy migration and restoring from the trash each change several files. Each
writes ``.state/intent-<kind>.json`` atomically (under the store lock) before its first
visible step and removes it after its last, so a kill anywhere in between leaves a record
of exactly what was under way. The next ordinary operation — a hook, a CLI command, the
TUI through any store operation — calls :func:`recover_pending` first, which completes the
interrupted operation (each kind's ``finish_interrupted`` is idempotent: run twice, or after
the operation had in fact finished, it changes nothing) or, when nothing visible had
happened yet, simply drops the record.

Stdlib only. Whether anything is pending is :func:`memkeeper.core.store.layout.pending_intents`
(three ``stat`` calls), which every hook asks before it imports this module. ``MEMKEEPER_CRASH_AT`` names a step at which the process kills itself, for the
crash campaign in the tests and the reliability bench; it is never set otherwise.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .atomic import atomic_write_json
from .layout import intent_path, pending_intents

if TYPE_CHECKING:
    from typing import Any

    from .paths import StorePaths

#: kind (each of layout.INTENT_KINDS) -> "module:function(paths, intent) -> None" that
#: completes or rolls back the kind.
FINISHERS = {
    "rotation": "memkeeper.core.log.rotation:finish_interrupted",
    "migration": "memkeeper.core.log.migrate:finish_interrupted",
    "restore": "memkeeper.core.store.trash:finish_interrupted",
}
CRASH_ENV = "MEMKEEPER_CRASH_AT"


def pending(paths: StorePaths) -> list[str]:
    """The kinds with an intent on disk (an operation under way, or one a kill interrupted)."""
    return pending_intents(os.fspath(paths.root))


def record(paths: StorePaths, kind: str, intent: dict[str, Any]) -> None:
    """Write the intent of ``kind`` (durably: it must be on disk before the first step)."""
    atomic_write_json(intent_path(os.fspath(paths.root), kind), {"kind": kind, **intent})


def clear(paths: StorePaths, kind: str) -> None:
    try:
        os.unlink(intent_path(os.fspath(paths.root), kind))
    except FileNotFoundError:
        pass


def _read(paths: StorePaths, kind: str) -> dict[str, Any] | None:
    import json

    path = intent_path(os.fspath(paths.root), kind)
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        # Written atomically, so this is outside damage: keep it for a person, recover nothing.
        os.replace(path, path + ".unreadable")
        return None
    return data if isinstance(data, dict) else None


def finish(paths: StorePaths, kind: str) -> None:
    """Complete or roll back the interrupted ``kind`` (the caller holds the store lock)."""
    intent = _read(paths, kind)
    if intent is not None:
        from importlib import import_module

        module, function = FINISHERS[kind].split(":")
        getattr(import_module(module), function)(paths, intent)
    clear(paths, kind)


def recover_pending(paths: StorePaths, timeout: float = 1.0) -> list[str]:
    """Finish every interrupted operation; returns the kinds finished.

    Waits at most ``timeout`` for the store lock: an intent whose lock is held belongs to an
    operation still running (LockTimeout then reaches the caller, as any store wait does).
    """
    if not pending(paths):
        return []
    from .lock import reentrant_lock

    with reentrant_lock(paths.lock, timeout=timeout):
        kinds = pending(paths)
        for kind in kinds:
            finish(paths, kind)
    return kinds


def crash_point(step: str) -> None:
    """Kill this process (SIGKILL, or as close as the system has) at ``step`` when
    ``MEMKEEPER_CRASH_AT`` names it (tests only)."""
    if os.environ.get(CRASH_ENV) == step:
        from ..basics.platform import die_now

        die_now()
