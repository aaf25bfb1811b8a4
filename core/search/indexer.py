"""Keeping the search index in step with the files, incrementally.

``refresh`` compares every searchable file's (size, mtime_ns) with what the index
recorded and re-reads only what changed: an L1 file that grew is read from its last
offset (whole lines only; the JS plugin's files end without a newline, which is handled),
a rewritten file is read again, a removed one leaves the index. One writer at a time
(``.state/search.lock``); readers are never blocked (WAL). A search refreshes only the
tiers it reads. Archives and summaries whose inode is unchanged skip their stat (they
are written once or replaced by a rename); a full check runs every FULL_CHECK_SECONDS.

A big load (the first build) reads and cuts the files in a helper process while this
one writes to SQLite, and merges the index segments at the end instead of on the way.

Rows of a removed or rewritten archive or L1 file cannot be deleted from a contentless
FTS table without their old text, so they stay as dead rows that no source id points to;
when they outweigh a third of the live text the big indexes are rebuilt.
"""

from __future__ import annotations

import json
import sqlite3
import struct
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, NamedTuple

from memkeeper.core.lock import LockTimeout, file_lock
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
from memkeeper.core.store import StorePaths

Progress = Callable[[int, int, str], None]  # (bytes done, bytes total, current file)

FINGERPRINT_BYTES = 4096
COMMIT_BYTES = 64 << 20
BULK_BYTES = 32 << 20
MIN_GARBAGE_BYTES = 64 << 20
LOCK_NAME = "search.lock"
HELPER_BATCH_BYTES = 8 << 20
HELPER_WINDOW = 3
FULL_CHECK_SECONDS = 60


class IndexBusy(Exception):
    """Another process is writing the index; the caller answers by a full scan."""


