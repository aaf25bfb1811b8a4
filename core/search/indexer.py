"""Keeping the search index in step with the files, incrementally.

``refresh`` compares every searchable file's (size, mtime_ns) with what the index
recorded and re-reads only what changed: an L1 file that grew is read from its last
offset (whole lines only; the JS plugin's files end without a newline, which is handled),
a rewritten file is read again, a removed one leaves the index. One writer at a time
(``.state/search.lock``); readers are never blocked (WAL): while another process writes,
a search reads the index as last committed. A search refreshes only the tiers it reads.

What changed is found without per-file work on a large store (see :class:`_Planner`):
folder times, memory.md and the named files, and the change journal our writers keep
(:mod:`memkeeper.core.changes`) say which files to look at. A file renamed, gzipped or
restored from the trash keeps its index rows (matched by inode or fingerprint, not path).
A rebuild (``reindex``, a compaction) is one transaction: readers see the old index
until it is done; a first build commits as it goes, with its progress in ``meta``.

A big load (the first build) reads and cuts the files in a process pool while this
one writes to SQLite, and merges the index segments at the end instead of on the way.

Rows of a removed or rewritten archive or L1 file cannot be deleted from a contentless
FTS table without their old text, so they stay as dead rows that no source id points to;
when they outweigh a third of the live text the big indexes are rebuilt.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import struct
import time
import zlib
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from memkeeper.core import changes
from memkeeper.core.layout import SESSIONS_DIR, STATE_DIR
from memkeeper.core.lock import LockTimeout, file_lock
from memkeeper.core.names import is_l1, l1_kind
from memkeeper.core.search import schema
from memkeeper.core.search.sources import (
    BIG_TIERS,
    BLOCK_BYTES,
    TIERS,
    WORD_FIELD_CHARS,
    Doc,
    Neighbours,
    SourceFile,
    WordRow,
    discover,
    docs_of,
    iter_sections,
    l1_body,
    l1_neighbours_before,
    read_source,
    small_word_fields,
)
from memkeeper.core.store import MEMORY_FILE, NAMED_MEMORY_FILES, StorePaths

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

Progress = Callable[[int, int, str], None]
T = TypeVar("T")  # (bytes done, bytes total, current file)

FINGERPRINT_BYTES = 4096
COMMIT_BYTES = 64 << 20
BULK_BYTES = 32 << 20
MIN_GARBAGE_BYTES = 64 << 20
LOCK_NAME = "search.lock"
#: The pool reads batches of this many bytes or files; at most POOL_WINDOW are in flight.
POOL_BATCH_BYTES = 8 << 20
POOL_BATCH_FILES = 256
POOL_WINDOW = 3
POOL_WORKERS = 1  # SQLite's single writer is the bottleneck: one reader keeps it fed
#: Below this many indexed files every refresh checks every file (a few ms).
SMALL_STORE_FILES = 1000
#: A large store's full check (every file's size and time) runs this often, in the background.
FULL_CHECK_SECONDS = 600
JOURNAL_ROTATE_BYTES = 256 << 10
#: While another process makes a first build smaller than this, a search scans the files.
SCAN_BELOW_BYTES = 64 << 20
#: A background job builds a missing index once the store has this many sessions.
BACKGROUND_BUILD_FILES = 100
JOB_LOCK_SECONDS = 120.0


class IndexBusy(Exception):
    """Another process is writing the index; the caller answers by a full scan."""


class RefreshStats:
    """What a refresh did."""

    def __init__(self, notes: list[str] | None = None) -> None:
        self.files_read = 0
        self.files_removed = 0
        self.bytes_read = 0
        self.docs_added = 0
        self.files_renamed = 0
        self.rebuilt = False
        self.seconds = 0.0
        self.notes: list[str] = notes or []


def lock_path(paths: StorePaths) -> Path:
    return paths.state / LOCK_NAME


@contextmanager
def writer(paths: StorePaths, timeout: float) -> Iterator[None]:
    """The index's single-writer lock; IndexBusy if it stays taken for ``timeout`` seconds."""
    paths.state.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        with file_lock(lock_path(paths), timeout=timeout):
            yield
    except LockTimeout:
        raise IndexBusy("the search index is being updated by another process") from None


def _fp(data: bytes) -> bytes:
    """A fingerprint of up to 4 KB (with its length): enough to tell an append from a rewrite."""
    return struct.pack("<III", len(data), zlib.crc32(data), zlib.adler32(data))


def _read_range(path: Path, start: int, length: int) -> bytes:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, start))
            return handle.read(length)
    except OSError:
        return b""


class _Row(NamedTuple):
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


class _Work:
    """One changed file, read and cut into index rows (done off the writer, maybe in a helper)."""

    def __init__(
        self,
        source: SourceFile,
        row: _Row | None,
        append: bool,  # continue the row's source id from its offset
        read: int = 0,
        head_fp: bytes | None = None,
        tail_fp: bytes | None = None,
    ) -> None:
        self.source = source
        self.row = row
        self.append = append
        self.read = read
        self.head_fp = head_fp
        self.tail_fp = tail_fp
        self.small: list[Doc] | None = None
        self.blocks: list[tuple[int, str]] = []  # (file offset, lowercased text)
        self.words: list[WordRow] = []  # one row per entry for the word index
        self.docs = 0
        self.end = 0
        self.next_line = 1
        self.open_tail = 0


