"""What every doctor check shares: the finding, the run's context, the backup, small readers.

A check is one invariant of the store: :meth:`Check.diagnose` only reads and returns the
findings; :meth:`Check.repair` fixes them under the store lock, copying first whatever it
replaces into the run's :class:`Backup`. Stdlib only.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..basics.timestamps import file_stamp
from ..store.atomic import atomic_write_bytes
from ..store.index_entries import listed_files
from ..store.paths import DIR_MODE, FILE_MODE, StorePaths

#: Folders inside the store that hold copies, not live data: never parsed or repaired (``.set-aside``:
#: runtime state made elsewhere, see :mod:`memkeeper.core.store.state_stamp`).
SKIPPED_DIRS = (".backups", ".trash", ".set-aside")
#: A temp file from an atomic write older than this belongs to a writer that died.
TEMP_STALE_SECONDS = 60.0

Severity = Literal["error", "warning", "note"]
ERROR: Severity = "error"
WARNING: Severity = "warning"
#: Hygiene that does not make the store unhealthy (file modes): shown, fixable, exit 0.
NOTE: Severity = "note"


@dataclass
class Finding:
    """One problem found in the store, and whether a repair fixed it."""

    severity: Severity  # "error" (data at risk or wrong), "warning" (hygiene), "note" (harmless)
    code: str  # stable identifier, e.g. "index-missing-entry"
    message: str  # one line in plain words
    path: str | None = None
    repaired: bool = False
    fixable: bool = True  # False for report-only findings (repair leaves them)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def rel(paths: StorePaths, path: Path) -> str:
    try:
        return str(path.relative_to(paths.root))
    except ValueError:
        return str(path)


class Backup:
    """Copies files into one ``.backups/doctor-<UTC>/`` folder before they are changed."""

    def __init__(self, paths: StorePaths) -> None:
        self.paths = paths
        self.folder = paths.backups / f"doctor-{file_stamp(micros=True)}"

    def _target(self, path: Path) -> Path:
        target = self.folder / rel(self.paths, path)
        n = 1
        while target.exists():
            target = target.with_name(f"{target.name}.{n}")
            n += 1
        self.paths.backups.mkdir(mode=DIR_MODE, exist_ok=True)
        os.chmod(self.paths.backups, DIR_MODE)
        target.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        return target

    def copy(self, path: Path) -> Path:
        target = self._target(path)
        atomic_write_bytes(target, path.read_bytes())
        return target

    def move(self, path: Path) -> Path:
        target = self._target(path)
        os.replace(path, target)
        os.chmod(target, FILE_MODE)
        return target

    def secure(self) -> None:
        """New backup folders get the same care as the rest of the store."""
        if self.folder.exists():
            for folder, _dirs, files in os.walk(self.folder):
                os.chmod(folder, DIR_MODE)
                for name in files:
                    os.chmod(Path(folder) / name, FILE_MODE)


@dataclass
class Context:
    """One doctor run: the store, how old a leftover must be, and (repairing) the backup."""

    paths: StorePaths
    stale_seconds: float = TEMP_STALE_SECONDS
    holding_lock: bool = False
    now: float = field(default_factory=time.time)
    backup: Backup | None = None

    def backed_up(self) -> Backup:
        if self.backup is None:
            self.backup = Backup(self.paths)
        return self.backup

    def age(self, path: Path) -> float:
        try:
            return self.now - path.stat().st_mtime
        except FileNotFoundError:
            return 0.0


class Check:
    """One invariant of the store. Subclasses set ``codes`` and implement both methods."""

    #: The finding codes this check can report.
    codes: ClassVar[tuple[str, ...]] = ()

    def diagnose(self, ctx: Context) -> list[Finding]:
        raise NotImplementedError

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        """Fix ``findings`` (this check's, fresh from :meth:`diagnose`); default: report only."""


def lock_held(path: Path) -> bool:
    """Whether another process holds the lock at ``path`` right now. A lock that cannot be
    opened for writing (a read-only store) is not held: nothing can be changing that store."""
    import errno

    from ..store.lock import is_locked

    try:
        return is_locked(path)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return False
        raise


def writable(paths: StorePaths) -> bool:
    """Whether this process can write the store (its folder and, where there is one, its lock)."""
    lock = os.fspath(paths.lock)
    return os.access(paths.root, os.W_OK) and (not os.path.lexists(lock) or os.access(lock, os.W_OK))


def load_json(path: Path) -> Any:
    """Parse a JSON file; a nesting too deep for the parser is a ValueError like any corruption."""
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except RecursionError:
        raise ValueError(f"{path.name} is nested too deep") from None


def raw_index(paths: StorePaths) -> tuple[dict[str, Any] | None, str | None]:
    """(index, problem): the index as it is on disk, without any recovery."""
    try:
        data = load_json(paths.index)
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return None, f"does not parse ({type(exc).__name__})"
    if not isinstance(data, dict) or not isinstance(data.get("rotatedFiles", []), list):
        return None, "is not an index object"
    return data, None


def listed_archives(paths: StorePaths) -> set[str]:
    index, _problem = raw_index(paths)

    return listed_files(index or {})


def is_skipped(paths: StorePaths, path: Path) -> bool:
    try:
        first = path.relative_to(paths.root).parts[0]
    except (ValueError, IndexError):
        return False
    return first in SKIPPED_DIRS


def store_files(paths: StorePaths, with_copies: bool = False) -> list[Path]:
    """Every path inside the store (no symlinks followed); the backup and trash copies only
    when ``with_copies`` (their privacy matters, their content is not checked)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(paths.root):
        here = Path(folder)
        if not with_copies:
            dirs[:] = [d for d in dirs if not is_skipped(paths, here / d)]
        found.extend(here / d for d in dirs)
        found.extend(here / f for f in files)
    return found
