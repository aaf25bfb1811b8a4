"""Keeping the search index in step with the files, incrementally.

``refresh`` re-reads only what changed (found by :mod:`.freshness`, read and cut by
:mod:`.cutting`): an L1 file that grew is read from its last
offset (whole lines only; the JS plugin's files end without a newline, which is handled),
a rewritten file is read again, a removed one leaves the index. One writer at a time
(``.state/search.lock``); readers are never blocked (WAL): while another process writes,
a search reads the index as last committed. A search refreshes only the tiers it reads.

What changed is found without per-file work on a large store (see ``freshness.Planner``):
folder times, memory.md and the named files, and the change journal our writers keep
(:mod:`memkeeper.core.store.changes`) say which files to look at. A file renamed, gzipped or
restored from the trash keeps its index rows (matched by inode or fingerprint, not path).
A rebuild (``reindex``, a compaction) is one transaction: readers see the old index
until it is done; a first build commits as it goes, with its progress in ``meta``.

A big load (the first build) reads and cuts the files in a process pool while this
one writes to SQLite, and merges the index segments at the end instead of on the way.

Rows of a removed or rewritten archive or L1 file cannot be deleted from a contentless
FTS table without their old text, so they stay as dead rows that no source id points to;
when they outweigh a third of the live text the big indexes are rebuilt (in the background:
a search's refresh only starts the index job), and the free pages go back (incremental vacuum).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..basics.platform import open_no_follow
from ..store import changes
from ..store.lock import LockTimeout, file_lock
from ..store.paths import StorePaths
from . import schema
from .freshness import ROW_COLUMNS, Plan, Planner, Row
from .sources import (
    BIG_TIERS,
    TIERS,
    Doc,
    SourceFile,
    discover,
    small_word_fields,
)

if TYPE_CHECKING:
    from typing import TypeVar

    from ..store.lock import _FileLock
    from .cutting import Work
    from .side import SideWriter

    T = TypeVar("T")

Progress = Callable[[int, int, str], None]  # (bytes done, bytes total, current file)

COMMIT_BYTES = 64 << 20
BULK_BYTES = 32 << 20
#: A load this large (and into empty tables) has a second writer (side.py): measured faster
#: at 1 GB on two cores (143 → 100 s), slower at 109 MB on a loaded machine (its fixed costs).
SIDE_BYTES = 256 << 20
LOCK_NAME = "search.lock"
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


def writer(paths: StorePaths, timeout: float) -> _Writer:
    """The index's single-writer lock; IndexBusy if it stays taken for ``timeout`` seconds.

    The context managers here are small classes, not ``contextlib`` generators: every
    ``memkeeper search`` would pay for importing contextlib.
    """
    return _Writer(paths, timeout)


class _Writer:
    __slots__ = ("lock", "paths", "timeout")

    def __init__(self, paths: StorePaths, timeout: float) -> None:
        self.paths, self.timeout = paths, timeout
        self.lock: _FileLock | None = None

    def __enter__(self) -> None:
        self.paths.state.mkdir(mode=0o700, parents=True, exist_ok=True)
        lock = file_lock(lock_path(self.paths), timeout=self.timeout)
        try:
            lock.__enter__()
        except LockTimeout:
            raise IndexBusy("the search index is being updated by another process") from None
        self.lock = lock

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        lock, self.lock = self.lock, None
        if lock is not None:
            lock.__exit__(None, None, None)
        if kind is not None and issubclass(kind, LockTimeout):  # a wait inside, as the generator had
            raise IndexBusy("the search index is being updated by another process") from None


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


def transaction(conn: sqlite3.Connection, chunked: bool = False) -> _InTransaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any error (the index is never half-updated)."""
    return _InTransaction(conn, chunked)


class _InTransaction:
    __slots__ = ("chunked", "conn")

    def __init__(self, conn: sqlite3.Connection, chunked: bool) -> None:
        self.conn, self.chunked = conn, chunked

    def __enter__(self) -> _Transaction:
        self.conn.execute("BEGIN IMMEDIATE")
        return _Transaction(self.conn, self.chunked)

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None:
            self.conn.execute("COMMIT")
        elif self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


def _set_meta(conn: sqlite3.Connection, key: str, value: int | str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, str(value)))


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return str(row[0]) if row else None


