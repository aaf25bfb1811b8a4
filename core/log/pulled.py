"""What a ``git pull`` brought into a shared store, taken in by the next hook or command.

When the store is shared (``memkeeper share``), files arrive that no process of this machine
wrote: archives, their L3 summaries, sections of memory.md, L1 sessions (when shared), and an
index merged by the driver. :func:`take_in` makes the store's own state agree with them:

- a clone that never ran ``memkeeper share`` gets the merge driver registered (its next pull
  merges the memory; the pre-commit check still needs ``memkeeper share``);
- a file sharing never commits (runtime state, ``config.json``) that a forced commit brought
  is set aside (:func:`set_aside_unshared`): from others comes memory, never state or settings;
- the files git wrote are made private (0600) as the store's own are;
- an archive on disk that the index does not list gets its entry (pending summary);
- an entry flagged generated whose summary did not arrive is pending again (the summary job
  makes it), not an error; a summary that arrived for a pending entry is adopted;
- an L1 session made on another machine (a file with no flush position whose session this
  machine never ran) is marked flushed to its end: its sections were flushed where it was
  made and came with memory.md; flushing it again here would double them.

The search index needs nothing: its freshness marks (size and time of each file) see the
files git wrote. Cheap when there is nothing to do and a no-op in a store that is not shared
(one small read). Stdlib only.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from ..sharing.marks import is_shared, sessions_shared
from ..store.paths import StorePaths

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _summary_ok(path: str) -> bool:
    from ..store.atomic import open_read

    try:
        with open_read(path) as handle:
            return isinstance(json.loads(handle.read().decode("utf-8")), dict)
    except (OSError, ValueError, RecursionError):
        return False


def _set_aside_file(paths: StorePaths, name: str) -> None:
    """Move the store file ``name`` (a plain name) into ``.set-aside/``, if it is there."""
    source = os.path.join(paths.root, name)
    if os.path.islink(source) or not os.path.isfile(source):
        return
    os.makedirs(os.path.join(paths.root, SET_ASIDE), mode=0o700, exist_ok=True)
    os.replace(source, os.path.join(paths.root, SET_ASIDE, name))


def _resized(paths: StorePaths, entry: dict[str, Any]) -> bool:
    """Set the entry's size from its archive on disk; True when it was not that size."""
    from ..basics.tokens import tokens_for_bytes

    archive = entry.get("file")
    try:
        size = os.stat(os.path.join(paths.root, str(archive))).st_size
    except (OSError, ValueError):
        return False
    if entry.get("bytes") == size:
        return False
    entry["bytes"] = size
    entry["tokens"] = tokens_for_bytes(size)
    return True


def summary_flags(paths: StorePaths) -> list[str]:
    """Each entry's size and summary flag set from the files on disk; the archives now pending."""
    from ..store.index_entries import (
        mark_generated,
        mark_pending,
        rotated_files,
        summary_error,
        summary_file,
        summary_generated,
    )
    from ..store.memory_index import update_index

    def change(index: dict[str, Any]) -> list[str]:
        pending = []
        for entry in rotated_files(index):
            name = summary_file(entry)
            if not name or os.sep in name or "/" in name:
                continue
            stale = _resized(paths, entry)
            if stale:  # the archive was merged (two of one name): its summary is made again
                entry.pop("summaryError", None)
                _set_aside_file(paths, name)
            ok = _summary_ok(os.path.join(paths.root, name))
            if summary_generated(entry) and not ok or stale:
                mark_pending(entry)
                pending.append(str(entry.get("file")))
            elif not summary_generated(entry) and ok and not summary_error(entry):
                mark_generated(entry)
        return pending

    return update_index(paths, change)