def _prepare(paths: StorePaths, source: SourceFile, row: _Row | None) -> _Work:
    if source.kind == "l1" and row is not None and row.kind == "l1":
        work = _prepare_append(paths, source, row)
        if work is not None:
            return work
    data = read_source(paths, source)
    work = _Work(source, row, append=False, read=len(data))
    if source.tier not in BIG_TIERS:
        work.small = list(docs_of(source, data))
        work.docs = len(work.small)
        work.end = len(data)
        return work
    if source.tier == "l1":
        work.end, work.next_line, work.open_tail = _consume_l1(data, 0, 1, work)
    else:
        _section_blocks(data, work)
        work.end = len(data)
    if source.kind == "l1":
        _fingerprints(paths, source, work, data, 0)
    return work


def _prepare_append(paths: StorePaths, source: SourceFile, row: _Row) -> _Work | None:
    """Only what was appended to an L1 file; None when it was rewritten instead."""
    path = paths.root / source.rel
    if source.size < row.offset:
        return None
    head = _read_range(path, 0, min(FINGERPRINT_BYTES, row.offset))
    tail_start = max(0, row.offset - FINGERPRINT_BYTES)
    tail = _read_range(path, tail_start, row.offset - tail_start)
    if _fp(head) != row.head_fp or _fp(tail) != row.tail_fp:
        return None
    data = _read_range(path, row.offset, source.size - row.offset)
    start, first_line = 0, row.next_line
    if row.open_tail and data:
        # the last line was indexed without its newline: what follows must start a new line
        if not data.startswith(b"\n"):
            return None
        start, first_line = 1, row.next_line + 1
    work = _Work(source, row, append=True, read=len(data), head_fp=row.head_fp, tail_fp=row.tail_fp)
    work.end, work.next_line, work.open_tail = row.offset, row.next_line, row.open_tail
    if data[start:] or start:
        neighbours = l1_neighbours_before(path, row.offset)
        offset, work.next_line, work.open_tail = _consume_l1(
            data, start, first_line, work, base=row.offset, neighbours=neighbours
        )
        work.end = row.offset + offset
        _fingerprints(paths, source, work, data, row.offset)
    return work


def _fingerprints(paths: StorePaths, source: SourceFile, work: _Work, data: bytes, base: int) -> None:
    """Head and tail fingerprints of what was indexed: an append keeps both, a rewrite does not."""
    path = paths.root / source.rel
    end = work.end
    if base == 0:
        work.head_fp = _fp(data[: min(FINGERPRINT_BYTES, end)])
    elif work.row is None or work.row.offset < FINGERPRINT_BYTES:
        work.head_fp = _fp(_read_range(path, 0, min(FINGERPRINT_BYTES, end)))
    tail_start = max(0, end - FINGERPRINT_BYTES)
    if base <= tail_start:
        tail = data[tail_start - base : end - base]
    else:
        tail = _read_range(path, tail_start, end - tail_start)
    work.tail_fp = _fp(tail)


class _Blocks:
    """Groups consecutive docs into index rows by their offsets (see sources.BLOCK_BYTES)."""

    def __init__(self, work: _Work) -> None:
        self.work = work
        self.start = -1
        self.parts: list[str] = []

    def add(self, offset: int, text: str) -> None:
        if self.start >= 0 and offset - self.start >= BLOCK_BYTES:
            self.flush()
        if self.start < 0:
            self.start = offset
        self.parts.append(text)
        self.work.docs += 1

    def flush(self) -> None:
        if self.parts:
            self.work.blocks.append((self.start, "\n".join(self.parts).lower()))
        self.start, self.parts = -1, []


class _WordBlocks(_Blocks):
    """Blocks for the trigram index, and one word row per L1 entry with its neighbours."""

    def __init__(self, work: _Work, neighbours: Neighbours) -> None:
        super().__init__(work)
        self.neighbours = neighbours

    def add_entry(self, offset: int, entry: dict[str, object], body: str) -> None:
        self.add(offset, body)
        row = self.neighbours.add(offset, entry, body)
        if row is not None:
            self.work.words.append(row)

    def flush(self) -> None:
        super().flush()
        row = self.neighbours.finish()
        if row is not None:
            self.work.words.append(row)


def _section_blocks(data: bytes, work: _Work) -> None:
    """Archive sections grouped into blocks; the text of a block is its byte range, decoded."""
    block_start = block_end = -1
    for offset, _line, chunk in iter_sections(data):
        text = chunk[: 2 * WORD_FIELD_CHARS].decode("utf-8", "replace")
        work.words.append((offset, text, "", ""))
        if block_start >= 0 and offset - block_start >= BLOCK_BYTES:
            work.blocks.append((block_start, data[block_start:block_end].decode("utf-8", "replace").lower()))
            block_start = -1
        if block_start < 0:
            block_start = offset
        block_end = offset + len(chunk)
        work.docs += 1
    if block_start >= 0:
        work.blocks.append((block_start, data[block_start:block_end].decode("utf-8", "replace").lower()))