class _Updater:
    """Applies a :class:`Plan`: rows of removed files set aside, changed files read and written."""

    def __init__(self, paths: StorePaths, conn: sqlite3.Connection, progress: Progress | None) -> None:
        self.paths = paths
        self.conn = conn
        self.progress = progress
        self.stats = RefreshStats()
        self.next_small_rowid = 0
        self.side: SideWriter | None = None  # a bulk load's second writer (see side.py)
        self.side_made: tuple[str, ...] = ()  # the tables it writes

    def run(self, full: bool, tiers: Iterable[str] | None = None, *, background: bool = True) -> RefreshStats:
        """Update the files of ``tiers`` (all by default: a search refreshes what it reads).

        ``background`` refreshes (the public ``refresh``, the index job) may also compact
        the index and make the periodic full check; a search's refresh never does.
        """
        start = time.monotonic()
        planner = Planner(self.paths, self.conn)
        if schema.TAKE_PENDING in planner.meta:  # a build cut short before its trigram rows came in
            full = True
        scope = frozenset(TIERS if full or tiers is None else tiers)
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
        if background:
            self.fill_added(scope)
        self.stats.seconds = time.monotonic() - start
        return self.stats

    def fill_added(self, scope: frozenset[str]) -> None:
        """Once per index: the tables added since it was made, filled for the files it holds."""
        from . import l1days, l3findings  # (json, regexes) not for a search's refresh

        if "l1" in scope:
            l1days.fill(self.paths, self.conn)  # the day counts
        if "l3" in scope:
            l3findings.fill(self.paths, self.conn)  # the summaries' decisions and open issues

    def apply(self, plan: Plan, fresh: bool) -> None:
        """Write the plan in one transaction (a rebuild: readers keep the old index until it is
        done), or in chunks when the index starts empty or the change is incremental."""
        side = plan.total >= max(SIDE_BYTES, BULK_BYTES) and (
            plan.reset or plan.compact or _side_unused(self.conn)
        )
        from . import l1days, l3findings  # a search of an unchanged store writes nothing

        with transaction(self.conn, chunked=fresh or not (plan.reset or plan.compact)) as tx:
            l1days.ensure(self.conn)
            l3findings.ensure(self.conn)
            if side:
                self.start_side()
            self.clear(plan)
            self.next_small_rowid = (self.conn.execute("SELECT max(rowid) FROM docs").fetchone()[0] or 0) + 1
            for row in plan.removed:
                self.drop_source(row)
                self.stats.files_removed += 1
            todo = [(s, row) for s, row in plan.todo if row is not None or not self.revive(s)]
            try:
                self.write_files(todo, plan.total, tx, show_progress=fresh)
            finally:
                if self.side is not None:  # an error on the way: its rows are not taken
                    self.side.abandon()
                    self.side = None
            self.record(plan)
        if fresh or plan.reset or plan.compact or self.stats.files_removed:
            _tidy(self.conn)  # a first build's chunks free what FTS5's merges replaced too
        if plan.removed or plan.todo:
            _rotate_journal(self.paths, self.conn)

    def clear(self, plan: Plan) -> None:
        """Empty what a rebuild or a compaction writes anew."""
        if plan.reset:
            self.reset_all()
        elif plan.compact:
            self.reset_big()
            self.stats.notes.append("search index compacted (rebuilt the archive and L1 indexes)")

    def write_files(
        self, todo: list[tuple[SourceFile, Row | None]], total: int, tx: _Transaction, show_progress: bool
    ) -> None:
        """Read, cut and write the files; a big load reads in a pool and merges at the end."""
        bulk = total >= BULK_BYTES
        if bulk:
            self.bulk_settings(True)
        done = 0
        label = f"{{}}/{total}" if show_progress and bulk else None
        from .cutting import prepared  # only a change is read and cut

        for work in prepared(self.paths, todo, in_pool=bulk):
            if self.progress:
                self.progress(done, total, work.source.rel)
            self.apply_work(work)
            done += work.read
            tx.wrote(work.read, label.format(done) if label else None)
        if self.side is not None:
            self.side.wind_up()
        if bulk or self.bulk_left_on():
            self.bulk_settings(False)
        if self.side is not None:
            # FTS5 writes out what it holds at a savepoint: the merges the settings above call
            # for are made now, while the side writer finishes, not at the commit after the take
            self.conn.execute("SAVEPOINT flush")
            self.conn.execute("RELEASE flush")
            self.side.finish()
            self.side.take(self.conn)
            self.side.abandon()  # the scratch file goes
            self.side = None
        if self.progress:
            self.progress(max(done, total), max(done, total), "")

    def record(self, plan: Plan) -> None:
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
        from . import l3findings

        l3findings.drop(self.conn)
        self.reset_big()

    def reset_big(self) -> None:
        for table in (*schema.BIG_FTS.values(), *(schema.WORDS[tier] for tier in BIG_TIERS), schema.TITLES):
            if table not in self.side_made:  # a side writer's tables are replaced whole
                self.conn.execute(f"INSERT INTO {table}({table}) VALUES('delete-all')")
        if not self.side_made:
            self.conn.execute("DELETE FROM meta WHERE key=?", (schema.TAKE_PENDING,))
        self.conn.execute("DELETE FROM sources WHERE tier IN ('l1', 'l2')")
        self.conn.execute("DELETE FROM gone")
        self.conn.execute(f"DELETE FROM {schema.L1_DAYS}")
        self.conn.execute(f"DELETE FROM {schema.PROMPTS}")
        _set_meta(self.conn, "garbage_bytes", 0)
        self.stats.rebuilt = True

    def add_garbage(self, n: int) -> None:
        value = int(_meta(self.conn, "garbage_bytes") or 0) + n
        _set_meta(self.conn, "garbage_bytes", max(0, value))

    def drop_source(self, row: Row) -> None:
        """A file left: its archive/L1 rows stay (dead) and its source is set aside, so a
        rename, a gzip or a restore from the trash gets them back without reading it."""
        if row.tier in BIG_TIERS:
            self.add_garbage(row.bytes)
            self.conn.execute(
                f"INSERT INTO gone({ROW_COLUMNS}) SELECT {ROW_COLUMNS} FROM sources WHERE id=?", (row.id,)
            )
        else:
            self.delete_small_docs(row.id)
            from . import l3findings

            l3findings.drop(self.conn, row.id)
        self.conn.execute("DELETE FROM sources WHERE id=?", (row.id,))

    def revive(self, source: SourceFile) -> bool:
        """Take back the rows of a file set aside that ``source`` is (renamed, gzipped, restored)."""
        if source.tier not in BIG_TIERS:
            return False
        plain = source.rel.removesuffix(".gz")
        candidates = self.conn.execute(
            f"SELECT {ROW_COLUMNS} FROM gone WHERE inode=? OR rel=? ORDER BY id DESC", (source.inode, plain)
        ).fetchall()
        for found in (Row(*c) for c in candidates):
            if self.same_content(source, found):
                self.conn.execute(
                    f"INSERT INTO sources({ROW_COLUMNS}) SELECT {ROW_COLUMNS} FROM gone WHERE id=?",
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

    def same_content(self, source: SourceFile, row: Row) -> bool:
        if source.kind == row.kind:  # a rename keeps the inode, size and time
            return (source.inode, source.size, source.mtime_ns) == (row.inode, row.size, row.mtime_ns)
        if source.kind != "l1gz" or row.kind != "l1" or row.offset != row.size:
            return False
        from .cutting import gzip_matches

        return gzip_matches(self.paths.root / source.rel, row)

    def delete_small_docs(self, src: int) -> None:
        old = self.conn.execute(
            "SELECT rowid, tier, type, loc, line, date, title, body, session FROM docs WHERE src=?", (src,)
        ).fetchall()
        self.conn.executemany(
            "INSERT INTO fts_small(fts_small, rowid, body) VALUES('delete', ?, ?)",
            [(row[0], schema.trigram_text(row[7])) for row in old],
        )
        self.conn.executemany(
            "INSERT INTO words_small(words_small, rowid, hi, lo) VALUES('delete', ?, ?, ?)",
            [(row[0], *small_word_fields(Doc(row[1], row[2], "", *row[3:]))) for row in old],
        )
        self.conn.execute("DELETE FROM docs WHERE src=?", (src,))

    # -- writing ----------------------------------------------------------------------------
    def start_side(self) -> None:
        """The rows of side.SIDE_TABLES of this bulk load go to a helper process (see side.py)."""
        from .side import SIDE_TABLES, SideWriter

        self.side = SideWriter.start(self.conn, self.paths.side_scratch)
        if self.side is not None:
            self.side_made = tuple(SIDE_TABLES)
            _set_meta(self.conn, schema.TAKE_PENDING, 1)

    def bulk_settings(self, on: bool) -> None:
        """Large loads: merge segments at the end instead of as they come (about twice as fast).

        Not for the tables a side writer filled: it merged them."""
        for table in ("fts_small", *schema.BIG_FTS.values(), *schema.WORDS.values()):
            if table in self.side_made:
                continue
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

    def bulk_left_on(self) -> bool:
        """A large load that was cut short committed its first chunks with merging off; left so,
        every later refresh would pile up segments (crisismerge 2000) and slow every query."""
        row = self.conn.execute("SELECT v FROM fts_small_config WHERE k='automerge'").fetchone()
        return row is not None and row[0] == 0

    def new_source(self, source: SourceFile) -> int:
        cur = self.conn.execute(
            "INSERT INTO sources(rel, tier, kind, size, mtime_ns, inode) VALUES(?, ?, ?, ?, ?, ?)",
            (source.rel, source.tier, source.kind, source.size, source.mtime_ns, source.inode),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def apply_work(self, work: Work) -> None:
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
        else:
            self.insert_big(src, work)
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
        from . import l1days, l3findings

        if source.tier == "l1":
            l1days.write(self.conn, src, work.days, append=work.append and row is not None)
        elif work.findings is not None:  # an L3 summary's decisions and open issues
            l3findings.write(self.conn, src, work.findings)

    def insert_big(self, src: int, work: Work) -> None:
        """An archive's or L1 file's trigram blocks, word rows and title: to the side writer if
        it writes that table, else here."""
        key = src << schema.OFFSET_BITS
        tier = work.source.tier
        rows: list[tuple[str, list[tuple[int, str]] | list[tuple[int, str, str]]]] = []
        if work.blocks:
            rows.append((schema.BIG_FTS[tier], [(key + off, text) for off, text in work.blocks]))
        if work.words:
            rows.append((schema.WORDS[tier], [(key + off, hi, lo) for off, hi, lo in work.words]))
        if work.prompts:
            self.conn.executemany(
                f"INSERT OR IGNORE INTO {schema.PROMPTS}(id) VALUES(?)",
                [(key + off,) for off in work.prompts],
            )
        if work.title is not None and not work.append:
            rows.append((schema.TITLES, [(src, work.title)]))
        for table, values in rows:
            if table in self.side_made and self.side is not None:
                self.side.add(table, values)
            else:
                self.conn.executemany(schema.insert_sql(table), values)

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
            [(rid, schema.trigram_text(d.body)) for rid, d in zip(rowids, docs, strict=True)],
        )
        self.conn.executemany(
            "INSERT INTO words_small(rowid, hi, lo) VALUES(?, ?, ?)",
            [(rid, *small_word_fields(d)) for rid, d in zip(rowids, docs, strict=True)],
        )


def _side_unused(conn: sqlite3.Connection) -> bool:
    from .side import unused

    return unused(conn)


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
        fd = open_no_follow(journal, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        new_inode = os.stat(journal).st_ino
    except OSError:
        return
    with transaction(conn):
        _set_meta(conn, "journal_old", read)
        _set_meta(conn, "journal", f"{new_inode}:0")


def _start_index_job(paths: StorePaths) -> None:
    from ..store.jobs import start_job

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
        except BaseException:
            _give_back(conn, paths.search_db)
            raise
        finally:
            conn.close()
    stats.notes[:0] = notes
    return stats


def _give_back(conn: sqlite3.Connection, path: Path) -> None:
    """After a failed update (rolled back): the space its write-ahead log took goes back.

    A failure on a full disk leaves the log holding the pages written before it (committed
    chunks, and the rolled-back rest); closing would not remove it, since its checkpoint
    cannot grow the database, so the disk would stay full. The log is checkpointed and
    truncated; where even that fails for want of space, the index (derived data) is removed
    whole, to be rebuilt once there is room: searches meanwhile read the files.
    """
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error as exc:
        if not _is_full(exc):
            return
        conn.close()
        schema.remove_db(path)


def _is_full(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name == "SQLITE_FULL" or "disk is full" in str(exc).lower()


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
    return refresh(paths, progress, full=True, lock_timeout=lock_timeout)


#: Vocabulary lookups (the trigrams a short word begins, a word's document count) walk the
#: index and repeat from keystroke to keystroke: kept per index generation, in this process.
_VOCAB_CACHE: OrderedDict[tuple[object, ...], object] = OrderedDict()
VOCAB_CACHE_ENTRIES = 4096


def vocab_cached(conn: sqlite3.Connection, key: tuple[object, ...], compute: Callable[[], T]) -> T:
    """``compute()``, remembered until the index changes (its generation moves on)."""
    pinned = _PINNED.get(id(conn))
    db, generation = pinned[1] if pinned is not None and pinned[0] is conn else _generation_of(conn)
    full = (db, generation, *key)
    if full in _VOCAB_CACHE:
        _VOCAB_CACHE.move_to_end(full)
        return _VOCAB_CACHE[full]  # type: ignore[return-value]
    value = compute()
    _VOCAB_CACHE[full] = value
    if len(_VOCAB_CACHE) > VOCAB_CACHE_ENTRIES:
        _VOCAB_CACHE.popitem(last=False)
    return value


def vocab_peek(conn: sqlite3.Connection, key: tuple[object, ...]) -> object | None:
    """What :func:`vocab_cached` holds for ``key`` at the index's generation, or None: nothing
    is computed (for a lookup worth its cost only once a process has it)."""
    pinned = _PINNED.get(id(conn))
    db, generation = pinned[1] if pinned is not None and pinned[0] is conn else _generation_of(conn)
    return _VOCAB_CACHE.get((db, generation, *key))


def _generation_of(conn: sqlite3.Connection) -> tuple[str, str | None]:
    """The index file ``conn`` reads and its generation: what a vocabulary lookup is kept under."""
    ((_seq, _name, db),) = conn.execute("PRAGMA database_list").fetchall()[:1]
    return str(db), _meta(conn, "generation")


#: Connections whose generation is read once for a whole search (:func:`pinned_generation`).
_PINNED: dict[int, tuple[sqlite3.Connection, tuple[str, str | None]]] = {}


def pinned_generation(conn: sqlite3.Connection) -> _Pinned:
    """Within the ``with``, :func:`vocab_cached` takes the generation ``conn`` had at its start
    instead of reading it on every call (two statements each, about 20 calls a ranked lookup).
    For one search: its lookups are of the index as it was when it began."""
    return _Pinned(conn)


class _Pinned:
    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        _PINNED[id(self.conn)] = (self.conn, _generation_of(self.conn))
        return self.conn

    def __exit__(self, *_exc: object) -> None:
        _PINNED.pop(id(self.conn), None)


BUSY_NOTE = "the search index is being updated by another process: results may be a moment old"


def open_for_search(
    paths: StorePaths,
    tiers: Iterable[str] | None = None,
    *,
    refresh: bool = True,
    lock_wait: float = 0.25,
    progress: Progress | None = None,
    mmap_bytes: int = 0,
) -> _ForSearch:
    """A connection to read the index from, and notes for the person searching (closed at the
    end of the ``with``).

    With the writer lock (waited for at most ``lock_wait``), what changed is indexed first.
    While another process writes, the index is read as it was last committed (WAL), with a
    note. IndexBusy when there is no usable index to read (the caller scans the files).
    ``mmap_bytes`` (see schema.ONE_SHOT_MMAP_BYTES) maps that much of the index into memory
    for the search's reads: a one-shot process reads its pages without a system call each
    (6–7 ms less for an exact or Korean query at 1 GB); a long-lived one leaves it 0, or every
    page it ever touched would count in its resident size.
    """
    return _ForSearch(paths, tiers, refresh, lock_wait, progress, mmap_bytes)


class _ForSearch:
    __slots__ = ("conn", "lock_wait", "mmap_bytes", "paths", "progress", "refresh", "tiers")

    def __init__(
        self,
        paths: StorePaths,
        tiers: Iterable[str] | None,
        refresh: bool,
        lock_wait: float,
        progress: Progress | None,
        mmap_bytes: int,
    ) -> None:
        self.paths, self.tiers, self.refresh = paths, tiers, refresh
        self.lock_wait, self.progress, self.mmap_bytes = lock_wait, progress, mmap_bytes
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> tuple[sqlite3.Connection, list[str]]:
        conn: sqlite3.Connection | None = None
        try:
            with writer(self.paths, self.lock_wait):
                conn, notes = schema.open_index(self.paths.search_db)
                if self.refresh:
                    stats = refresh_locked(self.paths, conn, tiers=self.tiers, progress=self.progress)
                    notes.extend(stats.notes)
        except IndexBusy:
            if conn is not None:
                conn.close()
            conn, notes = _open_reader(self.paths)
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        if self.mmap_bytes > 0:
            try:
                conn.execute(f"PRAGMA mmap_size={int(self.mmap_bytes)}")
            except BaseException:
                conn.close()  # no with-block runs to close it
                raise
        self.conn = conn
        return conn, notes

    def __exit__(self, *exc: object) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
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
