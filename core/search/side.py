"""A bulk build's second writer: a helper process that writes some of the index's tables.

SQLite lets one process write a database file at a time, and a first build of a large store
is bound by that writer. During a bulk load into an index whose SIDE_TABLES are still empty
(a first build, a reindex, a compaction), their rows (the archive and L1 trigram indexes,
the archive word index and the session titles: about a third of the writing) go instead to
a helper process that writes them into a scratch file (``StorePaths.side_scratch``) on the
other core, merging their segments there too. At the end the writer takes the finished
tables over: it replaces their FTS5 pages with the scratch file's, a copy of pages rather
than a second tokenizing. The L1 word index, the biggest, stays with the writer.

The writer does not touch those tables through FTS5 in that transaction before the take
(FTS5 keeps a table's structure cached per connection), and ``meta`` holds
``schema.TAKE_PENDING`` until the take commits: a build cut short is rebuilt by the next
refresh, so no committed file is left without its rows.

The helper is sent bounded work: at most SIDE_WINDOW batches in flight, each answered before
another is sent (as the reading pool does), so no pipe can fill up and block.

A helper that fails (raises, or dies) fails that build, as a failing writer would: the rows
it held are gone with it, and the build is rolled back or rebuilt as above. It leaves a mark
beside the scratch file (:func:`failed_mark`), so the next builds of that store are written by
the writer alone rather than failing the same way again.
"""

from __future__ import annotations

import os
import sqlite3
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from ..basics.platform import open_no_follow
from . import schema

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from concurrent.futures import Future, ProcessPoolExecutor
    from typing import TypeVar

    T = TypeVar("T")

#: The tables a helper writes (see schema.BIG_COLUMNS); the L1 word index stays with the writer.
SIDE_TABLES = (*schema.BIG_FTS.values(), schema.WORDS["l2"], schema.TITLES)
#: Rows are sent in batches of about this many characters; at most SIDE_WINDOW in flight.
SIDE_BATCH_CHARS = 4 << 20
SIDE_WINDOW = 3
#: The FTS5 shadow tables that hold a contentless table's index (``_docsize`` if it keeps one).
_SHADOWS = {"_data": ("id", "block"), "_idx": ("segid", "term", "pgno"), "_docsize": ("id", "sz")}

Row = tuple[object, ...]  # (rowid, column values…)

# -- the helper process ----------------------------------------------------------------------

_conn: sqlite3.Connection | None = None  # set in the helper process only (its initializer)


def _open_scratch(path: str, tables_sql: list[str]) -> None:
    """The helper's start: the tables made as the index made them, merging left for the end."""
    global _conn
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=OFF")  # scratch: a helper that dies leaves it unused
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-65536")
    for sql in tables_sql:
        conn.execute(sql)
    for table in SIDE_TABLES:
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('automerge', 0)")
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('crisismerge', 2000)")
    conn.execute("BEGIN")
    _conn = conn


def _write(rows: dict[str, list[Row]]) -> int:
    assert _conn is not None
    for table, values in rows.items():
        _conn.executemany(schema.insert_sql(table), values)
    return sum(len(values) for values in rows.values())


def _finish() -> None:
    """Merge the segments as the writer's bulk load does, and commit."""
    assert _conn is not None
    for table in SIDE_TABLES:
        _conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('automerge', 4)")
        _conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('crisismerge', 16)")
        if table == schema.BIG_FTS["l1"]:  # as indexer.bulk_settings: bounded merge work
            _conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('merge', 500)")
        else:
            _conn.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
    _conn.execute("COMMIT")


# -- the writer's side -----------------------------------------------------------------------


class SideFailed(Exception):
    """The helper process failed; what it was sent is lost with it."""


def failed_mark(scratch: Path) -> Path:
    """Present once a helper failed for this store: its builds go without one from then on."""
    return scratch.with_name(scratch.name + ".failed")