def _consume_l1(
    data: bytes,
    start: int,
    first_line: int,
    work: _Work,
    base: int = 0,
    neighbours: Neighbours | None = None,
) -> tuple[int, int, int]:
    """Index whole lines of ``data`` from ``start``; returns (offset after them, next line, open tail).

    A last line without a newline is taken if it parses (the JS plugin writes files that
    way) and the tail is then "open": the next append must begin with a newline. A last
    line that does not parse is being written: it is left for the next refresh.
    """
    blocks = _WordBlocks(work, neighbours or Neighbours())
    pos = start
    line = first_line
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        if nl < 0:
            entry = _parse(data[pos:])
            if entry is _BROKEN:
                blocks.flush()
                return pos, line, 0
            if isinstance(entry, dict):
                body = l1_body(entry)
                if body:
                    blocks.add_entry(base + pos, entry, body)
            blocks.flush()
            return n, line, 1
        entry = _parse(data[pos:nl])
        if isinstance(entry, dict):
            body = l1_body(entry)
            if body:
                blocks.add_entry(base + pos, entry, body)
        pos = nl + 1
        line += 1
    blocks.flush()
    return n, line, 0


_BROKEN = object()


def _parse(raw: bytes) -> object:
    text = raw.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        try:
            return json.loads(text.decode("utf-8", "replace"))
        except ValueError:
            return _BROKEN


# -- what changed ---------------------------------------------------------------------------

#: Folder times newer than this (relative to the listing) are not trusted: a file added in the
#: same clock tick as the listing would leave the time unchanged (git's "racy" entries).
RACY_NS = 2_000_000_000
_ROW_COLUMNS = (
    "id, rel, tier, kind, size, mtime_ns, offset, next_line, open_tail, head_fp, tail_fp, bytes, inode"
)


def _mark(path: Path, with_size: bool = False) -> str:
    """inode:mtime_ns (and size) of a path, or "-" when it is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_ino}:{st.st_mtime_ns}" + (f":{st.st_size}" if with_size else "")


def _dir_mark(path: Path, listed_at_ns: int) -> str:
    """A folder's mark as recorded after listing it: empty (never equal) while it is racy."""
    try:
        st = os.stat(path)
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
        names = sorted(name for name in os.listdir(root) if not name.startswith("."))
    except OSError:
        return "-"
    digest = zlib.crc32("\n".join(names).encode("utf-8", "surrogateescape"))
    files = ";".join(_mark(Path(root, name), with_size=True) for name in _ROOT_FILES)
    return f"{len(names)}:{digest}|{files}"


_ROOT_FILES = (MEMORY_FILE, *sorted(set(NAMED_MEMORY_FILES.values())))


@dataclass
class _Plan:
    """What a refresh will do, decided before anything is written."""

    scope: frozenset[str]
    reset: bool = False  # drop everything first (reindex)
    compact: bool = False  # drop the archive and L1 indexes first (too many dead rows)
    todo: list[tuple[SourceFile, _Row | None]] = field(default_factory=list)
    removed: list[_Row] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)  # recorded with the changes

    @property
    def total(self) -> int:
        return sum(max(0, s.size - (row.offset if row and row.kind == s.kind else 0)) for s, row in self.todo)

    @property
    def empty(self) -> bool:
        return not (self.reset or self.compact or self.todo or self.removed)


class _Planner:
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

    def plan(self, full: bool, scope: frozenset[str], background: bool) -> _Plan:
        now = time.time_ns()
        plan = _Plan(scope=scope, reset=full)
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
    def plan_root(self, plan: _Plan, full_check: bool, journal: set[str]) -> None:
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
    def plan_sessions(self, plan: _Plan, full_check: bool, now: int, journal: set[str]) -> None:
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
        plan: _Plan,
        found: list[SourceFile],
        brief: dict[str, _Row],
        *,
        listed: bool,
        names: set[str] | None = None,
    ) -> None:
        """Changed files into ``plan.todo``; rows whose file is gone into ``plan.removed``."""
        present = {s.rel for s in found}
        for source in found:
            row = brief.get(source.rel)
            if plan.reset or _changed(source, row):
                plan.todo.append((source, None if plan.reset else row))
        if plan.reset:
            return
        expected = brief.keys() if listed else (names or set())
        plan.removed.extend(brief[rel] for rel in expected if rel not in present and rel in brief)

    def brief(self, scope: frozenset[str]) -> dict[str, _Row]:
        marks = ", ".join("?" * len(scope))
        sql = f"SELECT {_ROW_COLUMNS} FROM sources WHERE tier IN ({marks})"
        return {r[1]: _Row(*r) for r in self.conn.execute(sql, tuple(scope))}

    def rows(self, rels: Iterable[str]) -> dict[str, _Row]:
        out: dict[str, _Row] = {}
        for rel in rels:
            row = self.conn.execute(f"SELECT {_ROW_COLUMNS} FROM sources WHERE rel=?", (rel,)).fetchone()
            if row:
                out[rel] = _Row(*row)
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