def foreign_sessions(paths: StorePaths) -> list[str]:
    """L1 files made on another machine, marked flushed to their end (see the module docstring).

    Only when the sessions are shared. A session of this machine is one its hooks noted
    (``.state/live-sessions.json``, kept three days): a local L1 file left unflushed longer
    than that, in a store sharing its sessions, is taken for another machine's."""
    from ..capture.live_sessions import read_sessions
    from ..store.lock import reentrant_lock
    from ..store.names import l1_session
    from . import flush_positions

    with reentrant_lock(paths.lock):
        positions = flush_positions.load(paths) if sessions_shared(paths) else None
        if positions is None:
            return []  # the first flush here starts from the index's watermark (flush_positions.initial)
        local = {session[:8] for session in read_sessions(paths)}
        marked = []
        for path in flush_positions._l1_paths(paths):
            key = flush_positions.file_key(path)
            if key in positions or (l1_session(key) or "") in local:
                continue
            positions[key] = flush_positions._content_size(path)
            marked.append(key)
        if marked:
            flush_positions.save(paths, positions)
        return marked


def private_modes(paths: StorePaths) -> list[str]:
    """The store's files git wrote (with the umask's mode, 0644 mostly) made 0600 again, as the
    store writes its own; a link is never followed (left to the store's link checks)."""
    import stat

    from ..store.boundary import lstat_entries
    from ..store.layout import FILE_MODE

    changed = []
    for folder in (str(paths.root), str(paths.sessions)):
        for name, path, status in lstat_entries(folder):
            if stat.S_ISREG(status.st_mode) and stat.S_IMODE(status.st_mode) & 0o077:
                try:
                    os.chmod(path, FILE_MODE)
                except OSError:
                    continue
                changed.append(name)
    return changed


SIGNATURE = "pulled.json"
#: Two machines rotating apart make the newest archives; only these are compared, and only
#: when one of them changed since the last look (``.state/archives-seen.json``).
NEWEST_ARCHIVES = 4
ARCHIVES_SEEN = "archives-seen.json"
SET_ASIDE = ".set-aside"


def _signature(paths: StorePaths) -> list[list[int]]:
    found = []
    for name in ("memory.md", "memory-index.json", ".gitattributes", ".gitignore", "sessions"):
        try:
            info = os.stat(os.path.join(paths.root, name))
            found.append([info.st_size, info.st_mtime_ns])
        except OSError:
            found.append([])
    return found


def set_aside_unshared(paths: StorePaths) -> list[str]:
    """Files of the store git tracks that sharing never commits, moved out of the way.

    Only a commit that forced them past the store's ``.gitignore`` puts them there: runtime
    state (``.state/``, the search index, ...), ``config.json`` (it may name a command to run).
    What comes from others is memory, never state or settings, so each is moved to
    ``.set-aside/<name>`` (git then shows it deleted: commit that) and this machine goes on
    with its own. L1 sessions are memory and stay (shared before sharing them was turned off).
    """
    from ..sharing.share import ShareError, git
    from ..store.gitignore import is_committed

    try:
        listed = git(paths.root, "ls-files", "-z", "--full-name", "--", ".").stdout
        top = git(paths.root, "rev-parse", "--show-prefix").stdout.decode("utf-8").strip()
    except ShareError:
        return []
    moved = []
    for raw in listed.split(b"\0"):
        rel = raw.decode("utf-8", "surrogateescape")[len(top) :]
        if not rel or is_committed(rel, sessions=True):
            continue  # memory (L1 sessions too: shared before, or by another clone's choice)
        source = os.path.join(paths.root, *rel.split("/"))
        if os.path.islink(source) or not os.path.isfile(source):
            continue
        os.makedirs(os.path.join(paths.root, SET_ASIDE), mode=0o700, exist_ok=True)
        os.replace(source, os.path.join(paths.root, SET_ASIDE, rel.replace("/", "__")))
        moved.append(rel)
    return moved


