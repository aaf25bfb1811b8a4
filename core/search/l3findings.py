"""Each L3 summary's decisions and open issues, kept in the search index (``l3_findings``).

The indexer reads every summary it indexes (the small tier); it reads the same bytes by
the activity screen's rule on the way (:func:`memkeeper.core.summaries.fields.findings_of`),
so the activity screen (:mod:`memkeeper.core.search.history`) takes the list of every summary the
index has current instead of opening thousands of files. One row per summary, keyed by its
``sources`` id (ids are never reused), holding its rows as compact JSON:

- a summary indexed (new, regenerated, restored from the trash) gets its row, in the same
  transaction as its docs;
- a summary that left (forgotten, removed) loses it with its docs;
- a rebuild of the index empties the table (every summary is read again).

The table is additive: created where it is missing, and the summaries of an index built
before it are read once by a background refresh (:func:`fill`).
"""

from __future__ import annotations

import json
import os
import sqlite3

from ..store.atomic import open_read
from ..store.paths import StorePaths
from ..summaries.fields import Row, findings_of
from .l1days import fill_rows
from .schema import L3_FINDINGS, L3_FINDINGS_DDL

#: ``meta`` key set once every summary indexed before the table existed has been read.
FILLED = "l3_findings_filled"

Signature = tuple[int, int, int]
"""(inode, size, mtime_ns), as ``os.stat`` gives them."""


def ensure(conn: sqlite3.Connection) -> None:
    """Create the table in an index made before it (no-op otherwise)."""
    conn.execute(L3_FINDINGS_DDL)


def to_text(rows: list[Row]) -> str:
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))


def of_bytes(data: bytes) -> str:
    """A summary file's decisions and open issues, as the table keeps them."""
    return to_text(findings_of(data))


def write(conn: sqlite3.Connection, src: int, found: str) -> None:
    """Record the decisions and open issues (:func:`of_bytes`) of summary ``src`` as indexed."""
    conn.execute(f"INSERT OR REPLACE INTO {L3_FINDINGS}(src, found) VALUES(?, ?)", (src, found))


def drop(conn: sqlite3.Connection, src: int | None = None) -> None:
    """Forget the row of summary ``src`` (every row: None)."""
    if src is None:
        conn.execute(f"DELETE FROM {L3_FINDINGS}")
    else:
        conn.execute(f"DELETE FROM {L3_FINDINGS} WHERE src=?", (src,))


def fill(paths: StorePaths, conn: sqlite3.Connection) -> int:
    """Read the summaries the index holds without a row (an index built before the table);
    once per index, in the caller's writer lock, in one transaction. Returns summaries read."""
    if conn.execute("SELECT 1 FROM meta WHERE key=?", (FILLED,)).fetchone() is not None:
        return 0
    ensure(conn)
    missing = conn.execute(
        f"SELECT s.id, s.rel, s.inode, s.size, s.mtime_ns FROM sources s LEFT JOIN {L3_FINDINGS} f"
        " ON f.src = s.id WHERE s.tier='l3' AND f.src IS NULL"
    ).fetchall()
    rows = (
        (src, _indexed_bytes(paths, rel, (inode, size, mtime))) for src, rel, inode, size, mtime in missing
    )
    return fill_rows(
        conn, FILLED, rows, lambda src, data: write(conn, src, of_bytes(data)), 1 << 62
    )  # one transaction


def _indexed_bytes(paths: StorePaths, rel: str, signature: Signature) -> bytes | None:
    """The bytes of a summary while it is the file the index read (same inode, size, time)."""
    try:
        with open_read(paths.root / rel) as handle:
            st = os.fstat(handle.fileno())
            if (st.st_ino, st.st_size, st.st_mtime_ns) != signature:
                return None
            return handle.read()
    except OSError:
        return None


def listed(conn: sqlite3.Connection) -> dict[str, tuple[Signature, str]]:
    """{summary file name: (its signature when indexed, its rows as :func:`to_text` wrote them)}."""
    rows = conn.execute(
        f"SELECT s.rel, s.inode, s.size, s.mtime_ns, f.found FROM sources s"
        f" JOIN {L3_FINDINGS} f ON f.src = s.id WHERE s.tier='l3'"
    ).fetchall()
    return {rel: ((inode, size, mtime), found) for rel, inode, size, mtime, found in rows}
