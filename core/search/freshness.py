"""What changed in the store since the index was last brought up to date.

The marks recorded in the index's ``meta`` (the sessions folder's time, the store
folder's names, memory.md's and the named files' stats, how far the change journal was
read) tell in a few stats whether anything can have changed; only then is a folder
listed or a file stat'ed. See :class:`Planner`.
"""

from __future__ import annotations

import os
import stat
import time
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..store import changes
from ..store.layout import SESSIONS_DIR, STATE_DIR
from ..store.names import is_l1, l1_kind
from ..store.paths import MEMORY_FILE, NAMED_MEMORY_FILES, StorePaths
from .sources import SourceFile, discover

if TYPE_CHECKING:
    import sqlite3

MIN_GARBAGE_BYTES = 64 << 20
#: Below this many indexed files every refresh checks every file (a few ms).
SMALL_STORE_FILES = 1000
#: A large store's full check (every file's size and time) runs this often, in the background.
FULL_CHECK_SECONDS = 600


# -- what changed ---------------------------------------------------------------------------

#: Folder times newer than this (relative to the listing) are not trusted: a file added in the
#: same clock tick as the listing would leave the time unchanged (git's "racy" entries).
RACY_NS = 2_000_000_000
ROW_COLUMNS = (
    "id, rel, tier, kind, size, mtime_ns, offset, next_line, open_tail, head_fp, tail_fp, bytes, inode"
)


class Row(NamedTuple):
    """A file as the index last saw it (a ``sources`` row, ROW_COLUMNS in order)."""

    id: int
    rel: str
    tier: str
    kind: str
    size: int
    mtime_ns: int
    offset: int
    next_line: int
    open_tail: int
    head_fp: bytes | None
    tail_fp: bytes | None
    bytes: int
    inode: int


def _mark(path: Path, with_size: bool = False) -> str:
    """inode:mtime_ns (and size) of a path, or "-" when it is missing; a link's own (never its
    target's: the store never follows a link, not even to read its metadata)."""
    try:
        st = os.lstat(path)
    except OSError:
        return "-"
    return f"{st.st_ino}:{st.st_mtime_ns}" + (f":{st.st_size}" if with_size else "")


def _dir_mark(path: Path, listed_at_ns: int) -> str:
    """A folder's mark as recorded after listing it: empty (never equal) while it is racy."""
    try:
        st = os.lstat(path)
    except OSError:
        return "-"
    if st.st_mtime_ns >= listed_at_ns - RACY_NS:
        return ""
    return f"{st.st_ino}:{st.st_mtime_ns}"


def _root_mark(root: str) -> str:
    """The store folder's searchable names, and memory.md's and the named files' stats.

    Not the folder's time: SQLite creates and removes the index's own ``-wal`` file there.
    Archives are written once; a summary replaced by its job is named in the journal;
    memory.md and the named files are few and edited in place (by flush, by hand).
    """
    try:
        # in the listing's own order (not sorted: 0.4 ms at 4,000 names): a folder's listing keeps
        # its order while its names stay, and a new order only makes the next refresh look closer
        names = [name for name in os.listdir(root) if name[:1] != "."]
    except OSError:
        return "-"
    digest = zlib.crc32("\n".join(names).encode("utf-8", "surrogateescape"))
    files = ";".join(_mark(Path(root, name), with_size=True) for name in _ROOT_FILES)
    return f"{len(names)}:{digest}|{files}"


_ROOT_FILES = (MEMORY_FILE, *sorted(set(NAMED_MEMORY_FILES.values())))


class Plan:
    """What a refresh will do, decided before anything is written.

    A plain class, not a dataclass: the search path imports this module, and ``dataclasses``
    (with ``inspect``) would cost every ``memkeeper search`` milliseconds.
    """

    __slots__ = ("scope", "reset", "compact", "todo", "removed", "meta")

    def __init__(self, scope: frozenset[str], reset: bool = False) -> None:
        self.scope = scope
        self.reset = reset  # drop everything first (reindex)
        self.compact = False  # drop the archive and L1 indexes first (too many dead rows)
        self.todo: list[tuple[SourceFile, Row | None]] = []
        self.removed: list[Row] = []
        self.meta: dict[str, str] = {}  # recorded with the changes

    @property
    def total(self) -> int:
        return sum(max(0, s.size - (row.offset if row and row.kind == s.kind else 0)) for s, row in self.todo)

    @property
    def empty(self) -> bool:
        return not (self.reset or self.compact or self.todo or self.removed)


