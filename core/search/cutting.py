"""Reading the store's changed files and cutting them into index rows, off the writer.

``prepare`` reads one file (or only what was appended to an L1 file, told from a rewrite
by head and tail fingerprints) into a :class:`Work`: the small tiers' docs, the archive
and L1 blocks for the trigram index, and the rows of the word index. ``prepared`` does a
big load in a process pool while the caller writes to SQLite: at most POOL_WINDOW batches
are in flight, each answered before another is sent, so no pipe can fill up and block.
"""

from __future__ import annotations

import marshal
import os
import struct
import zlib
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..basics import fastjson
from ..capture.l1_counts import day_counts
from ..store.atomic import open_read
from ..store.boundary import StoreLinkError
from ..store.paths import StorePaths
from .freshness import Row
from .schema import trigram_text
from .sources import (
    BIG_TIERS,
    BLOCK_BYTES,
    BROKEN,
    WORD_FIELD_CHARS,
    Doc,
    SourceFile,
    WordRow,
    docs_of,
    iter_lines,
    iter_sections,
    l1_entry,
    parse_line,
    read_source,
    word_row,
)
from .words import has_turn, with_parts

if TYPE_CHECKING:
    from collections.abc import Callable
    from multiprocessing.context import BaseContext

    Parser = Callable[[bytes], object]

FINGERPRINT_BYTES = 4096
#: The pool reads batches of this many bytes or files; at most POOL_WINDOW are in flight.
POOL_BATCH_BYTES = 8 << 20
POOL_BATCH_FILES = 256
POOL_WINDOW = 3
POOL_WORKERS = 1  # SQLite's single writer is the bottleneck: one reader keeps it fed


def fingerprint(data: bytes) -> bytes:
    """A fingerprint of up to 4 KB (with its length): enough to tell an append from a rewrite."""
    return struct.pack("<III", len(data), zlib.crc32(data), zlib.adler32(data))


def read_range(path: Path, start: int, length: int) -> bytes:
    try:
        with open_read(path) as handle:
            handle.seek(max(0, start))
            return handle.read(length)
    except StoreLinkError:
        raise
    except OSError:
        return b""