# -- writing what changed -------------------------------------------------------------------


class _Transaction:
    """One write transaction; ``chunked`` ones commit every COMMIT_BYTES so readers see progress."""

    def __init__(self, conn: sqlite3.Connection, chunked: bool) -> None:
        self.conn = conn
        self.chunked = chunked
        self.pending = 0

    def wrote(self, nbytes: int, progress: str | None = None) -> None:
        self.pending += nbytes
        if self.chunked and self.pending >= COMMIT_BYTES:
            if progress is not None:
                _set_meta(self.conn, "building", progress)
            self.conn.execute("COMMIT")
            self.conn.execute("BEGIN IMMEDIATE")
            self.pending = 0


@contextmanager
def transaction(conn: sqlite3.Connection, chunked: bool = False) -> Iterator[_Transaction]:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any error (the index is never half-updated)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield _Transaction(conn, chunked)
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _set_meta(conn: sqlite3.Connection, key: str, value: int | str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, str(value)))


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return str(row[0]) if row else None


class _Updater:
    """Applies a :class:`_Plan`: rows of removed files set aside, changed files read and written."""

    def __init__(self, paths: StorePaths, conn: sqlite3.Connection, progress: Progress | None) -> None:
        self.paths = paths
        self.conn = conn
        self.progress = progress
        self.stats = RefreshStats()
        self.next_small_rowid = 0

    def run(self, full: bool, tiers: Iterable[str] | None = None, *, background: bool = True) -> RefreshStats:
        """Update the files of ``tiers`` (all by default: a search refreshes what it reads).

        ``background`` refreshes (the public ``refresh``, the index job) may also compact
        the index and make the periodic full check; a search's refresh never does.
        """
        start = time.monotonic()
        scope = frozenset(TIERS if full or tiers is None else tiers)
        planner = _Planner(self.paths, self.conn)
        plan = planner.plan(full, scope, background)
        if not full and scope >= set(BIG_TIERS) and planner.compaction_due():
            if background:
                plan = planner.plan(False, scope, background)
                plan.compact = True
                plan.todo = [(s, None) for s in discover(self.paths, None, frozenset(BIG_TIERS))] + [
                    item for item in plan.todo if item[0].tier not in BIG_TIERS
                ]
                plan.removed = [r for r in plan.removed if r.tier not in BIG_TIERS]
            else:
                self.stats.notes.append("search index has many dead rows: compacting it in the background")
                _start_index_job(self.paths)
        plan.meta = {key: value for key, value in plan.meta.items() if planner.meta.get(key) != value}
        if not plan.empty or plan.meta:
            self.apply(plan, fresh=not planner.meta_int("files") and not planner.meta.get("built"))
        self.stats.seconds = time.monotonic() - start
        return self.stats

    def apply(self, plan: _Plan, fresh: bool) -> None:
        """Write the plan in one transaction (a rebuild: readers keep the old index until it is
        done), or in chunks when the index starts empty or the change is incremental."""
        with transaction(self.conn, chunked=fresh or not (plan.reset or plan.compact)) as tx:
            if plan.reset:
                self.reset_all()
            elif plan.compact:
                self.reset_big()
                self.stats.notes.append("search index compacted (rebuilt the archive and L1 indexes)")
            self.next_small_rowid = (self.conn.execute("SELECT max(rowid) FROM docs").fetchone()[0] or 0) + 1
            for row in plan.removed:
                self.drop_source(row)
                self.stats.files_removed += 1
            todo = [(s, row) for s, row in plan.todo if row is not None or not self.revive(s)]
            self.write_files(todo, plan.total, tx, show_progress=fresh)
            self.record(plan)
        if plan.reset or plan.compact or self.stats.files_removed:
            _tidy(self.conn)
        if plan.removed or plan.todo:
            _rotate_journal(self.paths, self.conn)

    def write_files(
        self, todo: list[tuple[SourceFile, _Row | None]], total: int, tx: _Transaction, show_progress: bool
    ) -> None:
        """Read, cut and write the files; a big load reads in a pool and merges at the end."""
        bulk = total >= BULK_BYTES
        if bulk:
            self.bulk_settings(True)
        done = 0
        label = f"{{}}/{total}" if show_progress and bulk else None
        for work in _prepared(self.paths, todo, in_pool=bulk):
            if self.progress:
                self.progress(done, total, work.source.rel)
            self.apply_work(work)
            done += work.read
            tx.wrote(work.read, label.format(done) if label else None)
        if bulk:
            self.bulk_settings(False)
        if self.progress:
            self.progress(max(done, total), max(done, total), "")

    def record(self, plan: _Plan) -> None:
        """What the next refresh compares with: the marks, the file count, a finished build."""
        for key, value in plan.meta.items():
            _set_meta(self.conn, key, value)
        _set_meta(self.conn, "files", self.conn.execute("SELECT count(*) FROM sources").fetchone()[0])
        _set_meta(self.conn, "built", 1)
        _set_meta(self.conn, "generation", int(_meta(self.conn, "generation") or 0) + 1)
        self.conn.execute("DELETE FROM meta WHERE key='building'")

    # -- dropping and reviving rows ---------------------------------------------------------
    def reset_all(self) -> None:
        self.conn.execute("DELETE FROM docs")
        self.conn.execute("DELETE FROM sources")
        self.conn.execute("INSERT INTO fts_small(fts_small) VALUES('delete-all')")
        self.conn.execute("INSERT INTO words_small(words_small) VALUES('delete-all')")
        self.reset_big()

    def reset_big(self) -> None:
        for table in schema.BIG_FTS.values():
            self.conn.execute(f"INSERT INTO {table}({table}) VALUES('delete-all')")
        for tier in BIG_TIERS:
            words = schema.WORDS[tier]
            self.conn.execute(f"INSERT INTO {words}({words}) VALUES('delete-all')")
        self.conn.execute("DELETE FROM sources WHERE tier IN ('l1', 'l2')")
        self.conn.execute("DELETE FROM gone")
        _set_meta(self.conn, "garbage_bytes", 0)
        self.stats.rebuilt = True

    def add_garbage(self, n: int) -> None:
        value = int(_meta(self.conn, "garbage_bytes") or 0) + n
        _set_meta(self.conn, "garbage_bytes", max(0, value))

    def drop_source(self, row: _Row) -> None:
        """A file left: its archive/L1 rows stay (dead) and its source is set aside, so a
        rename, a gzip or a restore from the trash gets them back without reading it."""
        if row.tier in BIG_TIERS:
            self.add_garbage(row.bytes)
            self.conn.execute(
                f"INSERT INTO gone({_ROW_COLUMNS}) SELECT {_ROW_COLUMNS} FROM sources WHERE id=?", (row.id,)
            )
        else:
            self.delete_small_docs(row.id)
        self.conn.execute("DELETE FROM sources WHERE id=?", (row.id,))

    def revive(self, source: SourceFile) -> bool:
        """Take back the rows of a file set aside that ``source`` is (renamed, gzipped, restored)."""
        if source.tier not in BIG_TIERS:
            return False
        plain = source.rel.removesuffix(".gz")
        candidates = self.conn.execute(
            f"SELECT {_ROW_COLUMNS} FROM gone WHERE inode=? OR rel=? ORDER BY id DESC", (source.inode, plain)
        ).fetchall()
        for found in (_Row(*c) for c in candidates):
            if self.same_content(source, found):
                self.conn.execute(
                    f"INSERT INTO sources({_ROW_COLUMNS}) SELECT {_ROW_COLUMNS} FROM gone WHERE id=?",
                    (found.id,),
                )
                self.conn.execute("DELETE FROM gone WHERE id=?", (found.id,))
                self.conn.execute(
                    "UPDATE sources SET rel=?, kind=?, size=?, mtime_ns=?, inode=? WHERE id=?",
                    (source.rel, source.kind, source.size, source.mtime_ns, source.inode, found.id),
                )
                self.add_garbage(-found.bytes)
                self.stats.files_renamed += 1
                return True
        return False

    def same_content(self, source: SourceFile, row: _Row) -> bool:
        if source.kind == row.kind:  # a rename keeps the inode, size and time
            return (source.inode, source.size, source.mtime_ns) == (row.inode, row.size, row.mtime_ns)
        if source.kind != "l1gz" or row.kind != "l1" or row.offset != row.size:
            return False
        return _gzip_matches(self.paths.root / source.rel, row)

    def delete_small_docs(self, src: int) -> None:
        old = self.conn.execute(
            "SELECT rowid, tier, type, loc, line, date, title, body, session FROM docs WHERE src=?", (src,)
        ).fetchall()
        self.conn.executemany(
            "INSERT INTO fts_small(fts_small, rowid, body) VALUES('delete', ?, ?)",
            [(row[0], row[7].lower() + schema.BLOCK_TAIL) for row in old],
        )
        self.conn.executemany(
            "INSERT INTO words_small(words_small, rowid, hi, lo, ctx) VALUES('delete', ?, ?, ?, ?)",
            [(row[0], *small_word_fields(Doc(row[1], row[2], "", *row[3:]))) for row in old],
        )
        self.conn.execute("DELETE FROM docs WHERE src=?", (src,))

    # -- writing ----------------------------------------------------------------------------
    def bulk_settings(self, on: bool) -> None:
        """Large loads: merge segments at the end instead of as they come (about twice as fast)."""
        for table in ("fts_small", *schema.BIG_FTS.values(), *schema.WORDS.values()):
            if on:
                self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('automerge', 0)")
                self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('crisismerge', 2000)")
            else:
                self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('automerge', 4)")
                self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('crisismerge', 16)")
                if table in (
                    "fts_l1",
                    "words_l1",
                ):  # the big ones: bounded merge work now, the rest as it comes
                    self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('merge', 500)")
                else:  # a fraction of the size: one segment makes every query ~10x cheaper
                    self.conn.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")

    def new_source(self, source: SourceFile) -> int:
        cur = self.conn.execute(
            "INSERT INTO sources(rel, tier, kind, size, mtime_ns, inode) VALUES(?, ?, ?, ?, ?, ?)",
            (source.rel, source.tier, source.kind, source.size, source.mtime_ns, source.inode),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def apply_work(self, work: _Work) -> None:
        """Write one prepared file into the index."""
        source, row = work.source, work.row
        self.stats.files_read += 1
        self.stats.bytes_read += work.read
        if work.append and row is not None:
            src = row.id
            indexed = row.bytes + (work.end - row.offset)
        else:
            if row is not None:
                self.drop_source(row)
            src = self.new_source(source)
            indexed = work.end
        if work.small is not None:
            self.insert_small(src, work.small)
        elif work.blocks:
            table = schema.BIG_FTS[source.tier]
            key = src << schema.OFFSET_BITS
            self.conn.executemany(
                f"INSERT INTO {table}(rowid, body) VALUES(?, ?)",
                [(key + off, text + schema.BLOCK_TAIL) for off, text in work.blocks],
            )
        if work.words and source.tier in BIG_TIERS:
            words = schema.WORDS[source.tier]
            key = src << schema.OFFSET_BITS
            self.conn.executemany(
                f"INSERT INTO {words}(rowid, hi, lo, ctx) VALUES(?, ?, ?, ?)",
                [(key + off, hi, lo, ctx) for off, hi, lo, ctx in work.words],
            )
        self.stats.docs_added += work.docs
        self.conn.execute(
            "UPDATE sources SET size=?, mtime_ns=?, inode=?, offset=?, next_line=?, open_tail=?, head_fp=?,"
            " tail_fp=?, bytes=? WHERE id=?",
            (
                source.size,
                source.mtime_ns,
                source.inode,
                work.end,
                work.next_line,
                work.open_tail,
                work.head_fp,
                work.tail_fp,
                indexed,
                src,
            ),
        )

    def insert_small(self, src: int, docs: list[Doc]) -> None:
        rowids = range(self.next_small_rowid, self.next_small_rowid + len(docs))
        self.next_small_rowid += len(docs)
        self.conn.executemany(
            "INSERT INTO docs(rowid, src, tier, type, loc, line, date, title, body, session)"
            " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (rid, src, d.tier, d.type, d.loc, d.line, d.date, d.title, d.body, d.session)
                for rid, d in zip(rowids, docs, strict=True)
            ],
        )
        self.conn.executemany(
            "INSERT INTO fts_small(rowid, body) VALUES(?, ?)",
            [(rid, d.body.lower() + schema.BLOCK_TAIL) for rid, d in zip(rowids, docs, strict=True)],
        )
        self.conn.executemany(
            "INSERT INTO words_small(rowid, hi, lo, ctx) VALUES(?, ?, ?, ?)",
            [(rid, *small_word_fields(d)) for rid, d in zip(rowids, docs, strict=True)],
        )


