"""Keeping the search index in step with the files, incrementally.

``refresh`` compares every searchable file's (size, mtime_ns) with what the index
recorded and re-reads only what changed: an L1 file that grew is read from its last
offset (whole lines only; the JS plugin's files end without a newline, which is handled),
a rewritten file is read again, a removed one leaves the index. One writer at a time
(``.state/search.lock``); readers are never blocked (WAL).

Rows of a removed or rewritten archive or L1 file cannot be deleted from a contentless
FTS table without their old text, so they stay as dead rows that no source id points to;
when they outweigh a third of the live text the big indexes are rebuilt.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from memkeeper.core.lock import LockTimeout, file_lock
from memkeeper.core.search import schema
from memkeeper.core.search.sources import (
    BIG_TIERS,
    BLOCK_CHARS,
    Doc,
    SourceFile,
    discover,
    docs_of,
    l1_doc,
    l1_session_from_name,
    name_date,
    read_source,
)
from memkeeper.core.store import StorePaths

Progress = Callable[[int, int, str], None]  # (bytes done, bytes total, current file)

FINGERPRINT_BYTES = 4096
COMMIT_BYTES = 64 << 20
BULK_BYTES = 32 << 20
MIN_GARBAGE_BYTES = 64 << 20
LOCK_NAME = "search.lock"


class IndexBusy(Exception):
    """Another process is writing the index; the caller answers by a full scan."""


@dataclass
class RefreshStats:
    files_read: int = 0
    files_removed: int = 0
    bytes_read: int = 0
    docs_added: int = 0
    rebuilt: bool = False
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


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
    return hashlib.sha1(data).digest()  # noqa: S324 - change detection, not security


def _read_range(path: Path, start: int, length: int) -> bytes:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, start))
            return handle.read(length)
    except OSError:
        return b""


@dataclass
class _Row:
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


class _Updater:
    def __init__(self, paths: StorePaths, conn: sqlite3.Connection, progress: Progress | None) -> None:
        self.paths = paths
        self.conn = conn
        self.progress = progress
        self.stats = RefreshStats()
        self.pending = 0
        self.in_tx = False
        self.next_small_rowid = (conn.execute("SELECT max(rowid) FROM docs").fetchone()[0] or 0) + 1

    # -- transactions ---------------------------------------------------------------------
    def begin(self) -> None:
        if not self.in_tx:
            self.conn.execute("BEGIN IMMEDIATE")
            self.in_tx = True

    def commit(self) -> None:
        if self.in_tx:
            self.conn.execute("COMMIT")
            self.in_tx = False
            self.pending = 0

    def maybe_commit(self) -> None:
        if self.pending >= COMMIT_BYTES:
            self.commit()
            self.begin()

    # -- meta -----------------------------------------------------------------------------
    def meta_int(self, key: str) -> int:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        try:
            return int(row[0]) if row else 0
        except ValueError:
            return 0

    def set_meta(self, key: str, value: int | str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, str(value)))

    def add_garbage(self, n: int) -> None:
        self.set_meta("garbage_bytes", self.meta_int("garbage_bytes") + n)

    # -- the work -------------------------------------------------------------------------
    def rows(self) -> dict[str, _Row]:
        cur = self.conn.execute(
            "SELECT id, rel, tier, kind, size, mtime_ns, offset, next_line, open_tail, head_fp, tail_fp, bytes"
            " FROM sources"
        )
        return {r[1]: _Row(*r) for r in cur}

    def run(self, full: bool) -> RefreshStats:
        start = time.monotonic()
        if full:
            self.reset_all()
        found = discover(self.paths)
        known = self.rows()
        if not full and self.compaction_due(known):
            self.stats.notes.append("search index compacted (rebuilt the archive and L1 indexes)")
            self.reset_big()
            known = self.rows()
        present = {s.rel for s in found}
        todo = [s for s in found if self.changed(s, known.get(s.rel))]
        total = sum(max(0, s.size - (known[s.rel].offset if s.rel in known else 0)) for s in todo)
        bulk = total >= BULK_BYTES
        self.begin()
        try:
            for rel, row in known.items():
                if rel not in present:
                    self.drop_source(row)
                    self.stats.files_removed += 1
            if bulk:
                self.bulk_settings(True)
            done = 0
            for source in todo:
                if self.progress:
                    self.progress(done, total, source.rel)
                done += self.update_source(source, known.get(source.rel))
                self.maybe_commit()
            if bulk:
                self.bulk_settings(False)
            if self.progress:
                self.progress(total, total, "")
            self.commit()
        except BaseException:
            if self.in_tx:
                self.conn.execute("ROLLBACK")
                self.in_tx = False
            raise
        self.stats.seconds = time.monotonic() - start
        return self.stats

    def changed(self, source: SourceFile, row: _Row | None) -> bool:
        return row is None or row.size != source.size or row.mtime_ns != source.mtime_ns or row.kind != source.kind

    def compaction_due(self, known: dict[str, _Row]) -> bool:
        garbage = self.meta_int("garbage_bytes")
        live = sum(r.bytes for r in known.values() if r.tier in BIG_TIERS)
        return garbage > max(MIN_GARBAGE_BYTES, live // 3)

    def reset_all(self) -> None:
        self.begin()
        for table in ("docs", "sources", "fts_small"):
            self.conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
        self.commit()
        self.reset_big()

    def reset_big(self) -> None:
        self.begin()
        for table in schema.BIG_FTS.values():
            self.conn.execute(f"DROP TABLE IF EXISTS {table}")
            self.conn.execute(
                f"CREATE VIRTUAL TABLE {table} USING fts5(body, {schema._FTS_BIG_OPTIONS})"
            )
        self.conn.execute("DELETE FROM sources WHERE tier IN ('l1', 'l2')")
        self.set_meta("garbage_bytes", 0)
        self.commit()
        self.stats.rebuilt = True

    def bulk_settings(self, on: bool) -> None:
        """Large loads: merge segments at the end instead of as they come (about twice as fast)."""
        for table in ("fts_small", *schema.BIG_FTS.values()):
            if on:
                self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('automerge', 0)")
                self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('crisismerge', 2000)")
            else:
                self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('automerge', 4)")
                self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('crisismerge', 16)")
                self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('merge', 500)")

    def drop_source(self, row: _Row) -> None:
        if row.tier in BIG_TIERS:
            self.add_garbage(row.bytes)
        else:
            self.delete_small_docs(row.id)
        self.conn.execute("DELETE FROM sources WHERE id=?", (row.id,))

    def delete_small_docs(self, src: int) -> None:
        self.conn.execute("DELETE FROM fts_small WHERE rowid IN (SELECT rowid FROM docs WHERE src=?)", (src,))
        self.conn.execute("DELETE FROM docs WHERE src=?", (src,))

    def new_source(self, source: SourceFile) -> int:
        cur = self.conn.execute(
            "INSERT INTO sources(rel, tier, kind, size, mtime_ns) VALUES(?, ?, ?, ?, ?)",
            (source.rel, source.tier, source.kind, source.size, source.mtime_ns),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def update_source(self, source: SourceFile, row: _Row | None) -> int:
        """Bring one changed file up to date; returns the bytes read."""
        self.stats.files_read += 1
        if source.kind == "l1" and row is not None and row.kind == "l1":
            appended = self.try_append(source, row)
            if appended is not None:
                return appended
        if row is not None:
            self.drop_source(row)
        src = self.new_source(source)
        data = read_source(self.paths, source)
        if source.tier in BIG_TIERS:
            self.index_big(source, src, data, 0, 1)
        else:
            self.index_small(source, src, data)
        self.stats.bytes_read += len(data)
        self.pending += len(data)
        return len(data)

    def try_append(self, source: SourceFile, row: _Row) -> int | None:
        """Read only what was appended to an L1 file; None when it was rewritten instead."""
        path = self.paths.root / source.rel
        if source.size < row.offset:
            return None
        head = _read_range(path, 0, min(FINGERPRINT_BYTES, row.offset))
        tail_start = max(0, row.offset - FINGERPRINT_BYTES)
        tail = _read_range(path, tail_start, row.offset - tail_start)
        if _fp(head) != row.head_fp or _fp(tail) != row.tail_fp:
            return None
        data = _read_range(path, row.offset, source.size - row.offset)
        start, first_line = 0, row.next_line
        if row.open_tail:
            # the last line was indexed without its newline: what follows must start a new line
            if not data:
                pass
            elif not data.startswith(b"\n"):
                return None
            else:
                start, first_line = 1, row.next_line + 1
        if data[start:] or start:
            self.index_big(source, row.id, data, start, first_line, base=row.offset, row=row)
        else:
            self.conn.execute(
                "UPDATE sources SET size=?, mtime_ns=? WHERE id=?", (source.size, source.mtime_ns, row.id)
            )
        self.stats.bytes_read += len(data)
        self.pending += len(data)
        return len(data)

    def index_small(self, source: SourceFile, src: int, data: bytes) -> None:
        docs = list(docs_of(source, data))
        rowids = range(self.next_small_rowid, self.next_small_rowid + len(docs))
        self.next_small_rowid += len(docs)
        self.conn.executemany(
            "INSERT INTO docs(rowid, src, tier, type, loc, line, date, title, session)"
            " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (rid, src, d.tier, d.type, d.loc, d.line, d.date, d.title, d.session)
                for rid, d in zip(rowids, docs, strict=True)
            ],
        )
        self.conn.executemany(
            "INSERT INTO fts_small(rowid, body) VALUES(?, ?)",
            [(rid, d.body) for rid, d in zip(rowids, docs, strict=True)],
        )
        self.stats.docs_added += len(docs)
        self.conn.execute(
            "UPDATE sources SET bytes=?, offset=? WHERE id=?", (len(data), len(data), src)
        )

    def index_big(
        self,
        source: SourceFile,
        src: int,
        data: bytes,
        start: int,
        first_line: int,
        base: int = 0,
        row: _Row | None = None,
    ) -> None:
        """Index ``data[start:]`` (found at file offset ``base``) of an archive or L1 file."""
        table = schema.BIG_FTS[source.tier]
        key = src << schema.OFFSET_BITS
        blocks = _Blocks(key + base)
        offset, next_line, open_tail = len(data), first_line, 0
        if source.tier == "l1" and source.kind == "l1":
            offset, next_line, open_tail = _consume_l1(source, data, start, first_line, blocks)
        else:
            for doc in docs_of(source, data):
                blocks.add(int(doc.loc), doc.body)
        rows = blocks.finish()
        self.conn.executemany(f"INSERT INTO {table}(rowid, body) VALUES(?, ?)", rows)  # noqa: S608
        self.stats.docs_added += blocks.docs
        end = base + offset
        path = self.paths.root / source.rel
        head_fp = row.head_fp if row is not None and row.offset >= FINGERPRINT_BYTES else None
        if head_fp is None:
            head_fp = _fp(_read_range(path, 0, min(FINGERPRINT_BYTES, end)))
        tail_start = max(0, end - FINGERPRINT_BYTES)
        if base <= tail_start:
            tail = data[tail_start - base : end - base]
        else:
            tail = _read_range(path, tail_start, end - tail_start)
        indexed = (row.bytes if row is not None else 0) + offset
        self.conn.execute(
            "UPDATE sources SET size=?, mtime_ns=?, offset=?, next_line=?, open_tail=?, head_fp=?, tail_fp=?,"
            " bytes=? WHERE id=?",
            (source.size, source.mtime_ns, end, next_line, open_tail, head_fp, _fp(tail), indexed, src),
        )


class _Blocks:
    """Groups consecutive docs into index rows of about BLOCK_CHARS (see sources.BLOCK_CHARS)."""

    def __init__(self, key: int) -> None:
        self.key = key
        self.rows: list[tuple[int, str]] = []
        self.start = -1
        self.parts: list[str] = []
        self.size = 0
        self.docs = 0

    def add(self, offset: int, body: str) -> None:
        if self.start < 0:
            self.start = offset
        self.parts.append(body)
        self.size += len(body)
        self.docs += 1
        if self.size >= BLOCK_CHARS:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            self.rows.append((self.key + self.start, "\n".join(self.parts)))
        self.start, self.parts, self.size = -1, [], 0

    def finish(self) -> list[tuple[int, str]]:
        self.flush()
        return self.rows


def _consume_l1(
    source: SourceFile, data: bytes, start: int, first_line: int, blocks: _Blocks
) -> tuple[int, int, int]:
    """Index whole lines of ``data`` from ``start``; returns (offset after them, next line, open tail).

    A last line without a newline is taken if it parses (the JS plugin writes files that
    way) and the tail is then "open": the next append must begin with a newline. A last
    line that does not parse is being written: it is left for the next refresh.
    """
    fallback = name_date(source.name)
    session = l1_session_from_name(source.name)
    pos = start
    line = first_line
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        if nl < 0:
            raw = data[pos:]
            if not _parses(raw):
                return pos, line, 0
            doc = l1_doc(source.rel, fallback, session, pos, line, raw)
            if doc:
                blocks.add(pos, doc.body)
            return n, line, 1
        doc = l1_doc(source.rel, fallback, session, pos, line, data[pos:nl])
        if doc:
            blocks.add(pos, doc.body)
        pos = nl + 1
        line += 1
    return n, line, 0


def _parses(raw: bytes) -> bool:
    import json

    text = raw.strip()
    if not text:
        return True
    try:
        json.loads(text)
    except ValueError:
        try:
            json.loads(text.decode("utf-8", "replace"))
        except ValueError:
            return False
    return True


def refresh(
    paths: StorePaths,
    progress: Progress | None = None,
    *,
    full: bool = False,
    lock_timeout: float = 30.0,
) -> RefreshStats:
    """Bring the index up to date (incrementally unless ``full``); IndexBusy if another writer holds it."""
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


def refresh_locked(paths: StorePaths, conn: sqlite3.Connection, full: bool = False) -> RefreshStats:
    """``refresh`` for a caller that already holds the writer lock and a connection."""
    return _Updater(paths, conn, None).run(full)


def reindex(paths: StorePaths, progress: Progress | None = None, *, lock_timeout: float = 30.0) -> RefreshStats:
    """Rebuild the whole index from the files."""
    if not paths.root.is_dir():
        return RefreshStats(notes=["no memory store here yet"])
    with writer(paths, lock_timeout):
        schema.remove_db(paths.search_db)
        conn, notes = schema.open_index(paths.search_db)
        try:
            stats = _Updater(paths, conn, progress).run(True)
        finally:
            conn.close()
    stats.notes[:0] = notes
    return stats


__all__ = ["Doc", "IndexBusy", "Progress", "RefreshStats", "refresh", "refresh_locked", "reindex"]