class Work:
    """One changed file, read and cut into index rows (done off the writer, maybe in a helper).

    A plain class with slots, not a dataclass: the search path imports this module, and
    ``dataclasses`` (with ``inspect``) would cost every ``memkeeper search`` milliseconds.
    """

    __slots__ = (
        "source", "row", "append", "read", "head_fp", "tail_fp",
        "small", "blocks", "words", "prompts", "title", "docs", "end", "next_line", "open_tail", "days", "findings",
    )  # fmt: skip

    def __init__(
        self,
        source: SourceFile,
        row: Row | None,
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
        self.blocks: list[tuple[int, str]] = []  # (offset, schema.trigram_text)
        self.words: list[WordRow] = []  # one row per entry for the word index
        self.prompts: list[int] = []  # the offsets of the typed prompts among them (schema.PROMPTS)
        self.title: str | None = None  # an L1 session's title, when read from its start
        self.docs = 0
        self.end = 0
        self.next_line = 1
        self.open_tail = 0
        self.days: dict[str, tuple[int, int]] = {}  # an L1 file's prompts and tool calls per day read
        self.findings: str | None = None  # an L3 summary's decisions and open issues (l3findings)

    def plain(self) -> tuple[object, ...]:
        """The work as plain values (what marshal writes): its named tuples as tuples."""
        row, small = self.row, self.small
        return (
            tuple(self.source),
            None if row is None else tuple(row),
            None if small is None else [tuple(doc) for doc in small],
            *[getattr(self, name) for name in _PLAIN_SLOTS],
        )

    @classmethod
    def from_plain(cls, plain: tuple[object, ...]) -> Work:
        """What :meth:`plain` gave, as a Work again."""
        work = cls.__new__(cls)
        source, row, small, *rest = plain
        work.source = SourceFile(*source)  # type: ignore[misc]
        work.row = None if row is None else Row(*row)  # type: ignore[misc]
        work.small = None if small is None else [Doc(*doc) for doc in small]  # type: ignore[attr-defined]
        for name, value in zip(_PLAIN_SLOTS, rest, strict=True):
            setattr(work, name, value)
        return work


#: The slots :meth:`Work.plain` sends as they are (every one but the named tuples).
_PLAIN_SLOTS = tuple(name for name in Work.__slots__ if name not in ("source", "row", "small"))


def prepare(paths: StorePaths, source: SourceFile, row: Row | None, parse: Parser = parse_line) -> Work:
    """One file read and cut; ``parse`` reads its L1 lines (see fastjson.bulk_parser)."""
    if source.kind == "l1" and row is not None and row.kind == "l1":
        work = _prepare_append(paths, source, row, parse)
        if work is not None:
            return work
    data = read_source(paths, source)
    work = Work(source, row, append=False, read=len(data))
    if source.tier not in BIG_TIERS:
        work.small = list(docs_of(source, data))
        work.docs = len(work.small)
        work.end = len(data)
        if source.tier == "l3":
            from .l3findings import of_bytes

            work.findings = of_bytes(data)
        return work
    if source.tier == "l1":
        work.end, work.next_line, work.open_tail = _consume_l1(data, 0, 1, work, parse=parse)
        work.title = _session_title(data)
        work.days = day_counts(data, 0, None if source.kind == "l1gz" else work.end)  # a gzip: whole
    else:
        _section_blocks(data, work)
        work.end = len(data)
    if source.kind == "l1":
        _fingerprints(paths, source, work, data, 0)
    return work


def _prepare_append(paths: StorePaths, source: SourceFile, row: Row, parse: Parser) -> Work | None:
    """Only what was appended to an L1 file; None when it was rewritten instead."""
    path = paths.root / source.rel
    if source.size < row.offset:
        return None
    head = read_range(path, 0, min(FINGERPRINT_BYTES, row.offset))
    tail_start = max(0, row.offset - FINGERPRINT_BYTES)
    tail = read_range(path, tail_start, row.offset - tail_start)
    if fingerprint(head) != row.head_fp or fingerprint(tail) != row.tail_fp:
        return None
    data = read_range(path, row.offset, source.size - row.offset)
    start, first_line = 0, row.next_line
    if row.open_tail and data:
        # the last line was indexed without its newline: what follows must start a new line
        if not data.startswith(b"\n"):
            return None
        start, first_line = 1, row.next_line + 1
    work = Work(source, row, append=True, read=len(data), head_fp=row.head_fp, tail_fp=row.tail_fp)
    work.end, work.next_line, work.open_tail = row.offset, row.next_line, row.open_tail
    if data[start:] or start:
        offset, work.next_line, work.open_tail = _consume_l1(data, start, first_line, work, row.offset, parse)
        work.end = row.offset + offset
        work.days = day_counts(data, start, offset)
        _fingerprints(paths, source, work, data, row.offset)
    return work


def _fingerprints(paths: StorePaths, source: SourceFile, work: Work, data: bytes, base: int) -> None:
    """Head and tail fingerprints of what was indexed: an append keeps both, a rewrite does not."""
    path = paths.root / source.rel
    end = work.end
    if base == 0:
        work.head_fp = fingerprint(data[: min(FINGERPRINT_BYTES, end)])
    elif work.row is None or work.row.offset < FINGERPRINT_BYTES:
        work.head_fp = fingerprint(read_range(path, 0, min(FINGERPRINT_BYTES, end)))
    tail_start = max(0, end - FINGERPRINT_BYTES)
    if base <= tail_start:
        tail = data[tail_start - base : end - base]
    else:
        tail = read_range(path, tail_start, end - tail_start)
    work.tail_fp = fingerprint(tail)


def _section_blocks(data: bytes, work: Work) -> None:
    """Archive sections grouped into blocks; the text of a block is its byte range, decoded.
    A section's word row holds its first 2 * WORD_FIELD_CHARS bytes, decoded, and is made
    with its block, asked once whether it may hold a camelCase word (as L1 blocks are)."""
    block_start = block_end = -1
    sections: list[tuple[int, str]] = []  # the block's sections: (offset, word text)
    for offset, _line, chunk in iter_sections(data):
        if block_start >= 0 and offset - block_start >= BLOCK_BYTES:
            _add_sections(work, block_start, data[block_start:block_end], sections)
            block_start, sections = -1, []
        if block_start < 0:
            block_start = offset
        sections.append((offset, chunk[: 2 * WORD_FIELD_CHARS].decode("utf-8", "replace")))
        block_end = offset + len(chunk)
        work.docs += 1
    if block_start >= 0:
        _add_sections(work, block_start, data[block_start:block_end], sections)


def _add_sections(work: Work, start: int, raw: bytes, sections: list[tuple[int, str]]) -> None:
    """A block of archive sections: its trigram text and the sections' word rows (a
    section's text is decoded from the start of its bytes: its letters are the block's)."""
    text = raw.decode("utf-8", "replace")
    work.blocks.append((start, trigram_text(text)))
    turns = has_turn(text)
    work.words.extend([(offset, with_parts(words) if turns else words, "") for offset, words in sections])


def _consume_l1(
    data: bytes,
    start: int,
    first_line: int,
    work: Work,
    base: int = 0,
    parse: Parser = parse_line,
) -> tuple[int, int, int]:
    """Index whole lines of ``data`` from ``start``; returns (offset after them, next line, open tail).

    A last line without a newline is taken if it parses (the JS plugin writes files that
    way) and the tail is then "open": the next append must begin with a newline. A last
    line that does not parse is being written: it is left for the next refresh.

    The entries are grouped into blocks for the trigram index (a block holds the entries
    that start less than BLOCK_BYTES after its first), and each gets a word row, made with
    its block (see :func:`_add_block`); the typed prompts are listed. One loop with no
    generator or helper object: a first build runs it for every line of the store.
    """
    prompts = work.prompts
    parts: list[str] = []  # the block's bodies
    block: list[tuple[int, object, str]] = []  # its entries: (offset, role, body)
    block_start = -1
    n = len(data)
    find = data.find
    pos, line, open_tail = start, first_line, 0
    while pos < n:
        nl = find(b"\n", pos)
        if nl < 0:  # the last line, without its newline
            nl = n
            entry, body = l1_entry(data[pos:], parse)
            if entry is BROKEN:
                n = pos  # being written: left for the next refresh
                break
            open_tail = 1
        else:
            entry, body = l1_entry(data[pos:nl], parse)
        if body and isinstance(entry, dict):  # an object with text
            offset = base + pos
            if block_start >= 0 and offset - block_start >= BLOCK_BYTES:
                _add_block(work, block_start, parts, block)
                parts, block, block_start = [], [], -1
            if block_start < 0:
                block_start = offset
            parts.append(body)
            role = entry.get("role")
            block.append((offset, role, body))
            if role == "user":
                prompts.append(offset)
        pos = nl + 1
        line += 1
    if parts:
        _add_block(work, block_start, parts, block)
    return n, line - open_tail, open_tail


def _add_block(work: Work, start: int, parts: list[str], block: list[tuple[int, object, str]]) -> None:
    """A block of L1 entries: its trigram text and its entries' word rows. Whether an entry
    may hold a camelCase word is asked once of the whole block (a turn in an entry is one in
    the block: the bodies are joined by newlines): most blocks have none, and their entries'
    rows are then made without asking each (sources.word_row)."""
    text = "\n".join(parts)
    work.blocks.append((start, trigram_text(text)))
    work.docs += len(parts)
    turns = has_turn(text)
    work.words.extend([word_row(offset, role, body, turns) for offset, role, body in block])


def _session_title(data: bytes) -> str:
    """The session's title (as ``core.titles`` names it), from its first entries."""
    from ..capture.titles import title_from_entries

    entries = (parse_line(raw) for _offset, _line, raw in iter_lines(data))
    return title_from_entries(e for e in entries if isinstance(e, dict))


def gzip_matches(path: Path, row: Row) -> bool:
    """Is this gzip the file the row indexed? Its stated length and its first 4 KB say so."""
    try:
        with open_read(path) as handle:
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
    return fingerprint(head[:want]) == row.head_fp


# -- reading the files in a process pool ------------------------------------------------------


def _prepare_batch(paths: StorePaths, batch: list[tuple[SourceFile, Row | None]]) -> list[Work]:
    parse = fastjson.bulk_parser()
    return [prepare(paths, source, row, parse) for source, row in batch]


def _pool_batch(paths: StorePaths, batch: list[tuple[SourceFile, Row | None]]) -> bytes:
    """A batch prepared in a pool worker, sent back packed (see :func:`_packed`)."""
    return _packed(_prepare_batch(paths, batch))


def _packed(works: list[Work]) -> bytes:
    """Works as one marshal blob of plain values: marshal writes and reads them in about half
    pickle's time (pickle keeps a memo of every string), and the pool worker and the writer
    each pay for every string sent. Both ends run the same Python."""
    return marshal.dumps([work.plain() for work in works])


def _unpacked(blob: bytes) -> list[Work]:
    return [Work.from_plain(plain) for plain in marshal.loads(blob)]


def _batches(todo: list[tuple[SourceFile, Row | None]]) -> list[list[tuple[SourceFile, Row | None]]]:
    batches: list[list[tuple[SourceFile, Row | None]]] = [[]]
    size = 0
    for item in todo:
        if batches[-1] and (size >= POOL_BATCH_BYTES or len(batches[-1]) >= POOL_BATCH_FILES):
            batches.append([])
            size = 0
        batches[-1].append(item)
        size += item[0].size
    return [b for b in batches if b]


def prepared(paths: StorePaths, todo: list[tuple[SourceFile, Row | None]], in_pool: bool) -> Iterator[Work]:
    """The files read and cut, in order. A big load reads in a process pool while this
    process writes to SQLite; at most POOL_WINDOW batches are in flight, each answered
    before another is sent, and the pool's own feeder never blocks on a full pipe."""
    if not in_pool:
        for source, row in todo:
            yield prepare(paths, source, row)
        return
    batches = _batches(todo)
    done = 0
    try:
        from concurrent.futures import Future, ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        pool = ProcessPoolExecutor(max_workers=POOL_WORKERS, mp_context=mp_context())
    except (ImportError, OSError):
        pool = None
    if pool is not None:
        try:
            pending: deque[Future[bytes]] = deque()
            for batch in batches[:POOL_WINDOW]:
                pending.append(pool.submit(_pool_batch, paths, batch))
            while pending:
                blob = pending.popleft().result()
                following = done + len(pending) + 1
                if following < len(batches):
                    pending.append(pool.submit(_pool_batch, paths, batches[following]))
                done += 1
                yield from _unpacked(blob)
        except (BrokenProcessPool, OSError, EOFError):
            pass  # finish here, nothing lost
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    for batch in batches[done:]:
        yield from _prepare_batch(paths, batch)


def mp_context() -> BaseContext:
    """The spawn start method, on every system: fork is absent on Windows and unsafe on macOS,
    and copies locks other threads hold. A spawned child runs with our flags (-P)."""
    import multiprocessing

    return multiprocessing.get_context("spawn")
