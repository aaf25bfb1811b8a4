"""What search reads: the store's files, cut into searchable entries (documents).

One function per kind of file turns its bytes into :class:`Doc` values. The index and
the full scan both use these same functions, which is what makes their answers equal:

- ``memory.md`` and ``project.md`` / ``architecture.md`` / ``conventions.md`` (tier
  ``memory``) and the ``memory_*.md`` archives (tier ``l2``) are cut at ``## `` headers;
- ``memory_*.summary.json`` (tier ``l3``) gives one entry per theme, decision, issue and
  the overall summary; missing or odd fields are skipped, never fatal;
- ``sessions/*.l1.jsonl`` (and ``.l1.jsonl.gz``) (tier ``l1``) gives one entry per line.

Stdlib only. A document's locator is its byte offset in the file (sections, L1 lines)
or its place in the summary (``o``, ``t3``, ``d0``, ``i2``), so ids stay stable.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..basics import fastjson
from ..store.atomic import open_read
from ..store.boundary import StoreLinkError
from ..store.names import (
    archive_of_summary,
    l1_kind,
    l1_session,
    name_date,
    tier_of,
)
from ..store.paths import NAMED_MEMORY_FILES, StorePaths
from .words import with_parts

if TYPE_CHECKING:
    from typing import Any

TIERS = ("memory", "l3", "l2", "l1")
#: Tiers kept whole in the database (small, rewritten often); the others are read back from their files.
SMALL_TIERS = ("memory", "l3")
BIG_TIERS = ("l2", "l1")
L1_ROLES = ("user", "assistant", "tool", "tool_result")
TYPES_BY_TIER: dict[str, tuple[str, ...]] = {
    "memory": ("section", *NAMED_MEMORY_FILES),
    "l3": ("overall", "theme", "decision", "issue"),
    "l2": ("section",),
    "l1": (*L1_ROLES, "other"),
}

_DATE_RE = re.compile(r"(\d{4}-\d{2}-\d{2})")
_HEADER_DATE_RE = re.compile(rb"^## +(\d{4}-\d{2}-\d{2})")
_SECTION_RE = re.compile(rb"\n## ")
#: L1 keys that are bookkeeping, not content.
L1_META_KEYS = frozenset({"ts", "role", "session", "tool_use_id", "agentId", "sidechain", "uuid", "result"})
TITLE_CHARS = 100
#: Archive sections and L1 entries are indexed in blocks: a block holds the docs that start
#: less than BLOCK_BYTES after its first doc (a block may end sooner, at the end of a file
#: or of an append). A trigram repeated inside a block is stored once: a small index.
BLOCK_BYTES = 8192
_MAIN_FIELD = {"theme": "name", "decision": "decision", "issue": "issue"}


class SourceFile(NamedTuple):
    """One file of the store that search reads (a tuple: thousands are made per refresh)."""

    rel: str  # path relative to the store root, with "/"
    tier: str
    kind: str  # memory | named | l3 | l2 | l1 | l1gz
    size: int
    mtime_ns: int
    inode: int = 0

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1]


class Doc(NamedTuple):
    """One searchable entry, as both the index and the scan see it (a tuple: millions are made
    by a first build)."""

    tier: str
    type: str
    file: str  # relative to the store root
    loc: str  # byte offset, or the place inside a summary
    line: int | None
    date: str | None
    title: str
    body: str
    session: str | None = None
    raw: Any = None

    @property
    def id(self) -> str:
        return make_id(self.tier, self.file, self.loc)

    def __repr__(self) -> str:
        return f"Doc({self.tier}, {self.type}, {self.file}, {self.loc})"


def file_hash(rel: str) -> str:
    """10 hex digits naming a file in ids (two CRC-32s: no OpenSSL import on the CLI path)."""
    data = rel.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.crc32(data, 0x5BD1E995) & 0xFF:02x}"


def make_id(tier: str, rel: str, loc: str) -> str:
    """``<tier>-<hash of the file>-<locator>``: stable across rebuilds, short enough for a prompt."""
    return f"{tier}-{file_hash(rel)}-{loc}"


def parse_id(hit_id: str) -> tuple[str, str, str] | None:
    parts = hit_id.strip().split("-", 2)
    if len(parts) != 3 or parts[0] not in TIERS or len(parts[1]) != 10 or not parts[2]:
        return None
    return parts[0], parts[1], parts[2]


# -- discovering the files --------------------------------------------------------------


def discover(
    paths: StorePaths,
    trusted: dict[str, tuple[int, int, int, str]] | None = None,
    tiers: frozenset[str] | None = None,
) -> list[SourceFile]:
    """Every searchable file of the store, in tier order, then by name (oldest first).

    ``trusted`` maps archives and summaries to a recorded (size, mtime_ns, inode, tier):
    one whose inode (read from the directory, no stat) is unchanged is taken as unchanged.
    Archives and summaries are replaced by renames, which give a new inode. ``tiers``
    limits the listing (the sessions folder is not read without ``l1``).
    """
    found: list[SourceFile] = []
    root = paths.root
    try:
        entries = list(os.scandir(root))
    except (FileNotFoundError, NotADirectoryError):
        return []
    named = set(NAMED_MEMORY_FILES.values())
    by_tier: dict[str, list[SourceFile]] = {t: [] for t in TIERS}
    for entry in entries:
        name = entry.name
        if trusted is not None:  # the common case first: a known archive or summary
            recorded = trusted.get(name)
            if recorded is not None and recorded[2] == entry.inode():
                tier = recorded[3]
                by_tier[tier].append(SourceFile(name, tier, tier, recorded[0], recorded[1], recorded[2]))
                continue
        found_tier = tier_of(name, named)
        if found_tier is None:
            continue
        tier = found_tier
        kind: str = "named" if name in named else found_tier
        if tiers is not None and tier not in tiers:
            continue
        source = _stat_source(entry, name, tier, kind)
        if source:
            by_tier[tier].append(source)
    session_entries: list[os.DirEntry[str]] = []
    if tiers is None or "l1" in tiers:
        try:
            session_entries = list(os.scandir(paths.sessions))
        except (FileNotFoundError, NotADirectoryError):
            pass
    for entry in session_entries:
        name = entry.name
        l1 = l1_kind(name)
        if name.startswith(".") or l1 is None:
            continue
        kind = l1
        source = _stat_source(entry, "sessions/" + name, "l1", kind)
        if source:
            by_tier["l1"].append(source)
    for tier in TIERS:
        # memory.md first, then the named files; everything else by name = by date
        found.extend(sorted(by_tier[tier], key=lambda s: (s.kind != "memory", s.rel)))
    return found


def newest_first(paths: StorePaths, tier: str) -> Iterator[SourceFile]:
    """The tier's files as :func:`discover` lists them, in reverse (newest first), each one
    stat'ed only when it is reached: a caller that stops after the newest few never stats
    the thousands of others."""
    if tier == "l1":
        yield from _newest_sessions(paths)
        return
    named = set(NAMED_MEMORY_FILES.values())
    picked: list[tuple[os.DirEntry[str], str, str]] = []
    try:
        for entry in os.scandir(paths.root):
            if tier_of(entry.name, named) == tier:
                picked.append((entry, entry.name, "named" if entry.name in named else tier))
    except (FileNotFoundError, NotADirectoryError):
        return
    picked.sort(key=lambda item: (item[2] != "memory", item[1]), reverse=True)
    for entry, rel, kind in picked:
        source = _stat_source(entry, rel, tier, kind)
        if source:
            yield source


def _newest_sessions(paths: StorePaths) -> Iterator[SourceFile]:
    """The L1 files newest first: sorted by name alone, each one's kind told when it is reached."""
    try:
        entries = sorted(os.scandir(paths.sessions), key=lambda entry: entry.name, reverse=True)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        kind = None if entry.name.startswith(".") else l1_kind(entry.name)
        source = None if kind is None else _stat_source(entry, "sessions/" + entry.name, "l1", kind)
        if source:
            yield source


