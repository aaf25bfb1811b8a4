"""What SessionStart needs of ``memory-index.json``, without parsing all of it each time.

SessionStart shows the newest archive summary, the archives whose summaries are pending and,
through the flush watermark (``lastMemoryUpdateTs``), what the last session did after it. A
1 GB store's index lists 2,000 archives (635 KB): parsing it and walking its entries cost the
hook 6 ms, the difference between a store of 40 archives and one of 2,000.

``.state/index-glance.json`` keeps just that (:func:`glance_of`): the watermark, the
:data:`NEWEST` newest entries with a generated summary, the first :data:`PENDING_SHOWN`
pending entries and how many are pending and failed, with the index's stamp (device, inode,
size, modification time: :mod:`memkeeper.core.store.derived`). Every write of the index
through :func:`memkeeper.core.store.memory_index.update_index` saves it; any other writer
(the JavaScript plugin, a person, git) changes the stamp, and :func:`read_glance` then parses
the index once and saves the glance again. A glance that is missing, unparsable or stale is
made again from the index, never trusted; its entries are checked as the index's are (plain
names inside the store), and the index itself is read without following a link.

The index stays the JavaScript plugin's file, unchanged: the glance is ours, in ``.state``.
Stdlib only: the SessionStart hook imports it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..basics import fastjson
from . import derived
from .index_entries import entry_file, last_memory_update, rotated_files, summary_generated, summary_state
from .layout import INDEX_FILE, STATE_DIR
from .paths import is_safe_basename

if TYPE_CHECKING:
    from typing import Any

GLANCE_FILE = "index-glance.json"
GLANCE_LOCK = "index-glance.lock"
#: The newest entries with a generated summary kept: SessionStart shows the first whose summary
#: file reads; past these (all unreadable) it reads the index itself (:func:`generated_entries`).
NEWEST = 8
#: The pending entries SessionStart names (the rest it counts).
PENDING_SHOWN = 5
#: The glance's format; another one is stale.
VERSION = 1


def _safe_entries(index: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in rotated_files(index) if is_safe_basename(entry_file(e) or "")]


def _newest_first(entry: dict[str, Any]) -> str:
    return str(entry.get("rotatedAt") or entry.get("file"))


def generated_entries(index: dict[str, Any]) -> list[dict[str, Any]]:
    """The index's entries with a generated summary, newest first (by rotation time, else name)."""
    return sorted((e for e in _safe_entries(index) if summary_generated(e)), key=_newest_first, reverse=True)


def glance_of(index: dict[str, Any]) -> dict[str, Any]:
    """What SessionStart needs of ``index`` (no stamp)."""
    generated = generated_entries(index)
    pending = [e for e in _safe_entries(index) if not summary_generated(e)]
    return {
        "version": VERSION,
        "lastMemoryUpdateTs": last_memory_update(index),
        "newest": generated[:NEWEST],
        "moreGenerated": len(generated) > NEWEST,
        "pending": pending[:PENDING_SHOWN],
        "pendingCount": len(pending),
        "failedCount": sum(1 for e in pending if summary_state(e) == "failed"),
    }


EMPTY: dict[str, Any] = glance_of({})


def _valid(data: dict[str, object]) -> dict[str, Any] | None:
    """``data`` as a glance when every field is of its kind (entries checked as the index's), else None."""
    newest, pending = data.get("newest"), data.get("pending")
    counts = (data.get("pendingCount"), data.get("failedCount"))
    watermark = data.get("lastMemoryUpdateTs")
    if (
        data.get("version") != VERSION
        or not isinstance(newest, list)
        or not isinstance(pending, list)
        or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts)
        or not isinstance(data.get("moreGenerated"), bool)
        or not (watermark is None or isinstance(watermark, str))
    ):
        return None
    glance = {key: data.get(key) for key in EMPTY}
    glance["newest"] = [e for e in _safe_entries({"rotatedFiles": newest}) if summary_generated(e)]
    glance["pending"] = [e for e in _safe_entries({"rotatedFiles": pending}) if not summary_generated(e)]
    return glance


def _paths(root: str) -> tuple[str, str, str]:
    state = os.path.join(root, STATE_DIR)
    return os.path.join(root, INDEX_FILE), os.path.join(state, GLANCE_FILE), os.path.join(state, GLANCE_LOCK)


def read_glance(root: str) -> dict[str, Any]:
    """The glance of the index of the store at ``root``: the saved one while the index is
    unchanged, else made from the index (and saved, see :mod:`.derived`); :data:`EMPTY` when
    there is no index, it is a link or it does not parse (as SessionStart showed it before:
    nothing of it; the next locked read of the index backs it up and rebuilds it)."""
    index_path, glance_path, lock = _paths(root)
    try:
        info = os.lstat(index_path)
    except OSError:
        return EMPTY
    stamp = derived.file_stamp(info)
    data = derived.saved(glance_path, "index", stamp)
    glance = _valid(data) if data is not None else None
    if glance is not None:
        return glance
    from .atomic import open_read

    try:
        with open_read(index_path) as handle:
            raw = handle.read()
            read_at = derived.file_stamp(os.fstat(handle.fileno()))
    except OSError:  # a link (StoreLinkError), or gone meanwhile
        return EMPTY
    try:
        index = fastjson.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        index = None
    glance = glance_of(index) if isinstance(index, dict) else EMPTY
    if read_at == stamp and derived.settled(stamp[3]) and os.path.isdir(os.path.dirname(glance_path)):
        try:  # (unchanged while read, and older than a clock tick: see .derived)
            derived.save(glance_path, lock, {"index": stamp, **glance})
        except OSError:
            pass  # the next SessionStart reads the index again
    return glance


def save_glance(root: str, index: dict[str, Any]) -> None:
    """Save the glance of ``index``, just written to the store at ``root`` (by
    :func:`memkeeper.core.store.memory_index.update_index`, under the store lock), so that the
    next SessionStart need not parse it. Skipped when another process is saving one now (the
    next reader finds it stale and makes it) or the store has no ``.state`` yet."""
    index_path, glance_path, lock = _paths(root)
    if not os.path.isdir(os.path.dirname(glance_path)):
        return
    try:
        stamp = derived.file_stamp(os.lstat(index_path))
        derived.save(glance_path, lock, {"index": stamp, **glance_of(index)})
    except OSError:
        pass  # a cache: the next reader makes it
