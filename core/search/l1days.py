"""Each L1 file's prompts and tool calls per day, kept in the search index (``l1_days``).

The indexer reads every L1 line it indexes; it counts those same bytes on the way
(:func:`memkeeper.core.capture.l1_counts.count_lines`, the activity screen's rule), so the activity
screen (:mod:`memkeeper.core.search.history`) reads the counts of every file the index has
current instead of reading the whole store. One row per file, keyed by its ``sources`` id;
a row exists once every indexed line of the file is counted:

- a file read whole (new, rewritten) gets its row; an append adds the new lines' counts;
- a rename or a gzip keeps the ``sources`` id, and so the row; a file that left keeps its
  row with its set-aside source (``gone``, for a restore) and is no longer listed;
- a rebuild of the L1 index empties the table (every file is counted again as it is read).

The table is additive: created where it is missing, and the files of an index built
before it are counted once by a background refresh (:func:`fill`, which reads each file
as far as it is indexed). A gzip is counted whole: it never grows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture.l1_counts import DayCounts, day_counts, from_text, merged, to_text
from ..store.atomic import open_read
from ..store.paths import StorePaths
from .schema import L1_DAYS, L1_DAYS_DDL

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable

#: ``meta`` key set once every L1 file indexed before the table existed has been counted.
FILLED = "l1_days_filled"
#: A fill commits after reading this many bytes (what it counted stays counted if stopped).
FILL_COMMIT_BYTES = 64 << 20


def ensure(conn: sqlite3.Connection) -> None:
    """Create the table in an index made before it (no-op otherwise)."""
    conn.execute(L1_DAYS_DDL)


def write(conn: sqlite3.Connection, src: int, days: DayCounts, append: bool) -> None:
    """Record the counts of what the indexer read of file ``src``: the whole file, or an
    ``append`` (added to the file's row; left alone when the file was never counted whole)."""
    if not append:
        conn.execute(f"INSERT OR REPLACE INTO {L1_DAYS}(src, days) VALUES(?, ?)", (src, to_text(days)))
        return
    if not days:
        return
    row = conn.execute(f"SELECT days FROM {L1_DAYS} WHERE src=?", (src,)).fetchone()
    if row is None:
        return  # counted by a fill, whole
    try:
        had = from_text(row[0])
    except (ValueError, TypeError, IndexError):
        conn.execute(f"DELETE FROM {L1_DAYS} WHERE src=?", (src,))  # a fill counts it again
        return
    conn.execute(f"UPDATE {L1_DAYS} SET days=? WHERE src=?", (to_text(merged(had, days)), src))


def fill(paths: StorePaths, conn: sqlite3.Connection) -> int:
    """Count the L1 files the index holds without counts (an index built before the table);
    once per index, in the caller's writer lock, committing as it goes. Returns files counted."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (FILLED,)).fetchone()
    if row is not None:
        return 0
    ensure(conn)
    missing = conn.execute(
        f"SELECT s.id, s.rel, s.kind, s.offset FROM sources s LEFT JOIN {L1_DAYS} d ON d.src = s.id"
        " WHERE s.tier='l1' AND d.src IS NULL"
    ).fetchall()
    rows = ((src, _indexed_bytes(paths, rel, kind == "l1gz", offset)) for src, rel, kind, offset in missing)
    return fill_rows(conn, FILLED, rows, lambda src, data: _write_counts(conn, src, data), FILL_COMMIT_BYTES)


def _write_counts(conn: sqlite3.Connection, src: int, data: bytes) -> None:
    conn.execute(
        f"INSERT OR REPLACE INTO {L1_DAYS}(src, days) VALUES(?, ?)", (src, to_text(day_counts(data)))
    )


def fill_rows(
    conn: sqlite3.Connection,
    flag: str,
    rows: Iterable[tuple[int, bytes | None]],
    write_row: Callable[[int, bytes], None],
    commit_bytes: int,
) -> int:
    """Write each (source id, its bytes) with ``write_row`` (None: gone, changed or unreadable,
    left to the next refresh), committing every ``commit_bytes``; then set meta ``flag``.
    Returns the rows written; an error rolls back what is not committed."""
    done = pending = 0
    conn.execute("BEGIN IMMEDIATE")
    try:
        for src, data in rows:
            if data is None:
                continue
            write_row(src, data)
            done += 1
            pending += len(data)
            if pending >= commit_bytes:
                conn.execute("COMMIT")
                conn.execute("BEGIN IMMEDIATE")
                pending = 0
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, '1')", (flag,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return done


def _indexed_bytes(paths: StorePaths, rel: str, gz: bool, offset: int) -> bytes | None:
    """The bytes of an L1 file the index read: up to its offset (a gzip: all of it)."""
    try:
        with open_read(paths.root / rel) as handle:
            data = handle.read() if gz else handle.read(offset)
    except OSError:
        return None
    if not gz:
        return data if len(data) == offset else None
    import gzip

    try:
        return gzip.decompress(data)
    except (OSError, EOFError, ValueError):
        return None


Signature = tuple[int, int, int]
"""(inode, size, mtime_ns), as ``os.stat`` gives them."""


def counted(conn: sqlite3.Connection) -> dict[str, tuple[Signature, str]]:
    """{L1 file name: (its signature when indexed, its counts as :func:`l1_counts.to_text` wrote
    them)} for every file whose every line is counted (a plain file indexed to its end)."""
    rows = conn.execute(
        f"SELECT s.rel, s.inode, s.size, s.mtime_ns, s.kind, s.offset, d.days FROM sources s"
        f" JOIN {L1_DAYS} d ON d.src = s.id WHERE s.tier='l1'"
    ).fetchall()
    return {
        rel.rsplit("/", 1)[-1]: ((inode, size, mtime), days)
        for rel, inode, size, mtime, kind, offset, days in rows
        if kind == "l1gz" or offset == size
    }