def _stat_source(entry: os.DirEntry[str], rel: str, tier: str, kind: str) -> SourceFile | None:
    if entry.is_symlink():
        raise StoreLinkError(entry.path)  # the store never reads through a link
    try:
        if not entry.is_file():
            return None
        st = entry.stat()
    except OSError:
        return None
    return SourceFile(rel, tier, kind, st.st_size, st.st_mtime_ns, st.st_ino)


def read_source(paths: StorePaths, source: SourceFile) -> bytes:
    """The file's bytes (decompressed for ``.gz``); empty if it vanished meanwhile."""
    try:
        with open_read(paths.root / source.rel) as handle:
            data = handle.read()
    except StoreLinkError:
        raise
    except OSError:
        return b""
    if source.kind == "l1gz":
        import gzip

        try:
            return gzip.decompress(data)
        except (OSError, EOFError, ValueError):
            return b""
    return data


# -- dates ----------------------------------------------------------------------------


def norm_date(value: Any) -> str | None:
    """``YYYY-MM-DD`` found in a value, or None."""
    if not isinstance(value, str):
        return None
    match = _DATE_RE.search(value[:40])
    return match.group(1) if match else None


# -- sections (memory.md, named files, archives) ------------------------------------------


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def iter_sections(data: bytes) -> Iterator[tuple[int, int, bytes]]:
    """(byte offset, 1-based line, bytes) of each ``## `` section; the preamble if not blank.

    A section starts at a line that starts with ``## `` (but the file's first line, which
    starts the preamble anyway); a blank piece is skipped. The header lines are found by one
    search of the bytes, not line by line (an archive has ~17 lines a section).
    """
    start, line = 0, 1
    for match in _SECTION_RE.finditer(data):
        cut = match.start() + 1
        chunk = data[start:cut]
        if chunk.strip():
            yield start, line, chunk
        line += chunk.count(b"\n")
        start = cut
    chunk = data[start:]
    if chunk.strip():
        yield start, line, chunk