class Planner:
    """Finds what changed since the last refresh, doing per-file work only where something did.

    The marks recorded in ``meta`` (the store and sessions folders' times, memory.md and the
    named files, how far the change journal was read) tell in a few stats whether anything
    can have changed. A changed folder is listed (names and inodes, no stat for a known
    inode); files named in the journal are looked at; everything else is taken as it was.
    A full check (every file's size and time) runs for a small store, a missing journal,
    ``full``, and in the background every FULL_CHECK_SECONDS.
    """

    def __init__(self, paths: StorePaths, conn: sqlite3.Connection) -> None:
        self.paths = paths
        self.conn = conn
        self.meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        self.root = str(paths.root)  # strings: the unchanged case makes a few stats, nothing more
        self.sessions = os.path.join(self.root, SESSIONS_DIR)
        self.journal = os.path.join(self.root, STATE_DIR, changes.JOURNAL)

    def meta_int(self, key: str) -> int:
        try:
            return int(self.meta.get(key, 0))
        except ValueError:
            return 0

    def plan(self, full: bool, scope: frozenset[str], background: bool) -> Plan:
        now = time.time_ns()
        plan = Plan(scope=scope, reset=full)
        small = self.meta_int("files") < SMALL_STORE_FILES  # a few hundred stats: cheap
        full_check = full or small or self.full_check_due(now, background)
        if full_check and not small:
            plan.meta["full_check_ns"] = str(now)
        journal, read_to = self.read_journal()
        if "l1" in scope:  # the journal is read on only by a refresh that handles all it names
            plan.meta.update(read_to)
        if scope - {"l1"}:
            self.plan_root(plan, full_check, {rel for rel in journal if "/" not in rel})
        if "l1" in scope:
            self.plan_sessions(plan, full_check, now, {rel for rel in journal if rel.startswith("sessions/")})
        return plan

    def full_check_due(self, now: int, background: bool) -> bool:
        if not os.path.exists(self.journal):
            return True  # someone removed it: what was written meanwhile is unknown
        period = FULL_CHECK_SECONDS * 1_000_000_000
        return background and now - self.meta_int("full_check_ns") >= period

    # -- the store folder: memory.md, named files, archives, summaries ----------------------
    def plan_root(self, plan: Plan, full_check: bool, journal: set[str]) -> None:
        root_scope = plan.scope - {"l1"}
        marks = _root_mark(self.root)
        if not (full_check or plan.reset or journal) and self.meta.get("root_marks") == marks:
            return
        brief = self.brief(root_scope)
        trusted = None
        if not full_check:  # archives and summaries are replaced by renames: a new inode
            trusted = {
                rel: (r.size, r.mtime_ns, r.inode, r.tier)
                for rel, r in brief.items()
                if r.tier in ("l2", "l3") and rel not in journal
            }
        found = discover(self.paths, trusted, root_scope)
        self.compare(plan, found, brief, listed=True)
        plan.meta["root_marks"] = marks

    # -- the sessions folder ------------------------------------------------------------------
    def plan_sessions(self, plan: Plan, full_check: bool, now: int, journal: set[str]) -> None:
        """A changed folder is listed by name (no stat) and compared with the names indexed;
        new names and the names in the journal are stat'ed, nothing else."""
        if full_check or plan.reset:
            brief = self.brief(frozenset({"l1"}))
            found = discover(self.paths, None, frozenset({"l1"}))
            self.compare(plan, found, brief, listed=True)
            plan.meta["l1_marks"] = _dir_mark(Path(self.sessions), now)
            return
        look, gone = set(journal), set()
        if self.meta.get("l1_marks") != _mark(Path(self.sessions)):
            try:
                listing = os.listdir(self.sessions)
            except OSError:
                listing = []
            names = {"sessions/" + n for n in listing if is_l1(n) and not n.startswith(".")}
            known = {rel for (rel,) in self.conn.execute("SELECT rel FROM sources WHERE tier = 'l1'")}
            look = (names - known) | (look & names)
            gone = known - names
            plan.meta["l1_marks"] = _dir_mark(Path(self.sessions), now)
        if not look and not gone:
            return
        brief = self.rows(sorted(look | gone))
        found = [s for s in (_stat_l1(self.paths, rel) for rel in sorted(look)) if s is not None]
        self.compare(plan, found, brief, listed=False, names=look | gone)

    def read_journal(self) -> tuple[set[str], dict[str, str]]:
        """Names the journal (and a moved-aside journal) added since last time, and how far it was read."""
        found: set[str] = set()
        read_to: dict[str, str] = {}
        for key, path in (("journal_old", self.journal + changes.OLD_SUFFIX), ("journal", self.journal)):
            inode, _, offset = self.meta.get(key, "0:0").partition(":")
            read = changes.read_from(Path(path), int(inode or 0), int(offset or 0))
            if read is None and key == "journal":  # start one: from now on it is the record
                changes.create(self.paths)
                read = changes.read_from(Path(path), 0, 0)
            if read is None:
                continue
            read_to[key] = f"{read[0]}:{read[1]}"
            found.update(read[2])
        return found, read_to

    # -- comparing ----------------------------------------------------------------------------
    def compare(
        self,
        plan: Plan,
        found: list[SourceFile],
        brief: dict[str, Row],
        *,
        listed: bool,
        names: set[str] | None = None,
    ) -> None:
        """Changed files into ``plan.todo``; rows whose file is gone into ``plan.removed``."""
        present = {s.rel for s in found}
        for source in found:
            row = brief.get(source.rel)
            if plan.reset or changed(source, row):
                plan.todo.append((source, None if plan.reset else row))
        if plan.reset:
            return
        expected = brief.keys() if listed else (names or set())
        plan.removed.extend(brief[rel] for rel in expected if rel not in present and rel in brief)

    def brief(self, scope: frozenset[str]) -> dict[str, Row]:
        marks = ", ".join("?" * len(scope))
        sql = f"SELECT {ROW_COLUMNS} FROM sources WHERE tier IN ({marks})"
        return {r[1]: Row(*r) for r in self.conn.execute(sql, tuple(scope))}

    def rows(self, rels: Iterable[str]) -> dict[str, Row]:
        out: dict[str, Row] = {}
        for rel in rels:
            row = self.conn.execute(f"SELECT {ROW_COLUMNS} FROM sources WHERE rel=?", (rel,)).fetchone()
            if row:
                out[rel] = Row(*row)
        return out

    def compaction_due(self) -> bool:
        garbage = self.meta_int("garbage_bytes")
        if garbage <= MIN_GARBAGE_BYTES:
            return False
        row = self.conn.execute(
            "SELECT coalesce(sum(bytes), 0) FROM sources WHERE tier IN ('l1', 'l2')"
        ).fetchone()
        return garbage > max(MIN_GARBAGE_BYTES, int(row[0]) // 3)


def _stat_l1(paths: StorePaths, rel: str) -> SourceFile | None:
    name = rel.removeprefix("sessions/")
    if "/" in name or name != rel[len("sessions/") :]:
        return None
    try:
        st = os.lstat(paths.sessions / name)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    kind = l1_kind(name)
    if kind is None:
        return None
    return SourceFile(rel, "l1", kind, st.st_size, st.st_mtime_ns, st.st_ino)


def changed(source: SourceFile, row: Row | None) -> bool:
    return (
        row is None
        or row.size != source.size
        or row.mtime_ns != source.mtime_ns
        or row.kind != source.kind
        or row.inode != source.inode
    )
