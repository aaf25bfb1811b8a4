"""The terms of an FTS5 index in a range, read from its segment pages without walking postings.

``fts5vocab`` lists terms by walking every posting of each (to count them): listing the
words that begin with ``s`` takes seconds at 1 GB, where the terms themselves are a few
pages. This reads those pages. FTS5's file format is stable (SQLite keeps it readable by
every later version); what is used of it:

- ``<table>_idx(segid, term, pgno)``: for each segment, one row per leaf page that holds
  the start of a term, keyed by a prefix of that page's first term (``pgno`` is the page
  number shifted left by one, its low bit a flag); a segment an incremental merge has
  begun to read has lost its leading pages (not their rows here), and its first live page
  starts with a term;
- ``<table>_data(id, block)``: leaf page ``p`` of segment ``s`` is row ``s << 37 | p``. A leaf
  starts with two 2-byte big-endian offsets (the first rowid, the page footer); the footer
  holds one varint per term on the page, its offset (delta from the previous one). The
  first term on a page is ``varint length, bytes``; the others ``varint shared prefix,
  varint length of the rest, bytes``. Each term's key starts with ``0`` (the main index).

The size of a term's postings (bytes to the next term, pages it runs over) stands in for
how often it occurs. A term whose rows were all deleted may still be listed until FTS5
merges its segments; callers that show a term check it against the index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3


_LEAF_SHIFT = 37
_MAIN = b"0"
#: Leaf pages read per call at most: a range wider than this is cut short (its end is
#: missing), so a lookup stays bounded on any index.
MAX_PAGES = 4000
#: FTS5's default leaf page size (``pgsz``).
PAGE_BYTES = 4050


def between(
    conn: sqlite3.Connection, table: str, low: str, high: str, max_pages: int = MAX_PAGES
) -> dict[str, int]:
    """Terms ``t`` of the FTS5 table with ``low <= t < high`` (as UTF-8 bytes), each with the bytes of
    its postings over all segments. At most ``max_pages`` pages are read (see :func:`pages`)."""
    lo, hi = _key(low), _key(high)
    found: dict[str, int] = {}
    chosen = pages(conn, table, low, high)[:max_pages]
    for start in range(0, len(chosen), 200):
        ids = {
            (segid << _LEAF_SHIFT) + page: following for segid, page, following in chosen[start : start + 200]
        }
        marks = ",".join("?" * len(ids))
        for rowid, block in conn.execute(
            f"SELECT id, block FROM {table}_data WHERE id IN ({marks})", list(ids)
        ):
            data = bytes(block)
            for key, size in leaf_terms(data, ids[rowid] * len(data), hi):
                if lo <= key < hi:
                    term = key[1:].decode("utf-8", "replace")
                    found[term] = found.get(term, 0) + size
    return found


def pages(conn: sqlite3.Connection, table: str, low: str, high: str) -> list[tuple[int, int, int]]:
    """The leaf pages that may hold terms in ``[low, high)``: (segment, page, pages of postings after it).

    Per segment, a few seeks: its first and last live leaf (an incremental merge deletes the
    leading pages of the segments it reads and leaves their ``_idx`` rows), the page where
    ``low`` would be, and the term pages up to ``high``: nothing outside the range is read.
    """
    lo, hi = _key(low), _key(high)
    out: list[tuple[int, int, int]] = []
    segid = -1
    while True:
        row = conn.execute(f"SELECT min(segid) FROM {table}_idx WHERE segid > ?", (segid,)).fetchone()
        if row is None or row[0] is None:
            return out
        segid = int(row[0])
        base = segid << _LEAF_SHIFT
        bounds = (base, base + (1 << 31) - 1)
        lowest = conn.execute(f"SELECT min(id) FROM {table}_data WHERE id BETWEEN ? AND ?", bounds).fetchone()
        if lowest is None or lowest[0] is None:
            continue
        highest = conn.execute(
            f"SELECT max(id) FROM {table}_data WHERE id BETWEEN ? AND ?", bounds
        ).fetchone()
        first_live, last_live = int(lowest[0]) - base, int(highest[0]) - base  # one seek each
        start = conn.execute(
            f"SELECT pgno FROM {table}_idx WHERE segid = ? AND term <= ? AND pgno >= ? ORDER BY term DESC LIMIT 1",
            (segid, lo, first_live << 1),
        ).fetchone()
        numbers = [int(start[0]) >> 1 if start else first_live]
        numbers += [
            page
            for (n,) in conn.execute(
                f"SELECT pgno FROM {table}_idx WHERE segid = ? AND term > ? AND term < ? ORDER BY term",
                (segid, lo, hi),
            )
            if (page := int(n) >> 1) > numbers[0]
        ]
        after = conn.execute(
            f"SELECT pgno FROM {table}_idx WHERE segid = ? AND term >= ? AND pgno > ? ORDER BY term LIMIT 1",
            (segid, hi, numbers[-1] << 1),
        ).fetchone()
        end = int(after[0]) >> 1 if after is not None else last_live + 1
        for page, following in zip(numbers, [*numbers[1:], end], strict=True):
            out.append((segid, page, max(0, following - page - 1)))


def postings_bytes(found: list[tuple[int, int, int]]) -> int:
    """About how many bytes the postings on these pages (see :func:`pages`) take, without reading them."""
    return sum(1 + following for _segid, _page, following in found) * PAGE_BYTES


def _key(term: str) -> bytes:
    return _MAIN + term.encode("utf-8", "surrogatepass")


def leaf_terms(data: bytes, after: int = 0, stop: bytes | None = None) -> list[tuple[bytes, int]]:
    """The terms that start on one leaf page, each with the bytes of its postings on the page
    (``after`` more for the last one, whose postings run on over the next pages); with
    ``stop``, only those before it (the page's terms are in order)."""
    if len(data) < 4:
        return []
    footer = int.from_bytes(data[2:4], "big")
    offsets: list[int] = []
    pos, at = footer, 0
    while pos < len(data):
        if data[pos] < 0x80:  # one byte: nearly every offset
            at += data[pos]
            pos += 1
        else:
            value, pos = varint(data, pos)
            at += value
        offsets.append(at)
    out: list[tuple[bytes, int]] = []
    key = b""
    last = len(offsets) - 1
    for i, start in enumerate(offsets):
        if start >= footer:
            break
        if i == 0:
            size, pos = varint(data, start)
            key = data[pos : pos + size]
        else:
            shared, pos = varint(data, start)
            size, pos = varint(data, pos)
            key = key[:shared] + data[pos : pos + size]
        if stop is not None and key >= stop:
            break
        end = offsets[i + 1] if i < last else footer
        out.append((key, max(0, end - pos - size) + (after if i == last else 0)))
    return out


def varint(data: bytes, pos: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``pos``: (value, next position)."""
    value = 0
    for i in range(8):
        if pos + i >= len(data):
            return value, len(data)
        byte = data[pos + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, pos + i + 1
    if pos + 8 < len(data):
        value = (value << 8) | data[pos + 8]
    return value, pos + 9
