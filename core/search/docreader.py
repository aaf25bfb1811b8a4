"""The doc behind a word-index rowid: a ``docs`` row (small tiers), or a section or L1 line read
from its file at the offset the rowid holds (big tiers)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..basics.platform import read_at
from ..store.atomic import open_no_follow
from ..store.boundary import StoreLinkError
from ..store.names import l1_session, name_date
from ..store.paths import StorePaths
from . import schema
from .sources import Doc, SourceFile, l1_doc, read_source, section_doc

if TYPE_CHECKING:
    import sqlite3

_READ = 4096


class DocReader:
    """The doc behind a word-index rowid: a ``docs`` row, or a section or L1 line read from its file."""

    def __init__(self, paths: StorePaths, conn: sqlite3.Connection) -> None:
        self.paths = paths
        self.root = paths.root  # (worked out on each use otherwise: a few µs a file)
        self.conn = conn
        self.sources: dict[int, tuple[str, str, str] | None] = {}
        self.fds: dict[int, int] = {}
        self.whole: dict[int, bytes] = {}
        #: Candidate rows (rowid, score) a ranked search found in an index, by (index, query, limit):
        #: the memory and L3 tiers share one index, asked once.
        self.candidates: dict[tuple[str, str, int], list[tuple[int, float]]] = {}

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()

    def small(self, tier: str, rowids: Sequence[int]) -> dict[int, Doc]:
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        rows = self.conn.execute(
            "SELECT d.rowid, d.tier, d.type, s.rel, d.loc, d.line, d.date, d.title, d.body, d.session"
            f" FROM docs d JOIN sources s ON s.id = d.src WHERE d.rowid IN ({marks}) AND d.tier = ?",
            (*rowids, tier),
        ).fetchall()
        return {row[0]: Doc(*row[1:]) for row in rows}

    def big(self, tier: str, rowid: int) -> Doc | None:
        src = rowid >> schema.OFFSET_BITS
        offset = rowid & schema.OFFSET_MASK
        known = self._source(src)
        if known is None or known[1] != tier:
            return None  # a dead row of a removed or rewritten file
        rel, _tier, kind = known
        piece = self._piece(src, rel, kind, offset, tier == "l1")
        if piece is None:
            return None
        name = rel.rsplit("/", 1)[-1]
        if tier == "l1":
            return l1_doc(rel, name_date(name), l1_session(name), offset, None, piece)
        return section_doc("l2", "section", rel, offset, 0, piece, name_date(name))

    def _source(self, src: int) -> tuple[str, str, str] | None:
        if src not in self.sources:
            row = self.conn.execute("SELECT rel, tier, kind FROM sources WHERE id=?", (src,)).fetchone()
            self.sources[src] = (row[0], row[1], row[2]) if row else None
        return self.sources[src]

    def _whole(self, src: int, rel: str, tier: str, kind: str) -> bytes:
        """A compressed source, read whole once (it cannot be read at an offset)."""
        data = self.whole.get(src)
        if data is None:
            data = self.whole[src] = read_source(self.paths, SourceFile(rel, tier, kind, 0, 0))
        return data

    def _open(self, src: int, rel: str) -> int | None:
        """A plain source's descriptor, opened once (None when the file is gone)."""
        fd = self.fds.get(src)
        if fd is None:
            try:
                fd = self.fds[src] = open_no_follow(self.root / rel, os.O_RDONLY)
            except StoreLinkError:
                raise  # the store never reads through a link
            except OSError:
                return None
        return fd

    def _piece(self, src: int, rel: str, kind: str, offset: int, line: bool) -> bytes | None:
        sep = b"\n" if line else b"\n## "
        if kind == "l1gz":
            data = self._whole(src, rel, "l1", kind)
            end = data.find(sep, offset + (0 if line else 1))
            return data[offset : len(data) if end < 0 else end]
        fd = self._open(src, rel)
        if fd is None:
            return None
        buf = b""
        while True:
            more = read_at(fd, max(_READ, len(buf)), offset + len(buf))
            buf += more
            end = buf.find(sep, 0 if line else 1)
            if end >= 0:
                return buf[:end]
            if not more:
                return buf
