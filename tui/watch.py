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

from memkeeper.core.names import is_archive, is_l1, is_summary
from memkeeper.core.store import INDEX_FILE, LOCK_FILE, MEMORY_FILE, NAMED_MEMORY_FILES, SEARCH_DB, StorePaths

#: Quiet gap (ms) that ends a batch, and the longest a batch is collected.
STEP_MS = 150
DEBOUNCE_MS = 600


def tier_of(paths: StorePaths, path: Path) -> str | None:
    """Which tier a changed path belongs to, or None for files we ignore."""
    name = path.name
    if (
        name.startswith(".")
        or name.endswith((".tmp", ".lock"))
        or name.startswith(SEARCH_DB)
        or name == LOCK_FILE
    ):
        return None
    if path.parent == paths.sessions:
        return "l1" if is_l1(name) else None
    if path.parent != paths.root:
        return None
    if name == MEMORY_FILE:
        return "l2"
    if name == INDEX_FILE:
        return "index"
    if name in NAMED_MEMORY_FILES.values():
        return "named"
    if is_summary(name):
        return "l3"
    if is_archive(name):
        return "l2"
    return None


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