def _helper_failed(scratch: Path, error: BaseException) -> SideFailed:
    try:
        os.close(open_no_follow(failed_mark(scratch), os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:  # the mark is a help, not a need: this build fails all the same
        pass
    return SideFailed(f"the search index's second writer failed: {error}")


def remove_scratch(path: Path) -> None:
    for file in schema.db_files(path):
        try:
            file.unlink()
        except OSError:  # absent, or not a file: making the scratch file then fails
            pass


def unused(conn: sqlite3.Connection) -> bool:
    """No segment in any of SIDE_TABLES (read from their pages, not through FTS5)."""
    return all(conn.execute(f"SELECT 1 FROM {table}_idx LIMIT 1").fetchone() is None for table in SIDE_TABLES)


class SideWriter:
    """The helper process and what was sent to it; ``start`` gives None when none can run."""

    __slots__ = ("closing", "pending", "pool", "rows", "scratch", "size")

    def __init__(self, pool: ProcessPoolExecutor, scratch: Path) -> None:
        self.pool = pool
        self.scratch = scratch
        self.pending: deque[Future[int]] = deque()
        self.rows: dict[str, list[Row]] = {}
        self.size = 0
        self.closing: Future[None] | None = None

    @classmethod
    def start(cls, conn: sqlite3.Connection, scratch: Path) -> SideWriter | None:
        if os.path.lexists(failed_mark(scratch)):
            return None
        from concurrent.futures import ProcessPoolExecutor

        from .cutting import mp_context

        marks = ",".join("?" * len(SIDE_TABLES))
        tables_sql = [
            sql
            for (sql,) in conn.execute(
                f"SELECT sql FROM sqlite_master WHERE type='table' AND name IN ({marks})", tuple(SIDE_TABLES)
            )
        ]
        remove_scratch(scratch)
        try:
            fd = open_no_follow(scratch, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
            pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=mp_context(),
                initializer=_open_scratch,
                initargs=(str(scratch), tables_sql),
            )
        except OSError:
            remove_scratch(scratch)
            return None
        return cls(pool, scratch)

    def add(self, table: str, rows: Sequence[Row]) -> None:
        """Rows (rowid, text…) for ``table``, one of SIDE_TABLES."""
        self.rows.setdefault(table, []).extend(rows)
        self.size += sum(len(text) for row in rows for text in row[1:] if isinstance(text, str))
        if self.size >= SIDE_BATCH_CHARS:
            self.send()

    def send(self) -> None:
        if not self.rows:
            return
        while len(self.pending) >= SIDE_WINDOW:
            self.result(self.pending.popleft())
        self.pending.append(self.submit(_write, self.rows))
        self.rows, self.size = {}, 0

    def submit(self, fn: Callable[..., T], *args: object) -> Future[T]:
        try:
            return self.pool.submit(fn, *args)
        except Exception as error:  # a pool whose process died is broken
            raise _helper_failed(self.scratch, error) from error

    def result(self, future: Future[T]) -> T:
        """What the helper answered; SideFailed (and the mark) if it raised or died."""
        try:
            return future.result()
        except Exception as error:
            raise _helper_failed(self.scratch, error) from error

    def wind_up(self) -> None:
        """Send what is left and ask for the merge and commit, without waiting (the writer
        merges its own tables meanwhile)."""
        if self.closing is None:
            self.send()
            self.closing = self.submit(_finish)

    def finish(self) -> None:
        """Everything written, merged and committed in the scratch file (raises what the helper raised)."""
        try:
            self.wind_up()
            while self.pending:
                self.result(self.pending.popleft())
            assert self.closing is not None
            self.result(self.closing)
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def abandon(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        remove_scratch(self.scratch)

    def take(self, conn: sqlite3.Connection) -> None:
        """Replace the writer's (unused) SIDE_TABLES with the scratch file's, in its transaction."""
        side = sqlite3.connect(self.scratch)
        try:
            shadows = {name for (name,) in side.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            for table in SIDE_TABLES:
                for suffix, columns in _SHADOWS.items():
                    if table + suffix not in shadows:
                        continue
                    names = ", ".join(columns)
                    conn.execute(f"DELETE FROM {table}{suffix}")
                    conn.executemany(
                        f"INSERT INTO {table}{suffix}({names}) VALUES({', '.join('?' * len(columns))})",
                        side.execute(f"SELECT {names} FROM {table}{suffix}"),
                    )
        finally:
            side.close()
        conn.execute("DELETE FROM meta WHERE key=?", (schema.TAKE_PENDING,))