class RefreshStats:
    """What a refresh did."""

    def __init__(self, notes: list[str] | None = None) -> None:
        self.files_read = 0
        self.files_removed = 0
        self.bytes_read = 0
        self.docs_added = 0
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
    def rows(self, rels: Iterable[str] | None = None) -> dict[str, _Row]:
        sql = (
            "SELECT id, rel, tier, kind, size, mtime_ns, offset, next_line, open_tail, head_fp, tail_fp, bytes"
            " FROM sources"
        )
        if rels is None:
            return {r[1]: _Row(*r) for r in self.conn.execute(sql)}
        out: dict[str, _Row] = {}
        for rel in rels:
            row = self.conn.execute(sql + " WHERE rel=?", (rel,)).fetchone()
            if row:
                out[rel] = _Row(*row)
        return out

    def brief(self, scope: frozenset[str]) -> dict[str, tuple[int, int, str, str, int, int]]:
        """rel -> (size, mtime_ns, kind, tier, bytes, inode) of the files of ``scope``'s tiers."""
        marks = ", ".join("?" * len(scope))
        return {
            r[0]: r[1:]
            for r in self.conn.execute(
                f"SELECT rel, size, mtime_ns, kind, tier, bytes, inode FROM sources WHERE tier IN ({marks})",
                tuple(scope),
            )
        }

    def quick_check(self) -> bool:
        """May archives and summaries with an unchanged inode skip their stat?

        They are written once or replaced by a rename (a new inode). An edit in place is
        caught by the full check made every FULL_CHECK_SECONDS.
        """
        return time.time_ns() - self.meta_int("full_check_ns") < FULL_CHECK_SECONDS * 1_000_000_000

    def run(self, full: bool, tiers: Iterable[str] | None = None) -> RefreshStats:
        """Update the files of ``tiers`` (all by default: a search refreshes what it reads)."""
        start = time.monotonic()
        scope = frozenset(TIERS if full or tiers is None else tiers)
        if full:
            self.reset_all()
        brief = self.brief(scope)
        if not full and scope >= set(BIG_TIERS) and self.compaction_due(brief):
            self.stats.notes.append("search index compacted (rebuilt the archive and L1 indexes)")
            self.reset_big()
            brief = self.brief(scope)
        trusted = self.quick_check()
        recorded = {rel: (b[0], b[1], b[5], b[3]) for rel, b in brief.items() if b[3] in ("l2", "l3")}
        found = discover(self.paths, recorded if trusted else None, scope)
        present = {s.rel for s in found}
        changed = [s for s in found if _changed(s, brief.get(s.rel))]
        removed = [rel for rel in brief if rel not in present]
        if not changed and not removed and trusted:
            self.stats.seconds = time.monotonic() - start
            return self.stats
        known = self.rows([*(s.rel for s in changed if s.rel in brief), *removed])
        todo = [(s, known.get(s.rel)) for s in changed]
        total = sum(max(0, s.size - (row.offset if row else 0)) for s, row in todo)
        bulk = total >= BULK_BYTES
        self.begin()
        try:
            for rel in removed:
                self.drop_source(known[rel])
                self.stats.files_removed += 1
            if bulk:
                self.bulk_settings(True)
            done = 0
            for work in self.prepared(todo, threaded=bulk):
                if self.progress:
                    self.progress(done, total, work.source.rel)
                self.apply(work)
                done += work.read
                self.maybe_commit()
            if bulk:
                self.bulk_settings(False)
            if self.progress:
                self.progress(max(done, total), max(done, total), "")
            if not trusted:
                self.set_meta("full_check_ns", time.time_ns())
            self.commit()
        except BaseException:
            if self.in_tx:
                self.conn.execute("ROLLBACK")
                self.in_tx = False
            raise
        self.stats.seconds = time.monotonic() - start
        return self.stats

    def prepared(self, todo: list[tuple[SourceFile, _Row | None]], threaded: bool) -> Iterator[_Work]:
        """The files read and cut, in order; on a big load a helper process reads while SQLite writes."""
        if not threaded:
            for source, row in todo:
                yield _prepare(self.paths, source, row)
            return
        yield from _prepare_in_helper(self.paths, todo)

    def compaction_due(self, brief: dict[str, tuple[int, int, str, str, int, int]]) -> bool:
        garbage = self.meta_int("garbage_bytes")
        live = sum(b[4] for b in brief.values() if b[3] in BIG_TIERS)
        return garbage > max(MIN_GARBAGE_BYTES, live // 3)

    def reset_all(self) -> None:
        self.begin()
        self.conn.execute("DELETE FROM docs")
        self.conn.execute("DELETE FROM sources")
        self.conn.execute("INSERT INTO fts_small(fts_small) VALUES('delete-all')")
        self.conn.execute("INSERT INTO words_small(words_small) VALUES('delete-all')")
        self.commit()
        self.reset_big()

    def reset_big(self) -> None:
        self.begin()
        for table in schema.BIG_FTS.values():
            self.conn.execute(f"INSERT INTO {table}({table}) VALUES('delete-all')")
        for tier in BIG_TIERS:
            words = schema.WORDS[tier]
            self.conn.execute(f"INSERT INTO {words}({words}) VALUES('delete-all')")
        self.conn.execute("DELETE FROM sources WHERE tier IN ('l1', 'l2')")
        self.set_meta("garbage_bytes", 0)
        self.commit()
        self.stats.rebuilt = True

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

    def drop_source(self, row: _Row) -> None:
        if row.tier in BIG_TIERS:
            self.add_garbage(row.bytes)
        else:
            self.delete_small_docs(row.id)
        self.conn.execute("DELETE FROM sources WHERE id=?", (row.id,))

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

    def new_source(self, source: SourceFile) -> int:
        cur = self.conn.execute(
            "INSERT INTO sources(rel, tier, kind, size, mtime_ns, inode) VALUES(?, ?, ?, ?, ?, ?)",
            (source.rel, source.tier, source.kind, source.size, source.mtime_ns, source.inode),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def apply(self, work: _Work) -> None:
        """Write one prepared file into the index."""
        source, row = work.source, work.row
        self.stats.files_read += 1
        self.stats.bytes_read += work.read
        self.pending += work.read
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


def _prepare_batch(paths: StorePaths, batch: list[tuple[SourceFile, _Row | None]]) -> list[_Work]:
    return [_prepare(paths, source, row) for source, row in batch]


def _prepare_in_helper(paths: StorePaths, todo: list[tuple[SourceFile, _Row | None]]) -> Iterator[_Work]:
    """Read and cut files in a helper process (no GIL shared with the writer), a few batches ahead.

    The helper is ``python -m memkeeper.core.search.indexer`` speaking length-prefixed
    pickles over its stdin/stdout; requests are small, so the pipes cannot deadlock.
    Falls back to this process if the helper cannot be started or dies.
    """
    # Imported here: only a bulk build uses them (about 12 ms off every search's start-up).
    import pickle
    import subprocess

    batches: list[list[tuple[SourceFile, _Row | None]]] = [[]]
    size = 0
    for item in todo:
        batches[-1].append(item)
        size += item[0].size
        if size >= HELPER_BATCH_BYTES:
            batches.append([])
            size = 0
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memkeeper.core.search.indexer", "--prepare-helper"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        proc = None
    if proc is None or proc.stdin is None or proc.stdout is None:
        for source, row in todo:
            yield _prepare(paths, source, row)
        return
    sent = 0
    done = 0
    try:
        while done < len(batches):
            while sent < len(batches) and sent - done < HELPER_WINDOW:
                _send(proc.stdin, (paths, batches[sent]))
                sent += 1
            reply = _receive(proc.stdout)
            if not isinstance(reply, list):
                raise OSError("the index helper stopped")
            done += 1
            yield from reply
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError):
        for batch in batches[done:]:  # finish here, nothing lost
            for source, row in batch:
                yield _prepare(paths, source, row)
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _send(stream: IO[bytes], obj: object) -> None:
    import pickle

    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> object:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the index helper closed its pipe")
    (length,) = struct.unpack("<Q", head)
    data = stream.read(length)
    if len(data) < length:
        raise EOFError("the index helper closed its pipe")
    import pickle

    return pickle.loads(data)


def _helper_main() -> int:
    """The helper's loop: (paths, batch) in, list of _Work out, until stdin closes."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            request = _receive(stdin)
        except EOFError:
            return 0
        assert isinstance(request, tuple)
        store: StorePaths = request[0]
        batch: list[tuple[SourceFile, _Row | None]] = request[1]
        _send(stdout, _prepare_batch(store, batch))


def _changed(source: SourceFile, brief: tuple[int, int, str, str, int, int] | None) -> bool:
    return (
        brief is None
        or brief[0] != source.size
        or brief[1] != source.mtime_ns
        or brief[2] != source.kind
        or brief[5] != source.inode
    )


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


def refresh_locked(
    paths: StorePaths, conn: sqlite3.Connection, full: bool = False, tiers: Iterable[str] | None = None
) -> RefreshStats:
    """``refresh`` for a caller that already holds the writer lock and a connection."""
    return _Updater(paths, conn, None).run(full, tiers)


def reindex(
    paths: StorePaths, progress: Progress | None = None, *, lock_timeout: float = 30.0
) -> RefreshStats:
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


if __name__ == "__main__":
    # run the loop from the module imported by its real name, so pickles name its classes right
    from memkeeper.core.search.indexer import _helper_main as helper_main

    sys.exit(helper_main())
