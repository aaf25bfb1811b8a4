"""A store made elsewhere is content, not state: runtime state is trusted only if this user on this
machine made it.

Memory files that arrive by git clone, copy or archive are kept and used. The runtime state that
comes with them — ``.state/`` (locks, counters, job records, recall state, intents), ``logs/`` and
the search index — is not: it is trusted only when ``.state/stamp`` says it was made by this user,
on this machine, for this very store folder (:func:`stamp_text`: the user, the host name and the
store folder's inode number, which a clone, a copy or an unpacked archive never keeps). Anything
else — another stamp, or none — is set aside (moved, never deleted, into a dated folder of
``.set-aside/`` the store never reads) and made again: the index is rebuilt by the next search.

On that first use the store's modes are repaired too (git gives 0644 / 0755; the store's are 0600
/ 0700), the store gets its ``.gitignore`` if it has none (:mod:`memkeeper.core.store.gitignore`:
memory is committable; runtime state never is), and what was done is kept in
``.state/adopted.json`` for ``doctor`` to say.

Called by every entry point before it uses a store (:func:`adopt`): the hooks, and through
:func:`memkeeper.core.store.paths.guard` every command, job, the TUI and the MCP server. A store whose
state is its own costs one ``lstat`` and one small read. Stdlib ``os`` only: the hook path imports it.
"""

from __future__ import annotations

import os
import stat

from ..basics import platform
from .layout import DIR_MODE, FILE_MODE, GITIGNORE, LOGS_DIR, SEARCH_DB, SET_ASIDE_DIR, STATE_DIR

STAMP_FILE = "stamp"
ADOPTED_FILE = "adopted.json"
ADOPT_LOCK = ".memkeeper-adopt.lock"
#: What a store keeps of this machine's runtime, set aside when another made it.
RUNTIME_NAMES = (STATE_DIR, LOGS_DIR, SEARCH_DB, SEARCH_DB + "-wal", SEARCH_DB + "-shm")
#: The longest an entry point waits for another process adopting the same store.
ADOPT_WAIT = 1.0


def stamp_text(root: str) -> bytes:
    """The stamp this user, on this machine, writes with the state of the store folder ``root``."""
    return f"memkeeper-state 1 {platform.user_and_machine()} {os.lstat(root).st_ino}\n".encode()


def trusted(root: str) -> bool:
    """True when the state in ``root`` was made here: its stamp is this user's, this machine's, this folder's."""
    folder = os.path.join(root, STATE_DIR)
    path = os.path.join(folder, STAMP_FILE)
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False  # (a link: never read through)
        fd = platform.open_no_follow(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        return os.read(fd, 512) == stamp_text(root)
    except OSError:
        return False
    finally:
        os.close(fd)


def write_stamp(root: str) -> None:
    """Mark the state of ``root`` as made here (when this process made ``.state``, or adopted it)."""
    from .atomic import atomic_write_bytes

    atomic_write_bytes(
        os.path.join(root, STATE_DIR, STAMP_FILE), stamp_text(root), durable=False, redact=False
    )


def mark_made_here(root: str) -> None:
    """A store's runtime state made by this process: stamp it, and give the store its ``.gitignore``
    if it has none (called when ``.state`` is made, and after an adoption)."""
    if not os.path.lexists(os.path.join(root, GITIGNORE)):
        from .gitignore import write_gitignore

        write_gitignore(root, "private")
    write_stamp(root)


def adopt(root: str, timeout: float = ADOPT_WAIT) -> dict[str, object] | None:
    """Make the store at ``root`` this machine's, unless it is already (None then; None too when
    there is no store folder, or a link stands where its runtime state would: the store is refused
    by the caller's link check, with one line naming it): set aside runtime state made elsewhere, repair modes, add the
    ``.gitignore``, stamp. Returns what was done.

    Raises StoreLinkError for a link at ``.claude`` or the store folder, LockTimeout when another
    process has been adopting it for longer than ``timeout``.
    """
    from .boundary import check_claude

    check_claude(root)  # (before anything is read: a link at .claude is never gone through)
    try:
        if not stat.S_ISDIR(os.lstat(root).st_mode):
            return None  # no store
    except OSError:
        return None
    if trusted(root):
        return None
    from .lock import file_lock

    if any(os.path.islink(os.path.join(root, name)) for name in RUNTIME_NAMES):
        return None  # a link among them: left where it is, for the caller's link check to refuse
    with file_lock(os.path.join(root, ADOPT_LOCK), timeout=timeout):
        if trusted(root):
            return None  # adopted meanwhile, by another process
        return _adopt_locked(root)


def _adopt_locked(root: str) -> dict[str, object]:
    from ..basics.timestamps import iso_now
    from .atomic import atomic_write_json
    from .layout import ensure_dirs

    had_gitignore = os.path.lexists(os.path.join(root, GITIGNORE))
    moved, aside = _set_aside(root)
    ensure_dirs(root)  # (the .state it makes is stamped below, once adopted.json is written)
    done: dict[str, object] = {"at": iso_now(), "setAside": moved, "modesRepaired": _repair_modes(root)}
    if moved:
        done["folder"] = os.path.relpath(aside, root)
    if not had_gitignore:
        done["gitignore"] = True
    atomic_write_json(os.path.join(root, STATE_DIR, ADOPTED_FILE), done, durable=False)
    mark_made_here(root)
    return done


def _set_aside(root: str) -> tuple[list[str], str]:
    """Move the runtime state in ``root`` (what it holds, links included, is never followed) into a new dated folder of ``.set-aside/``; the names moved and that folder."""
    import time

    present = [name for name in RUNTIME_NAMES if os.path.lexists(os.path.join(root, name))]
    if not present:
        return [], ""
    base = os.path.join(root, SET_ASIDE_DIR)
    os.makedirs(base, mode=DIR_MODE, exist_ok=True)
    aside = os.path.join(base, time.strftime("%Y%m%d_%H%M%S") + "-" + os.urandom(3).hex())
    os.mkdir(aside, DIR_MODE)
    for name in present:
        os.rename(os.path.join(root, name), os.path.join(aside, name))
    return present, aside


def _repair_modes(root: str) -> int:
    """Narrow the modes of the store's files to 0600 and folders to 0700 (never through a link);
    how many were repaired."""
    if not platform.HAS_FILE_MODES:
        return 0
    repaired = 0
    for folder, dirs, files in os.walk(root):  # (.set-aside too: its privacy matters as much)
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            try:
                info = os.lstat(name)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue
            want = DIR_MODE if stat.S_ISDIR(info.st_mode) else FILE_MODE
            if stat.S_IMODE(info.st_mode) & ~want:
                try:
                    os.chmod(name, want)  # (lstat'ed just above: not a link)
                    repaired += 1
                except OSError:
                    pass
    return repaired