def _gzip_matches(path: Path, row: _Row) -> bool:
    """Is this gzip the file the row indexed? Its stated length and its first 4 KB say so."""
    try:
        with open(path, "rb") as handle:
            handle.seek(-4, os.SEEK_END)
            (isize,) = struct.unpack("<I", handle.read(4))
            if isize != row.offset & 0xFFFFFFFF:
                return False
            handle.seek(0)
            unpacker = zlib.decompressobj(16 + zlib.MAX_WBITS)
            head = b""
            want = min(FINGERPRINT_BYTES, row.offset)
            while len(head) < want:
                chunk = handle.read(16384)
                if not chunk:
                    break
                head += unpacker.decompress(chunk, want - len(head))
                while unpacker.unconsumed_tail and len(head) < want:
                    head += unpacker.decompress(unpacker.unconsumed_tail, want - len(head))
    except (OSError, zlib.error, struct.error):
        return False
    return _fp(head[:want]) == row.head_fp


def _tidy(conn: sqlite3.Connection) -> None:
    """Give free pages back after a large change (the database is in incremental auto-vacuum)."""
    ((free,),) = conn.execute("PRAGMA freelist_count").fetchall()
    ((pages,),) = conn.execute("PRAGMA page_count").fetchall()
    if pages and free * 8 >= pages:  # an eighth or more is free
        conn.executescript("PRAGMA incremental_vacuum;")  # execute() would free one page only
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def live_bytes(conn: sqlite3.Connection) -> int:
    """The index's size in pages in use (free pages left by deletes not counted)."""
    ((size,),) = conn.execute("PRAGMA page_size").fetchall()
    ((pages,),) = conn.execute("PRAGMA page_count").fetchall()
    ((free,),) = conn.execute("PRAGMA freelist_count").fetchall()
    return int(size * (pages - free))


