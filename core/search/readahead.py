"""Asking the OS to read a few of the index's tables into its cache, without waiting for it.

A ranked search scores each row its words match with BM25, which reads that row's length
from the word index's ``_docsize`` table: a few thousand rows anywhere in the store, so a
few thousand random pages (57 MB of them at 1 GB). When the OS has dropped the index from
its cache (after a reboot, or a job that read or wrote gigabytes), each keystroke waited
for those pages one at a time: 150–500 ms a key at 1 GB instead of 30–90.

:func:`prefetch` walks a table's b-tree from its root down to the level above the leaves
(a few dozen pages), and hands the leaves' page ranges to ``posix_fadvise(WILLNEED)``: the
kernel reads them in the background, in as few requests as it likes. Nothing is parsed
beyond the interior pages' child pointers, nothing is written, and a page that does not
look like a b-tree page ends that table's walk: it is a hint, right or wrong.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..basics.platform import read_at
from ..store.atomic import open_no_follow

if TYPE_CHECKING:
    import sqlite3

_INTERIOR = (2, 5)  # index, table
_LEAF = (10, 13)
#: Pages handed to the OS at most per call (256 MB of 4 KB pages): a hint must stay cheap.
MAX_PAGES = 65536
#: Pages between two runs read through rather than asked for apart.
GAP = 8


def tables(conn: sqlite3.Connection, names: Iterable[str]) -> list[tuple[str, int]]:
    """(name, root page) of the named tables and indexes that exist, in the order given."""
    wanted = list(names)
    roots = dict(
        conn.execute(
            f"SELECT name, rootpage FROM sqlite_schema WHERE name IN ({','.join('?' * len(wanted))})", wanted
        ).fetchall()
    )
    return [(name, roots[name]) for name in wanted if roots.get(name)]


def prefetch(path: Path, page_size: int, roots: Iterable[int], max_pages: int = MAX_PAGES) -> int:
    """Ask the OS to cache the leaf pages of the b-trees at ``roots`` (database file ``path``);
    the pages asked for (their interior pages are read here). 0 where the OS has no such call."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None or page_size <= 0:
        return 0
    fd = open_no_follow(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size // page_size
        asked = 0
        for root in roots:
            leaves = _leaves(fd, page_size, size, root, max_pages - asked)
            for start, count in _runs(leaves):
                advise(fd, (start - 1) * page_size, count * page_size, os.POSIX_FADV_WILLNEED)
            asked += len(leaves)
            if asked >= max_pages:
                break
        return asked
    finally:
        os.close(fd)


def prefetch_tables(conn: sqlite3.Connection, path: Path, names: Iterable[str]) -> int:
    """:func:`prefetch` of the named tables and indexes of the database ``conn`` reads (file ``path``)."""
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    return prefetch(path, page_size, [root for _name, root in tables(conn, names)])


def files(wanted: Iterable[tuple[Path, int]]) -> None:
    """Ask the OS to cache the first ``length`` bytes of each file (0: all of it), all at once,
    so that reading them one after another waits for the disk about once, not once a file."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    for path, length in wanted:
        try:
            fd = open_no_follow(path, os.O_RDONLY)
        except OSError:
            continue  # the reader says what is wrong (a link is refused there too)
        try:
            advise(fd, 0, length, os.POSIX_FADV_WILLNEED)
        except OSError:
            pass  # a hint
        finally:
            os.close(fd)


def _leaves(fd: int, page_size: int, pages: int, root: int, budget: int) -> list[int]:
    """The leaf pages under ``root``, found by reading the interior pages only; [] if a page
    read does not look like a b-tree page, or the leaves are more than ``budget``."""
    level = [root]
    while level:
        children: list[int] = []
        for page in level:
            found = _children(read_at(fd, page_size, (page - 1) * page_size), page, pages)
            if found is None:  # a leaf root (read already), or not a b-tree page
                return []
            children.extend(found)
            if len(children) > budget:
                return []
        if not children:
            return []
        probe = _children(read_at(fd, page_size, (children[0] - 1) * page_size), children[0], pages)
        if probe is None:  # b-trees keep every leaf at one depth: these are the leaves
            return children
        level = children
    return []


def _children(data: bytes, page: int, pages: int) -> list[int] | None:
    """An interior page's child page numbers; None for a leaf or anything not a b-tree page."""
    head = 100 if page == 1 else 0
    if len(data) < head + 12 or data[head] not in _INTERIOR:
        return None
    cells, right = struct.unpack_from(">H", data, head + 3)[0], struct.unpack_from(">I", data, head + 8)[0]
    if head + 12 + 2 * cells > len(data):
        return None
    pointers = struct.unpack_from(f">{cells}H", data, head + 12)
    if any(at + 4 > len(data) for at in pointers):
        return None
    out = [int.from_bytes(data[at : at + 4], "big") for at in pointers]
    out.append(right)
    if any(not 0 < child <= pages for child in out):
        return None
    return out


def _runs(leaves: list[int]) -> list[tuple[int, int]]:
    """Sorted page numbers as (first page, count) runs, a gap of up to GAP pages read through
    (fewer calls; the kernel reads such neighbours in one request anyway)."""
    runs: list[tuple[int, int]] = []
    for page in sorted(set(leaves)):
        if runs and page - (runs[-1][0] + runs[-1][1]) <= GAP:
            runs[-1] = (runs[-1][0], page - runs[-1][0] + 1)
        else:
            runs.append((page, 1))
    return runs