def section_doc(
    tier: str, type_: str, rel: str, offset: int, line: int, chunk: bytes, fallback_date: str | None
) -> Doc:
    body = _decode(chunk).rstrip()
    first = body.lstrip("\n").split("\n", 1)[0]
    match = _HEADER_DATE_RE.match(chunk)
    date = match.group(1).decode() if match else fallback_date
    title = first[3:].strip() if first.startswith("## ") else first.strip()
    return Doc(
        tier=tier,
        type=type_,
        file=rel,
        loc=str(offset),
        line=line,
        date=date,
        title=title[:TITLE_CHARS],
        body=body,
    )


def section_docs(source: SourceFile, data: bytes) -> Iterator[Doc]:
    if source.kind == "named":
        type_ = source.name.removesuffix(".md")
    else:
        type_ = "section"
    fallback = name_date(source.name) if source.tier == "l2" else None
    for offset, line, chunk in iter_sections(data):
        yield section_doc(source.tier, type_, source.rel, offset, line, chunk, fallback)


# -- L3 summaries -----------------------------------------------------------------------


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def summary_docs(source: SourceFile, data: bytes) -> Iterator[Doc]:
    """One doc per overall summary, theme, decision and issue; a bad file gives none."""
    try:
        summary = fastjson.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return
    if not isinstance(summary, dict):
        return
    range_ = summary.get("dateRange")
    fallback = (norm_date(range_.get("last")) if isinstance(range_, dict) else None) or name_date(source.name)
    archive = archive_of_summary(source.name)
    overall = _text(summary.get("overallSummary"))
    if overall:
        yield Doc(
            "l3", "overall", source.rel, "o", None, fallback, f"summary of {archive}", overall, raw=overall
        )
    lists = (("themes", "theme", "t"), ("keyDecisions", "decision", "d"), ("issues", "issue", "i"))
    for key, type_, prefix in lists:
        items = summary.get(key)
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            doc = _summary_item(source.rel, type_, f"{prefix}{i}", item, fallback)
            if doc:
                yield doc


