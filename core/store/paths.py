"""Where things are: project resolution, the store's paths, creating it privately.

The project comes from :func:`memkeeper.core.store.layout.project_dir` (an explicit ``--project``, then
a hook's ``cwd``, then ``CLAUDE_PROJECT_DIR``, then the current directory). It never walks up the
tree, so a project without ``.claude/`` can never land on ``$HOME/.claude``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .layout import (
    CONFIG_FILE,
    COUNTERS_FILE,
    DIR_MODE,
    FILE_MODE,
    INDEX_FILE,
    LOCK_FILE,
    LOGS_DIR,
    MEMORY_FILE,
    MEMORY_SUBDIR,
    NAMED_MEMORY_FILES,
    SEARCH_DB,
    SESSIONS_DIR,
    SIDE_SCRATCH,
    STATE_DIR,
    ensure_dirs,
    project_dir,
)

__all__ = [
    "CONFIG_FILE",
    "COUNTERS_FILE",
    "DIR_MODE",
    "FILE_MODE",
    "INDEX_FILE",
    "LOCK_FILE",
    "MEMORY_FILE",
    "MEMORY_SUBDIR",
    "NAMED_MEMORY_FILES",
    "SEARCH_DB",
    "StorePaths",
    "StoreRefused",
    "ensure_store",
    "guard",
    "is_safe_basename",
    "paths_for",
    "resolve_project",
]


def resolve_project(
    explicit: str | os.PathLike[str] | None = None,
    hook_cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> Path:
    """The project directory, as :func:`memkeeper.core.store.layout.project_dir` resolves it."""
    return Path(project_dir(explicit, hook_cwd, env))


class _StorePath:
    """A file or folder of the store, read as an attribute: ``<root or state>/<name>``."""

    __slots__ = ("name", "under")

    def __init__(self, name: str, under: str = "root") -> None:
        self.name = name
        self.under = under

    def __get__(self, paths: StorePaths, owner: type | None = None) -> Path:
        folder: Path = getattr(paths, self.under)
        return folder / self.name


@dataclass(frozen=True, slots=True)
class StorePaths:
    """Every path of one project's memory store, derived from the project directory (immutable, hashable)."""

    project: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "project", Path(self.project))  # a str is taken too

    @property
    def root(self) -> Path:
        return self.project.joinpath(*MEMORY_SUBDIR)

    memory = _StorePath(MEMORY_FILE)
    index = _StorePath(INDEX_FILE)
    config = _StorePath(CONFIG_FILE)
    lock = _StorePath(LOCK_FILE)
    sessions = _StorePath(SESSIONS_DIR)
    logs = _StorePath(LOGS_DIR)
    #: Private working state of memkeeper (job locks, offsets, budget log).
    state = _StorePath(STATE_DIR)
    counters = _StorePath(COUNTERS_FILE, under="state")
    trash = _StorePath(".trash")
    backups = _StorePath(".backups")
    search_db = _StorePath(SEARCH_DB)
    #: Tables of a bulk build written by a helper process, then taken into ``search_db``.
    side_scratch = _StorePath(SIDE_SCRATCH, under="state")

    def archive(self, name: str) -> Path:
        """Path of an archive or summary by basename; refuses anything outside the store."""
        if not is_safe_basename(name):
            raise ValueError(f"refusing a file name outside the memory folder: {name!r}")
        return self.root / name

    def named(self, name: str) -> Path:
        """Path of project.md / architecture.md / conventions.md by short name."""
        try:
            return self.root / NAMED_MEMORY_FILES[name]
        except KeyError:
            allowed = ", ".join(NAMED_MEMORY_FILES)
            raise ValueError(f"unknown memory file {name!r} (allowed: {allowed})") from None

    def exists(self) -> bool:
        return self.root.is_dir()


def is_safe_basename(name: str) -> bool:
    """True for a plain file name inside one folder: no separators, no NUL, not ``.``/``..``."""
    return (
        bool(name)
        and name == os.path.basename(name)
        and "\\" not in name
        and "\x00" not in name
        and name not in (".", "..")
    )


class StoreRefused(ValueError):
    """No store may be made or used for this project folder (see :func:`guard`)."""


def paths_for(
    project: str | os.PathLike[str] | None = None,
    hook_cwd: str | None = None,
    check: bool = True,
    listing: bool = True,
) -> StorePaths:
    """The store of ``project``, guarded (see :func:`guard`, ``listing`` as there) unless ``check``
    is False (``doctor``, which reports what the guard refuses)."""
    paths = StorePaths(resolve_project(project, hook_cwd))
    if check:
        guard(paths, listing=listing)
    return paths


def guard(paths: StorePaths, folders: tuple[str, ...] | None = None, *, listing: bool = True) -> None:
    """Refuse a project folder that must not hold a store (the file-system root, the home
    folder, a folder inside ``~/.claude``: StoreRefused), set aside runtime state another user
    or machine made (:func:`memkeeper.core.store.state_stamp.adopt`), and refuse a store holding a symbolic
    link anywhere (or, with ``folders``, among the root's entries and those folders':
    StoreLinkError). Each with one line that says what to do.

    Without ``listing`` (for a reader that opens each file without following links, as the
    search does: ``atomic.open_read``), only the store folder, the folders it reads
    and the index are checked, not every file: the cost stays the same at any store size.
    """
    from .boundary import check_path, refuse_links, refused_project
    from .state_stamp import adopt

    reason = refused_project(paths.project)
    if reason:
        raise StoreRefused(
            f"no memory store is kept in {paths.project}: it is {reason}; run this in a project folder"
        )
    adopt(os.fspath(paths.root))  # runtime state made elsewhere is set aside before anything uses it
    if listing:
        refuse_links(paths.root, folders)
        return
    db = os.fspath(paths.search_db)
    for path in (paths.sessions, paths.state, db, db + "-wal", db + "-shm"):
        check_path(path)  # from the store folder down: the folder itself too


def ensure_store(paths: StorePaths) -> None:
    """Create the store's folders (0700), the ``.state`` it makes stamped as made here. Existing
    files are left alone."""
    root = str(paths.root)
    if ensure_dirs(root):
        from .state_stamp import mark_made_here

        mark_made_here(root)
