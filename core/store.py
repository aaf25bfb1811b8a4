"""Where things are: project resolution, the store's paths, creating it privately.

The project comes from an explicit ``--project``, then ``CLAUDE_PROJECT_DIR``, then
the hook's ``cwd``, then the current directory. It never walks up the tree, so a
project without ``.claude/`` can never land on ``$HOME/.claude``.
"""

from __future__ import annotations

import os
from pathlib import Path

from memkeeper.core.layout import (
    CONFIG_FILE,
    COUNTERS_FILE,
    DIR_MODE,
    FILE_MODE,
    INDEX_FILE,
    LOCK_FILE,
    LOGS_DIR,
    MEMORY_FILE,
    MEMORY_SUBDIR,
    SEARCH_DB,
    SESSIONS_DIR,
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
    "ensure_store",
    "is_safe_basename",
    "paths_for",
    "resolve_project",
]

#: Files loaded at session start and written by ``memory-set``.
NAMED_MEMORY_FILES = {
    "project": "project.md",
    "architecture": "architecture.md",
    "conventions": "conventions.md",
}


def resolve_project(
    explicit: str | os.PathLike[str] | None = None,
    hook_cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> Path:
    """Return the project directory: explicit > CLAUDE_PROJECT_DIR > hook cwd > cwd."""
    return Path(project_dir(explicit, hook_cwd, env))


class StorePaths:
    """Every path of one project's memory store, derived from the project directory.

    Immutable and hashable. A plain class rather than a dataclass: importing
    ``dataclasses`` costs the hook path ~9 ms (it pulls in ``inspect``).
    """

    __slots__ = ("_project",)

    def __init__(self, project: Path) -> None:
        self._project = Path(project)

    @property
    def project(self) -> Path:
        return self._project

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StorePaths) and other._project == self._project

    def __hash__(self) -> int:
        return hash(("StorePaths", self._project))

    def __repr__(self) -> str:
        return f"StorePaths(project={self._project!r})"

    @property
    def root(self) -> Path:
        return self.project.joinpath(*MEMORY_SUBDIR)

    @property
    def memory(self) -> Path:
        return self.root / MEMORY_FILE

    @property
    def index(self) -> Path:
        return self.root / INDEX_FILE

    @property
    def config(self) -> Path:
        return self.root / CONFIG_FILE

    @property
    def lock(self) -> Path:
        return self.root / LOCK_FILE

    @property
    def counters(self) -> Path:
        return self.state / COUNTERS_FILE

    @property
    def sessions(self) -> Path:
        return self.root / SESSIONS_DIR

    @property
    def logs(self) -> Path:
        return self.root / LOGS_DIR

    @property
    def state(self) -> Path:
        """Private working state of memkeeper (job locks, offsets, budget log)."""
        return self.root / STATE_DIR

    @property
    def trash(self) -> Path:
        return self.root / ".trash"

    @property
    def backups(self) -> Path:
        return self.root / ".backups"

    @property
    def search_db(self) -> Path:
        return self.root / SEARCH_DB

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


def paths_for(project: str | os.PathLike[str] | None = None, hook_cwd: str | None = None) -> StorePaths:
    return StorePaths(resolve_project(project, hook_cwd))


def ensure_store(paths: StorePaths) -> None:
    """Create the store's folders (0700). Existing files are left alone."""
    ensure_dirs(str(paths.root))
