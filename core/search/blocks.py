"""Exact mode's reading of index blocks: which raw lines or sections of a block can match a
query without parsing them (:class:`Anchor`), and the reader that reads a block back from its
archive or L1 file and parses only those (:class:`BlockReader`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..basics.platform import read_at
from ..store.names import l1_session, name_date
from . import ranked, schema, sources
from .query import Query
from .sources import BLOCK_BYTES, Doc, iter_lines, iter_sections, l1_doc, section_doc

if TYPE_CHECKING:
    import sqlite3

    from ..store.paths import StorePaths

_READ_CHUNK = 8192


#: An L1 line's leading and trailing top-level members whose string values never reach its
#: body (``sources.L1_META_KEYS``, which :func:`sources.l1_body` leaves out): a timestamp's ``T`` and ``Z``, a session id's
#: hex digits and a role's letters matched nearly every line's bytes, so each was parsed.
#: (``result`` stays: an error's adds "error" to the body; ``sidechain`` is never a string.)
_L1_META = (
    b"(?:" + "|".join(sorted(sources.L1_META_KEYS - {"sidechain", "result"})).encode() + b")"
)  # (strings only)
_L1_HEAD = re.compile(rb'\{(?:"' + _L1_META + rb'":"[^"\\]*",)+')
_L1_PAIR = re.compile(rb',"' + _L1_META + rb'":"[^"\\]*"')


def l1_text(piece: bytes) -> bytes:
    """An L1 line without those members (what an anchor is looked for in), the rest as it is.

    Only members certainly at the top level go: those right after the line's opening brace,
    and those right before its closing one (a value with a quote or backslash is kept)."""
    head = _L1_HEAD.match(piece)
    start = head.end() - 1 if head else 0  # (the brace's place: "{" or the last comma kept)
    end = len(piece)
    while end and piece[end - 1] in b" \t\r\n":
        end -= 1
    if not piece.endswith(b"}", start, end):
        return piece[start:]
    end -= 1
    while (cut := piece.rfind(b',"', start, end)) >= 0 and _L1_PAIR.fullmatch(piece, cut, end):
        end = cut
    return piece[start:end]


class Anchor:
    """Finds, in a block's raw bytes, the only lines or sections that can match, without parsing.

    The anchor is one query term whose lowercase form must appear literally in the raw
    bytes of any entry that matches: an ASCII term (JSON never escapes printable ASCII),
    or a caseless one (Korean, digits) where the bytes hold no ``\\u`` escape. Terms with
    ``"``, a backslash, ``", "`` or ``": "`` (nested values are re-serialised) never anchor.
    """

    def __init__(self, query: Query) -> None:
        usable = [t for t in query.terms if not any(x in t for x in ('"', "\\", ", ", ": "))]
        ascii_terms = [t for t in usable if t.isascii()]
        caseless = [t for t in usable if not t.isascii() and all(c.lower() == c.upper() for c in t)]
        self.ascii = max(ascii_terms, key=len).encode() if ascii_terms else None
        self.caseless = max(caseless, key=len).encode() if caseless else None
        self.all_ascii = tuple(t.encode() for t in ascii_terms)
        self.all_caseless = tuple(t.encode() for t in caseless)

    def may_match(self, piece: bytes) -> bool:
        """False when some term is certainly missing from this one line or section."""
        if self.all_ascii:
            lowered = piece.lower()
            if any(t not in lowered for t in self.all_ascii):
                return False
        if self.all_caseless and b"\\u" not in piece:
            return all(t in piece for t in self.all_caseless)
        return True

    def starts(self, raw: bytes, sep: bytes) -> list[int] | None:
        """Start offsets (in ``raw``) of the docs that may match; None when it cannot tell."""
        if self.ascii is not None:
            term, haystack = self.ascii, raw.lower()
        elif self.caseless is not None and b"\\u" not in raw:
            term, haystack = self.caseless, raw
        else:
            return None
        found: list[int] = []
        pos = haystack.find(term)
        while pos >= 0:
            begin = raw.rfind(sep, 0, pos + len(sep) - 1)
            begin = 0 if begin < 0 else begin + 1
            if not found or found[-1] != begin:
                found.append(begin)
            end = raw.find(sep, pos)
            if end < 0:
                break
            pos = haystack.find(term, end + 1)
        return found


class BlockReader(ranked.DocReader):
    """Reads the docs of an index block back from its archive or L1 file, each file opened once.

    A block is every doc starting less than BLOCK_BYTES after the block's first one (the
    writer may have ended it sooner; reading on is harmless, the caller drops repeats).
    Yields (locator, doc), with doc None for one the prefilter rules out.
    """

    def __init__(self, paths: StorePaths, conn: sqlite3.Connection, query: Query) -> None:
        super().__init__(paths, conn)
        self.anchor = Anchor(query)

    def block(self, rowid: int) -> list[tuple[str, Doc | None]]:
        src = rowid >> schema.OFFSET_BITS
        offset = rowid & schema.OFFSET_MASK
        known = self._source(src)
        if known is None:  # a dead row of a removed or rewritten file
            return []
        rel, tier, kind = known
        if kind == "l1gz":
            data = self._whole(src, rel, tier, kind)
            raw = data[offset : _line_end(data, offset + BLOCK_BYTES)]
        else:
            fd = self._open(src, rel)
            if fd is None:
                return []
            raw = _read_block(fd, offset, b"\n" if tier == "l1" else b"\n## ")
        name = rel.rsplit("/", 1)[-1]
        fallback = name_date(name)
        is_l1 = tier == "l1"
        sep = b"\n" if is_l1 else b"\n## "
        starts = self.anchor.starts(raw, sep)
        if starts is None:
            pieces: Iterable[tuple[int, int, bytes]] = iter_lines(raw) if is_l1 else iter_sections(raw)
        else:
            pieces = (
                (pos, 0, piece)
                for pos, piece in ((p, raw[p : _piece_end(raw, p, sep)]) for p in starts)
                if self.anchor.may_match(l1_text(piece) if is_l1 else piece)
            )
        out: list[tuple[str, Doc | None]] = []
        session = l1_session(name) if is_l1 else None
        for pos, _line, piece in pieces:
            if pos >= BLOCK_BYTES:
                break
            if is_l1:
                doc = l1_doc(rel, fallback, session, offset + pos, None, piece)
            elif piece.strip():
                doc = section_doc("l2", "section", rel, offset + pos, 0, piece, fallback)
            else:
                doc = None
            out.append((str(offset + pos), doc))
        return out


def _piece_end(raw: bytes, pos: int, sep: bytes) -> int:
    end = raw.find(sep, pos if sep == b"\n" else pos + 1)
    if end < 0:
        return len(raw)
    return end if sep == b"\n" else end + 1


def _line_end(data: bytes, pos: int) -> int:
    """End of the line holding ``pos`` (exclusive of its newline)."""
    if pos >= len(data):
        return len(data)
    end = data.find(b"\n", pos)
    return len(data) if end < 0 else end


def _read_block(fd: int, offset: int, sep: bytes) -> bytes:
    """Bytes from ``offset`` through the last doc starting before ``offset + BLOCK_BYTES``.

    A doc ends where the next ``sep`` (a newline, or a newline and ``## ``) begins one; a
    doc longer than the first read (a large tool result) is read on until its end.
    """
    buf = read_at(fd, BLOCK_BYTES + _READ_CHUNK, offset)
    start = BLOCK_BYTES - 1
    while True:
        cut = buf.find(sep, start)
        if cut >= 0:
            return buf[: cut + 1]
        more = read_at(fd, max(len(buf), _READ_CHUNK), offset + len(buf))
        if not more:
            return buf
        start = max(start, len(buf) - len(sep))
        buf += more
