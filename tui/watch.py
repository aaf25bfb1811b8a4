"""Live refresh: one watchfiles watcher over the store's folders, batches → StoreChanged.

The store root and ``sessions/`` are watched as directories (not files: an atomic
rename-replace would leave a file watch on the old inode), non-recursively, in one
``awatch`` call (one inotify instance). Our own temp files (``.name.XXXX.tmp``), the
search database, lock files and private state are ignored, so the app's reads never
loop; a rename onto ``memory.md`` shows up as ``added`` and counts as a change.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from ..core.store import names
from ..core.store.layout import SESSIONS_DIR
from ..core.store.paths import INDEX_FILE, LOCK_FILE, MEMORY_FILE, NAMED_MEMORY_FILES, SEARCH_DB, StorePaths

#: Quiet gap (ms) that ends a batch, and the longest a batch is collected.
STEP_MS = 150
DEBOUNCE_MS = 600


def tier_of(paths: StorePaths, path: Path) -> str | None:
    """Which refresh group a changed path belongs to (the store's tier of it, with memory.md and
    archives as ``l2``, the named files as ``named`` and the index file as ``index``), or None for
    files we ignore."""
    name = path.name
    if name.endswith((".tmp", ".lock")) or name.startswith(SEARCH_DB) or name == LOCK_FILE:
        return None
    if path.parent == paths.root:
        rel = name
    elif path.parent == paths.sessions:
        rel = f"{SESSIONS_DIR}/{name}"
    else:
        return None
    if name == INDEX_FILE:
        return "index"
    tier = names.tier_of(rel, NAMED_MEMORY_FILES.values())
    if tier == "memory":
        return "l2" if name == MEMORY_FILE else "named"
    return tier


def watched_folders(paths: StorePaths) -> list[Path]:
    """The folders to watch that exist (watchfiles refuses a missing path)."""
    return [p for p in (paths.root, paths.sessions) if p.is_dir()]


async def watch_store(
    paths: StorePaths, stop: asyncio.Event, *, step_ms: int = STEP_MS, debounce_ms: int = DEBOUNCE_MS
) -> AsyncIterator[tuple[frozenset[str], frozenset[Path]]]:
    """Yield (tiers, paths) for each batch of relevant changes until ``stop`` is set."""
    from watchfiles import awatch  # lazy: keeps it off the cold start

    folders = watched_folders(paths)
    if not folders:
        return

    def relevant(_change: object, raw: str) -> bool:
        return tier_of(paths, Path(raw)) is not None

    async for batch in awatch(
        *folders,
        stop_event=stop,
        watch_filter=relevant,
        recursive=False,
        step=step_ms,
        debounce=debounce_ms,
        force_polling=None,
    ):
        changed = frozenset(Path(raw) for _change, raw in batch)
        tiers = frozenset(t for t in (tier_of(paths, p) for p in changed) if t is not None)
        if tiers:
            yield tiers, changed