def _rotate_journal(paths: StorePaths, conn: sqlite3.Connection) -> None:
    """Move a long journal that was read to its end aside; its late additions are still read."""
    journal = changes.journal_path(paths)
    try:
        st = os.stat(journal)
    except OSError:
        return
    read = _meta(conn, "journal") or "0:0"
    if st.st_size < JOURNAL_ROTATE_BYTES or read != f"{st.st_ino}:{st.st_size}":
        return
    try:
        os.replace(journal, changes.old_journal_path(paths))
        fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        new_inode = os.stat(journal).st_ino
    except OSError:
        return
    with transaction(conn):
        _set_meta(conn, "journal_old", read)
        _set_meta(conn, "journal", f"{new_inode}:0")


# -- reading the files in a process pool ------------------------------------------------------


def _prepare_batch(paths: StorePaths, batch: list[tuple[SourceFile, _Row | None]]) -> list[_Work]:
    return [_prepare(paths, source, row) for source, row in batch]


def _batches(todo: list[tuple[SourceFile, _Row | None]]) -> list[list[tuple[SourceFile, _Row | None]]]:
    batches: list[list[tuple[SourceFile, _Row | None]]] = [[]]
    size = 0
    for item in todo:
        if batches[-1] and (size >= POOL_BATCH_BYTES or len(batches[-1]) >= POOL_BATCH_FILES):
            batches.append([])
            size = 0
        batches[-1].append(item)
        size += item[0].size
    return [b for b in batches if b]