def _summary_item(rel: str, type_: str, loc: str, item: Any, fallback: str | None) -> Doc | None:
    if isinstance(item, str):  # a list of plain strings: keep them as the main field
        item = {_MAIN_FIELD[type_]: item}
    if not isinstance(item, dict):
        return None
    if type_ == "theme":
        head, detail = _text(item.get("name")), _text(item.get("summary"))
        sessions = item.get("sessions")
        dates = [d for d in (norm_date(s) for s in sessions) if d] if isinstance(sessions, list) else []
        date = max(dates) if dates else fallback
        body = "\n".join(x for x in (head, detail) if x)
    elif type_ == "decision":
        head, detail = _text(item.get("decision")), _text(item.get("reason"))
        date = norm_date(item.get("date")) or fallback
        body = head + (f"\nreason: {detail}" if detail else "")
    else:
        head, detail = _text(item.get("issue")), _text(item.get("status"))
        date = norm_date(item.get("date")) or fallback
        body = head + (f"\nstatus: {detail}" if detail else "")
    if not body:
        return None
    title = (head or detail).split("\n", 1)[0]
    return Doc("l3", type_, rel, loc, None, date, title[:TITLE_CHARS], body, raw=item)


# -- L1 sessions ------------------------------------------------------------------------


#: ``json.dumps(value, ensure_ascii=False)`` (a build serialises a tool call's input for most entries).
_JSON_TEXT = fastjson.text


def l1_body(entry: dict[str, Any]) -> str:
    """The searchable text of an L1 entry: its text and tool fields, bookkeeping left out."""
    parts: list[str] = []
    for key, value in entry.items():
        if key in L1_META_KEYS or value is None or value is True or value is False:
            continue
        if isinstance(value, str):
            if value:
                parts.append(value)
        elif isinstance(value, (int, float)):
            parts.append(str(value))
        else:
            parts.append(_JSON_TEXT(value))
    if entry.get("result") == "error":
        parts.append("error")
    return "\n".join(parts)


def l1_title(entry: dict[str, Any]) -> str:
    role = entry.get("role")
    role_s = role if isinstance(role, str) else "entry"
    name = entry.get("name")
    title = f"{role_s} {name}" if isinstance(name, str) and name else role_s
    if role == "tool_result" and entry.get("result") == "error":
        title += " error"
    if entry.get("sidechain") is True:
        title += " (subagent)"
    return title[:TITLE_CHARS]


#: What :func:`parse_line` gives for a line that is not JSON (maybe still being written).
BROKEN = object()


_JSON_VALUE = fastjson.raw_decode
_BOM = b"\xef\xbb\xbf"


def parse_line(raw: bytes) -> object:
    """One JSON line: its value, None when blank, :data:`BROKEN` when it does not parse
    (invalid UTF-8 is replaced before giving up). What ``json.loads`` of the line gives,
    without its per-call work (a build parses every line of the store)."""
    text = raw.strip()
    if text.startswith(_BOM):
        text = text[3:].lstrip()
    if not text:
        return None
    try:
        line = text.decode("utf-8")
    except UnicodeDecodeError:
        line = text.decode("utf-8", "replace")
    try:
        value, end = _JSON_VALUE(line)
    except ValueError:
        return BROKEN
    return value if end == len(line) else BROKEN  # more after the value (json.loads refuses it)


def l1_entry(raw: bytes, parse: Callable[[bytes], object] = parse_line) -> tuple[object, str]:
    """One L1 line's value and, for an object, its :func:`l1_body` (else "").

    With :func:`memkeeper.core.basics.fastjson.bulk_parser`'s ``parse`` the body is the same as with parse_line's, and so are
    the kind of value and its text fields: an integer beyond 64 bits that came as a float is
    at least 2**63 in size, so the body shows it with an exponent (``e+``) and the line is read
    again by parse_line; only under a bookkeeping key (``ts``, ``role`` …, left out of the
    body) does it stay a float, which is never one of the strings those keys are read for.
    (Checking those keys' types on every line would cost a third of what orjson saves.)
    """
    try:
        entry = parse(raw)
    except ValueError:  # refused by the bulk parser: parse_line tells what it is
        entry = parse_line(raw)
    if not isinstance(entry, dict):
        return entry, ""
    body = l1_body(entry)
    if parse is not parse_line and "e+" in body:
        entry = parse_line(raw)
        body = l1_body(entry) if isinstance(entry, dict) else ""
    return entry, body