def _shared_head(earlier: bytes, later: bytes) -> int:
    """How many leading bytes of ``later`` repeat ``earlier``'s start as whole sections: up to a
    ``## `` line that both have at that offset, with at least one ``## `` line before it; 0 if
    none, or if all of ``later`` would go."""
    common = len(os.path.commonprefix([earlier, later]))
    if common == len(later):
        return 0
    best, offset, headers = 0, 0, 0
    for line in later.split(b"\n"):
        if offset > common:
            break
        if line.startswith(b"## "):
            if headers and earlier.startswith(b"## ", offset):
                best = offset
            headers += 1
        offset += len(line) + 1
    return best


def dedupe_archives(paths: StorePaths) -> list[str]:
    """Two machines that rotated while apart archived the same older sections twice: both
    archives start with what memory.md held when they parted. A later archive (by name) that
    starts with the same whole sections as an earlier one keeps only what follows them (the
    earlier archive keeps them). Every machine cuts the same bytes, so their commits agree;
    the next step sets the entry's size and makes its summary again. Only the
    :data:`NEWEST_ARCHIVES` newest archives are read, and only when one of them changed."""
    from ..store.atomic import atomic_write_bytes, atomic_write_json, open_read
    from ..store.memory_index import list_archives

    newest = list_archives(paths)[-NEWEST_ARCHIVES:]
    mark = os.path.join(paths.state, ARCHIVES_SEEN)
    if _last_look(mark) == _sizes(paths, newest):
        return []  # the newest archives are as they were at the last look
    cut = []
    seen: list[bytes] = []
    for name in newest:
        path = os.path.join(paths.root, name)
        try:
            with open_read(path) as handle:  # never through a link
                data = handle.read()
        except (OSError, ValueError):
            continue
        shared = max((_shared_head(earlier, data) for earlier in seen), default=0)
        if shared:
            data = data[shared:]
            atomic_write_bytes(path, data, redact=False)
            cut.append(name)
        seen.append(data)
    atomic_write_json(mark, _sizes(paths, newest), durable=False)
    return cut


def _sizes(paths: StorePaths, names: list[str]) -> list[list[Any]]:
    found: list[list[Any]] = []
    for name in names:
        try:
            found.append([name, os.stat(os.path.join(paths.root, name)).st_size])
        except OSError:
            found.append([name])
    return found


def take_in(
    paths: StorePaths, timeout: float = 30.0, guard: Callable[[], None] | None = None
) -> dict[str, list[str]]:
    """Make the store's state agree with what a pull brought (nothing when not shared).

    Looks only when memory.md, the index, the store's git files or the sessions folder changed
    since the last look (a pull changes them; so does a flush, which costs one look after it):
    a few ``stat`` calls otherwise. Waits at most ``timeout`` seconds for the store lock
    (LockTimeout past it: a hook passes a short one, and the next command takes it in).
    ``guard`` runs before a look (it raises to stop there): a hook that checked only the
    store entries it uses for links checks the rest then."""
    if not is_shared(paths) or not paths.root.is_dir():
        return {}
    mark = os.path.join(paths.state, SIGNATURE)
    if _signature(paths) == _last_look(mark):
        return {}
    if guard is not None:
        guard()
    from ..store.atomic import atomic_write_json
    from ..store.lock import reentrant_lock
    from ..store.paths import ensure_store
    from .rotation import reconcile_archives

    ensure_store(paths)  # a fresh clone has no .state/ yet
    with reentrant_lock(paths.lock, timeout=timeout):
        from ..sharing.share import ensure_driver

        found = {
            "driver": ["registered"] if ensure_driver(paths.project) else [],
            "setAside": set_aside_unshared(paths),
            "private": private_modes(paths),
            "archives": reconcile_archives(paths),
            "deduplicated": dedupe_archives(paths),
            "pending": summary_flags(paths),
            "foreignSessions": foreign_sessions(paths),
        }
        atomic_write_json(mark, _signature(paths), durable=False)
        return found


def _last_look(mark: str) -> Any:
    try:
        with open(mark, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError, RecursionError):
        return None