def _prepared(
    paths: StorePaths, todo: list[tuple[SourceFile, _Row | None]], in_pool: bool
) -> Iterator[_Work]:
    """The files read and cut, in order. A big load reads in a process pool while this
    process writes to SQLite; at most POOL_WINDOW batches are in flight, each answered
    before another is sent, and the pool's own feeder never blocks on a full pipe."""
    if not in_pool:
        for source, row in todo:
            yield _prepare(paths, source, row)
        return
    batches = _batches(todo)
    done = 0
    try:
        from concurrent.futures import Future, ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        pool = ProcessPoolExecutor(max_workers=POOL_WORKERS, mp_context=_mp_context())
    except (ImportError, OSError):
        pool = None
    if pool is not None:
        try:
            pending: deque[Future[list[_Work]]] = deque()
            for batch in batches[:POOL_WINDOW]:
                pending.append(pool.submit(_prepare_batch, paths, batch))
            while pending:
                works = pending.popleft().result()
                following = done + len(pending) + 1
                if following < len(batches):
                    pending.append(pool.submit(_prepare_batch, paths, batches[following]))
                done += 1
                yield from works
        except (BrokenProcessPool, OSError, EOFError):
            pass  # finish here, nothing lost
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    for batch in batches[done:]:
        for source, row in batch:
            yield _prepare(paths, source, row)


def _mp_context() -> BaseContext:
    """fork when this process runs one thread (nothing to re-import); spawn otherwise (a
    fork would copy locks other threads hold). A spawned child runs with our flags (-P)."""
    import multiprocessing
    import threading

    return multiprocessing.get_context("fork" if threading.active_count() == 1 else "spawn")


def _changed(source: SourceFile, row: _Row | None) -> bool:
    return (
        row is None
        or row.size != source.size
        or row.mtime_ns != source.mtime_ns
        or row.kind != source.kind
        or row.inode != source.inode
    )


def _start_index_job(paths: StorePaths) -> None:
    from memkeeper.core.jobs import start_job

    try:
        start_job(paths, "index")
    except OSError:
        pass


# -- the public operations ------------------------------------------------------------------


def refresh(
    paths: StorePaths,
    progress: Progress | None = None,
    *,
    full: bool = False,
    lock_timeout: float = 30.0,
) -> RefreshStats:
    """Bring the index up to date (incrementally unless ``full``); IndexBusy if another writer holds it.

    This is the background refresh: it may also compact the index and check every file.
    """
    if not paths.root.is_dir():
        return RefreshStats(notes=["no memory store here yet"])
    with writer(paths, lock_timeout):
        conn, notes = schema.open_index(paths.search_db)
        try:
            stats = _Updater(paths, conn, progress).run(full)
        finally:
            conn.close()
    stats.notes[:0] = notes
    return stats


def refresh_locked(
    paths: StorePaths,
    conn: sqlite3.Connection,
    full: bool = False,
    tiers: Iterable[str] | None = None,
    progress: Progress | None = None,
) -> RefreshStats:
    """A search's refresh, for a caller that holds the writer lock and a connection: only
    what changed, never a compaction or a full check of a large store."""
    return _Updater(paths, conn, progress).run(full, tiers, background=False)


def reindex(
    paths: StorePaths, progress: Progress | None = None, *, lock_timeout: float = 30.0
) -> RefreshStats:
    """Rebuild the whole index from the files, in one transaction: searches meanwhile
    answer from the index as it was."""
    if not paths.root.is_dir():
        return RefreshStats(notes=["no memory store here yet"])
    with writer(paths, lock_timeout):
        conn, notes = schema.open_index(paths.search_db)
        try:
            stats = _Updater(paths, conn, progress).run(True)
        finally:
            conn.close()
    stats.notes[:0] = notes
    return stats