def l1_doc(
    source_rel: str,
    fallback_date: str | None,
    default_session: str | None,
    offset: int,
    line: int | None,
    raw_line: bytes,
) -> Doc | None:
    """The doc of one L1 line, or None for a blank, broken or empty one."""
    entry = parse_line(raw_line)
    if not isinstance(entry, dict):
        return None
    body = l1_body(entry)
    if not body:
        return None
    role = entry.get("role")
    type_ = role if role in L1_ROLES else "other"
    ts = entry.get("ts")
    date = ts if isinstance(ts, str) and norm_date(ts) else fallback_date
    session = entry.get("session")
    return Doc(
        tier="l1",
        type=type_,
        file=source_rel,
        loc=str(offset),
        line=line,
        date=date,
        title=l1_title(entry),
        body=body,
        session=session if isinstance(session, str) and session else default_session,
        raw=entry,
    )


# -- what the word index holds (ranked search) -------------------------------------------

#: Characters of an entry read into its own word fields.
WORD_FIELD_CHARS = 4000
_HIGH_ROLES = ("user", "assistant")

WordRow = tuple[int, str, str]  # (byte offset, hi, lo)


def word_row(offset: int, role: object, body: str, turns: bool = True) -> WordRow:
    """An L1 entry's word row: ``hi`` is what a person or Claude wrote (prompts, answers),
    ``lo`` the tool calls and their output. Its neighbours are found at query time
    (:mod:`.near`), not copied into it. ``turns=False``: the body is known to hold no
    camelCase word (``words.has_turn`` of a text holding it said so)."""
    text = with_parts(body[:WORD_FIELD_CHARS]) if turns else body[:WORD_FIELD_CHARS]
    return (offset, text, "") if role in _HIGH_ROLES else (offset, "", text)


def small_word_fields(doc: Doc) -> tuple[str, str]:
    """The word fields of a memory or L3 doc: all of it is written by a person or a summary."""
    return (with_parts(doc.body), "")


def iter_lines(data: bytes, start: int = 0, first_line: int = 1) -> Iterator[tuple[int, int, bytes]]:
    """(offset, 1-based line, bytes) of each line from ``start``, the last even without a newline."""
    pos = start
    line = first_line
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        if nl < 0:
            yield pos, line, data[pos:]
            return
        yield pos, line, data[pos:nl]
        pos = nl + 1
        line += 1


def l1_docs(source: SourceFile, data: bytes, start: int = 0, first_line: int = 1) -> Iterator[Doc]:
    fallback = name_date(source.name)
    session = l1_session(source.name)
    for offset, line, raw in iter_lines(data, start, first_line):
        doc = l1_doc(source.rel, fallback, session, offset, line, raw)
        if doc:
            yield doc


def iter_source_docs(paths: StorePaths, source: SourceFile) -> Iterator[Doc]:
    """Every doc of a file, the same as ``docs_of`` its bytes; a plain L1 file is read line by line."""
    if source.kind != "l1":
        yield from docs_of(source, read_source(paths, source))
        return
    fallback = name_date(source.name)
    session = l1_session(source.name)
    try:
        handle = open_read(paths.root / source.rel)
    except StoreLinkError:
        raise
    except OSError:
        return
    with handle:
        offset = 0
        for number, raw in enumerate(handle, 1):
            doc = l1_doc(source.rel, fallback, session, offset, number, raw)
            if doc:
                yield doc
            offset += len(raw)


def docs_of(source: SourceFile, data: bytes) -> Iterator[Doc]:
    """Every doc of a whole file."""
    if source.tier == "l1":
        return l1_docs(source, data)
    if source.tier == "l3":
        return summary_docs(source, data)
    return section_docs(source, data)


def lines_at(path: Path, offsets: Sequence[int], gz: bool = False) -> list[tuple[int, int]]:
    """(offset, 1-based line number of the byte at it) for ``offsets`` in ascending order, the file
    read once up to the last of them; line 0 each when the file cannot be read."""
    try:
        with open_read(path) as handle:
            if gz:
                import gzip

                data = gzip.decompress(handle.read())
            else:
                data = handle.read(offsets[-1] if offsets else 0)
    except StoreLinkError:
        raise
    except (OSError, EOFError, ValueError):
        return [(offset, 0) for offset in offsets]
    out: list[tuple[int, int]] = []
    line, last = 1, 0
    for offset in offsets:
        line += data.count(b"\n", last, offset)
        last = offset
        out.append((offset, line))
    return out
