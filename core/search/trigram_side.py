"""A first build's trigram index, written by a helper process beside the word index.

SQLite lets one process write a database file at a time, and a first build of a large store
is bound by that writer: the word index and the trigram index both go through it. During a
bulk load into an index whose trigram tables are still empty (a first build, a reindex, a
compaction), the trigram rows go instead to a helper process that writes them into a scratch
file (``StorePaths.trigram_scratch``) on the other core, merging its segments there too. At
the end the writer takes the finished trigram tables over: it replaces the (unused) tables'
FTS5 pages with the scratch file's, a copy of pages rather than a second tokenizing.

The writer's FTS5 tables ``fts_l1``/``fts_l2`` are not touched through FTS5 in that
transaction before the take (FTS5 keeps a table's structure cached per connection), and
``meta`` holds ``schema.TAKE_PENDING`` until the take commits: a build cut short is rebuilt by the next
refresh, so no committed file is left without its trigram rows.

The helper is sent bounded work: at most SIDE_WINDOW batches in flight, each answered before
another is sent (as the reading pool does), so no pipe can fill up and block.
"""

from __future__ import annotations

import os
import sqlite3
from collections import deque
from pathlib import Path

from memkeeper.core.search import schema

TYPE_CHECKING = False  # no typing at run time: `memkeeper search` pays for every import

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

#: Rows are sent in batches of about this many characters; at most SIDE_WINDOW in flight.
SIDE_BATCH_CHARS = 4 << 20
SIDE_WINDOW = 3
#: The FTS5 shadow tables that hold a contentless, columnsize=0 table's index.
_SHADOWS = ("_data", "_idx")

# -- the helper process ----------------------------------------------------------------------

_conn: sqlite3.Connection | None = None  # set in the helper process only (its initializer)


def _open_scratch(path: str) -> None:
    global _conn
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=OFF")  # scratch: a helper that dies leaves it unused
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-65536")
    for table in schema.BIG_FTS.values():
        conn.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(body, {schema.FTS_OPTIONS})")
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('automerge', 0)")
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('crisismerge', 2000)")
    conn.execute("BEGIN")
    _conn = conn


def _write(rows: list[tuple[str, int, str]]) -> int:
    assert _conn is not None
    for table in schema.BIG_FTS.values():
        _conn.executemany(
            f"INSERT INTO {table}(rowid, body) VALUES(?, ?)", [(r, t) for name, r, t in rows if name == table]
        )
    return len(rows)


def _finish() -> None:
    """Merge the segments as the writer's bulk load does, and commit."""
    assert _conn is not None
    for table in schema.BIG_FTS.values():
        _conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('automerge', 4)")
        _conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('crisismerge', 16)")
        if table == schema.BIG_FTS["l1"]:  # as indexer.bulk_settings: bounded merge work
            _conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('merge', 500)")
        else:
            _conn.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
    _conn.execute("COMMIT")


# -- the writer's side -----------------------------------------------------------------------


def remove_scratch(path: Path) -> None:
    for file in schema.db_files(path):
        try:
            file.unlink()
        except OSError:  # absent, or not a file: making the scratch file then fails
            pass


class TrigramSide:
    """The helper process and what was sent to it; ``start`` gives None when none can run."""

    __slots__ = ("pending", "pool", "rows", "scratch", "size")

    def __init__(self, pool: ProcessPoolExecutor, scratch: Path) -> None:
        self.pool = pool
        self.scratch = scratch
        self.pending: deque[Future[int]] = deque()
        self.rows: list[tuple[str, int, str]] = []
        self.size = 0

    @classmethod
    def start(cls, scratch: Path) -> TrigramSide | None:
        from concurrent.futures import ProcessPoolExecutor

        from memkeeper.core.search.cutting import mp_context

        remove_scratch(scratch)
        try:
            fd = os.open(scratch, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            os.close(fd)
            pool = ProcessPoolExecutor(
                max_workers=1, mp_context=mp_context(), initializer=_open_scratch, initargs=(str(scratch),)
            )
        except OSError:
            remove_scratch(scratch)
            return None
        return cls(pool, scratch)

    def add(self, table: str, key: int, blocks: list[tuple[int, str]]) -> None:
        for offset, text in blocks:
            self.rows.append((table, key + offset, text))
            self.size += len(text)
        if self.size >= SIDE_BATCH_CHARS:
            self.send()

    def send(self) -> None:
        if not self.rows:
            return
        while len(self.pending) >= SIDE_WINDOW:
            self.pending.popleft().result()
        self.pending.append(self.pool.submit(_write, self.rows))
        self.rows, self.size = [], 0

    def finish(self) -> None:
        """Everything written, merged and committed in the scratch file (raises what the helper raised)."""
        try:
            self.send()
            while self.pending:
                self.pending.popleft().result()
            self.pool.submit(_finish).result()
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def abandon(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        remove_scratch(self.scratch)

    def take(self, conn: sqlite3.Connection) -> None:
        """Replace the writer's (unused) trigram tables with the scratch file's, in its transaction."""
        side = sqlite3.connect(self.scratch)
        try:
            for table in schema.BIG_FTS.values():
                for shadow in _SHADOWS:
                    conn.execute(f"DELETE FROM {table}{shadow}")
                    columns = "id, block" if shadow == "_data" else "segid, term, pgno"
                    conn.executemany(
                        f"INSERT INTO {table}{shadow}({columns}) VALUES({', '.join('?' * (columns.count(',') + 1))})",
                        side.execute(f"SELECT {columns} FROM {table}{shadow}"),
                    )
        finally:
            side.close()
        conn.execute("DELETE FROM meta WHERE key=?", (schema.TAKE_PENDING,))