#: Vocabulary lookups (the trigrams a short word begins, a word's document count) walk the
#: index and repeat from keystroke to keystroke: kept per index generation, in this process.
_VOCAB_CACHE: OrderedDict[tuple[object, ...], object] = OrderedDict()
VOCAB_CACHE_ENTRIES = 4096


def vocab_cached(conn: sqlite3.Connection, key: tuple[object, ...], compute: Callable[[], T]) -> T:
    """``compute()``, remembered until the index changes (its generation moves on)."""
    ((_seq, _name, db),) = conn.execute("PRAGMA database_list").fetchall()[:1]
    generation = _meta(conn, "generation")
    full = (db, generation, *key)
    if full in _VOCAB_CACHE:
        _VOCAB_CACHE.move_to_end(full)
        return _VOCAB_CACHE[full]  # type: ignore[return-value]
    value = compute()
    _VOCAB_CACHE[full] = value
    if len(_VOCAB_CACHE) > VOCAB_CACHE_ENTRIES:
        _VOCAB_CACHE.popitem(last=False)
    return value


BUSY_NOTE = "the search index is being updated by another process: results may be a moment old"


@contextmanager
def open_for_search(
    paths: StorePaths,
    tiers: Iterable[str] | None = None,
    *,
    refresh: bool = True,
    lock_wait: float = 0.25,
    progress: Progress | None = None,
) -> Iterator[tuple[sqlite3.Connection, list[str]]]:
    """A connection to read the index from, and notes for the person searching.

    With the writer lock (waited for at most ``lock_wait``), what changed is indexed first.
    While another process writes, the index is read as it was last committed (WAL), with a
    note. IndexBusy when there is no usable index to read (the caller scans the files).
    """
    conn: sqlite3.Connection | None = None
    try:
        with writer(paths, lock_wait):
            conn, notes = schema.open_index(paths.search_db)
            if refresh:
                notes.extend(refresh_locked(paths, conn, tiers=tiers, progress=progress).notes)
    except IndexBusy:
        if conn is not None:
            conn.close()
        conn, notes = _open_reader(paths)
    except BaseException:
        if conn is not None:
            conn.close()
        raise
    try:
        yield conn, notes
    finally:
        conn.close()


def _open_reader(paths: StorePaths) -> tuple[sqlite3.Connection, list[str]]:
    """The committed index, read-only, while another process writes; IndexBusy if unusable."""
    if not paths.search_db.exists():
        raise IndexBusy("the search index is being built by another process")
    conn = schema.connect(paths.search_db)
    try:
        if schema.schema_version(conn) != schema.SCHEMA_VERSION:
            raise IndexBusy("the search index is being rebuilt by another process")
        building = _meta(conn, "building")
        if building is not None:
            done, _, total = building.partition("/")
            if int(total or 0) < SCAN_BELOW_BYTES:
                raise IndexBusy("the search index is being built by another process")
            share = int(done or 0) * 100 // max(1, int(total or 1))
            return conn, [f"the search index is being built ({share} % done): results may be incomplete"]
        if _meta(conn, "built") is None:
            raise IndexBusy("the search index is being built by another process")
    except BaseException:
        conn.close()
        raise
    return conn, [BUSY_NOTE]


def build_progress(paths: StorePaths) -> tuple[int, int] | None:
    """(bytes done, bytes total) of a first build running in any process, or None.

    For a screen that shows the build another process (the background job) is making.
    """
    if not paths.search_db.exists():
        return None
    try:
        conn = schema.connect(paths.search_db)
    except sqlite3.Error:
        return None
    try:
        building = _meta(conn, "building")
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    if not building:
        return None
    done, _, total = building.partition("/")
    try:
        return int(done), int(total)
    except ValueError:
        return None


def index_worth_keeping(paths: StorePaths) -> bool:
    """Should a background job keep the index fresh? Yes once it exists or the store is big."""
    if paths.search_db.exists():
        return True
    try:
        with os.scandir(paths.sessions) as entries:
            for count, _entry in enumerate(entries, 1):
                if count >= BACKGROUND_BUILD_FILES:
                    return True
    except OSError:
        return False
    return False


def run_index_job(paths: StorePaths, options: dict[str, object]) -> None:
    """Job runner ``index``: refresh the index in the background (after the L1, flush and
    summary jobs), so a search finds it ready."""
    if options.get("if_worth") and not index_worth_keeping(paths):
        return
    try:
        refresh(paths, lock_timeout=JOB_LOCK_SECONDS)
    except IndexBusy:
        pass  # a long rebuild holds it; the next job catches up


__all__ = [
    "Doc",
    "IndexBusy",
    "Progress",
    "RefreshStats",
    "build_progress",
    "live_bytes",
    "open_for_search",
    "refresh",
    "refresh_locked",
    "reindex",
    "run_index_job",
    "transaction",
]
