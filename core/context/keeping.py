"""Is memory being kept? The reasons it is not: a read-only store, a full disk, a resting model.

Hooks never fail over these (they exit 0 and record nothing, or write extractive bullets);
:func:`not_kept_reasons` lets the session-start context and ``memkeeper status`` say so.
Stdlib only, and light: SessionStart asks every time, so the summarizers (their package
imports ``shutil``, ``datetime`` and more: 8 ms of the hook's CPU) load only when a backend's
health record has a rest to tell.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from ..basics.platform import free_bytes, open_no_follow
from ..store.layout import BACKEND_HEALTH_FILE

if TYPE_CHECKING:
    from ..store.paths import StorePaths

#: Below this much free space on the store's disk, appends may fail: say so.
LOW_DISK_BYTES = 20 * 1024 * 1024


def _writable(path: os.PathLike[str] | str) -> bool:
    return not os.path.exists(path) or os.access(path, os.W_OK)


def store_problems(paths: StorePaths) -> list[str]:
    """Why nothing can be written to the store (read-only, disk full); [] when all is well."""
    if not paths.root.is_dir():
        return []
    problems: list[str] = []
    folders = [paths.root, paths.sessions, paths.state]
    if not all(_writable(p) for p in [*folders, paths.memory]):
        problems.append(f"the memory store {paths.root} is read-only: nothing new is recorded")
    try:
        free: int | None = free_bytes(paths.root)
    except OSError:
        free = None
    if free is not None and free < LOW_DISK_BYTES:
        problems.append(
            f"the disk holding {paths.root} is nearly full ({free // (1024 * 1024)} MB free): "
            "new memory may be lost"
        )
    return problems


def _some_rest_recorded(paths: StorePaths) -> bool:
    """Whether a backend's health record holds a rest (ended or not); False when there is no
    record or it cannot be read (as :func:`memkeeper.core.summarizers.health.read_health` takes it)."""
    try:
        with os.fdopen(open_no_follow(paths.state / BACKEND_HEALTH_FILE, os.O_RDONLY), "rb") as handle:
            data = json.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and any(isinstance(v, dict) and v.get("restUntil") for v in data.values())


def not_kept_reasons(paths: StorePaths) -> list[str]:
    """Every reason memory is not (fully) being kept now, one line each (stdlib only)."""
    reasons = store_problems(paths)
    if not _some_rest_recorded(paths):
        return reasons
    from ..summarizers.health import resting_backends

    for rest in resting_backends(paths):
        reasons.append(
            f"the summarizer {rest['backend']} is resting until {rest['restingUntil']} after a failure "
            f"({rest['lastFailure'] or 'unknown'}): new memory is written without a model meanwhile"
        )
    return reasons
