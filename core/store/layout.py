"""The store's layout as plain strings: names, modes, project resolution, folder creation.

Stdlib ``os`` only, no ``pathlib``: the hooks and ``memkeeper check`` run on every tool
call and importing pathlib alone costs more than the rest of them. :mod:`memkeeper.core.store.paths`
builds the ``Path`` API on top of these names, so both always agree.
"""

from __future__ import annotations

import os
import stat

from ..basics.platform import HAS_FILE_MODES

MEMORY_SUBDIR = (".claude", "memory")
MEMORY_FILE = "memory.md"
INDEX_FILE = "memory-index.json"
CONFIG_FILE = "config.json"
LOCK_FILE = ".memkeeper.lock"
#: The store's own: its text and its one writer are in :mod:`memkeeper.core.store.gitignore`.
GITIGNORE = ".gitignore"
STATE_DIR = ".state"
SESSIONS_DIR = "sessions"
LOGS_DIR = "logs"
COUNTERS_FILE = "counters.json"
COUNTERS_LOCK = "counters.lock"
#: Files loaded at session start and written by ``memory-set``.
NAMED_MEMORY_FILES = {
    "project": "project.md",
    "architecture": "architecture.md",
    "conventions": "conventions.md",
}
SEARCH_DB = ".search.sqlite3"
#: Each summarizer backend's health (in .state): see :mod:`memkeeper.core.summarizers.health`.
BACKEND_HEALTH_FILE = "backend-health.json"
#: Runtime state made elsewhere, set aside (never read again): see :mod:`memkeeper.core.store.state_stamp`.
SET_ASIDE_DIR = ".set-aside"
#: Scratch file of a bulk build: tables of the index written by a second process (core/search/side.py).
SIDE_SCRATCH = "search-side.sqlite3"
#: Folders every store has (created 0700 by ensure_dirs).
STORE_DIRS = (SESSIONS_DIR, LOGS_DIR, STATE_DIR)
DIR_MODE = 0o700
FILE_MODE = 0o600
#: The multi-step operations that keep an intent record while under way (see
#: :mod:`memkeeper.core.store.intents`, which finishes an interrupted one).
INTENT_KINDS = ("rotation", "migration", "restore")


def intent_path(root: str, kind: str) -> str:
    """The intent record of ``kind`` in the store folder ``root``: ``.state/intent-<kind>.json``."""
    return os.path.join(root, STATE_DIR, f"intent-{kind}.json")


def pending_intents(root: str) -> list[str]:
    """The kinds with an intent on disk in the store folder ``root`` (one ``stat`` each).

    Every hook asks this first, so it lives here and not in :mod:`~memkeeper.core.store.intents`,
    which a hook imports only when there is something to finish.
    """
    return [kind for kind in INTENT_KINDS if os.path.exists(intent_path(root, kind))]


def project_dir(
    explicit: str | os.PathLike[str] | None = None,
    hook_cwd: str | None = None,
    env: dict[str, str] | os._Environ[str] | None = None,
) -> str:
    """The project, absolute; the one resolver of hooks, CLI, TUI and MCP. It never walks up.

    1. ``explicit`` (``--project``);
    2. a hook's ``cwd`` (absolute only): it follows ``cd`` and worktrees, where
       ``CLAUDE_PROJECT_DIR`` stays where the session started. A ``cd`` into a subfolder of
       that project keeps the project's store, unless the subfolder has a store of its own;
    3. ``CLAUDE_PROJECT_DIR``;
    4. the current directory.
    """
    environ = os.environ if env is None else env
    if explicit:
        return _absolute(explicit)
    started = environ.get("CLAUDE_PROJECT_DIR") or ""
    if isinstance(hook_cwd, str) and os.path.isabs(hook_cwd):
        cwd = os.path.normpath(hook_cwd)
        if (
            started
            and os.path.isabs(started)
            and _inside(cwd, started)
            and not os.path.isdir(store_root(cwd))
        ):
            return os.path.normpath(started)
        return cwd
    if started:
        return _absolute(started)
    return os.getcwd()


def _absolute(path: str | os.PathLike[str]) -> str:
    expanded = os.path.expanduser(os.fspath(path))
    return expanded if os.path.isabs(expanded) else os.path.join(os.getcwd(), expanded)


def _inside(child: str, parent: str) -> bool:
    child, parent = os.path.normpath(child), os.path.normpath(parent)
    return child != parent and child.startswith(parent.rstrip(os.sep) + os.sep)


def store_root(project: str) -> str:
    return os.path.join(project, *MEMORY_SUBDIR)


def ensure_dirs(root: str) -> bool:
    """Create the store root and its folders (0700); existing files are left alone. True when
    this call made ``.state``: the caller then stamps it as made here, by this user
    (:func:`memkeeper.core.store.state_stamp.mark_made_here`, as
    :func:`memkeeper.core.store.paths.ensure_store` does), or the next entry point sets it aside.

    Raises StoreLinkError if the root or one of its folders is a symbolic link: a folder
    is never created, or chmod-ed, through one.
    """
    from .boundary import check_claude, check_path

    check_claude(root)  # (the fast path below looks at the root only from .claude down)
    made_state = False
    for folder in (root, *(os.path.join(root, name) for name in STORE_DIRS)):
        if _private_folder(folder):
            continue  # the common case on every hook: one lstat, nothing to make or chmod
        check_path(folder)
        made = not os.path.lexists(folder)
        os.makedirs(folder, mode=DIR_MODE, exist_ok=True)
        try:
            os.chmod(folder, DIR_MODE)  # checked just above: not a link
        except OSError:
            pass
        if made and folder.endswith(os.sep + STATE_DIR):
            made_state = True  # made here, by this user: the caller stamps it as such
    return made_state


def _private_folder(path: str) -> bool:
    """True when ``path`` is already a real folder (not a link) of mode 0700.

    :func:`ensure_dirs` asks this for the root first and then for its folders, so a True
    for each says what :func:`~memkeeper.core.store.boundary.check_path` would: no link from the
    store root down.
    """
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) and (stat.S_IMODE(mode) == DIR_MODE or not HAS_FILE_MODES)
