"""L1: one redacted JSONL copy of each Claude Code session, kept up to date incrementally.

``sessions/<UTC YYYY-MM-DD_HHMMSS of the first entry>_<session id[:8]>.l1.jsonl`` holds the
JS plugin's role entries (reference §4.2: ``user``, ``assistant``, ``tool``, ``tool_result``,
same keys in the same order, compact JSON, literal non-ASCII) and fixes what that format
lost: typed prompts, tool calls that share a message with text, ``tool_use_id`` on calls
and results, subagent work (``sidechain: true`` + ``agentId``, read from
``<session>/subagents/agent-*.jsonl``) and the full ``session`` id on every entry. Every
string goes through :mod:`memkeeper.core.redaction.redact` before it is written.

Refinement is incremental and idempotent: ``.state/l1/<session>.json`` keeps, per source
file, the byte offset up to which whole lines were consumed. A run appends only what is
new, under a per-session lock, with a two-phase record (``pending``) so a run killed
between the append and the offset update is rolled back, not duplicated. If that state
is lost, or a source file shrank, the run compares against the lines already in the L1
file instead of trusting offsets. Resuming a session appends to the same file, and the
copy outlives Claude Code's 30-day transcript cleanup.

Files are written with a trailing newline per line; readers also accept the JS plugin's
files, which have none. Old files can be gzipped (``.l1.jsonl.gz``) and are still read.
Stdlib only.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import json
import os
import re
import shutil
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..basics.platform import read_at
from ..basics.timestamps import iso_now, parse_iso, utc_now
from ..store import changes
from ..store.atomic import atomic_write_json, open_no_follow, open_read, redact_bytes
from ..store.lock import file_lock, reentrant_lock
from ..store.names import (
    L1_GZ_SUFFIX,
    L1_SUFFIX,
    is_l1,
    is_l1_gz,
    l1_name,
    l1_session,
    l1_started,
    short_session,
)
from ..store.paths import StorePaths, ensure_store
from ..store.records import json_fields
from .l1_entries import dumps_entry, entry_from_event, read_l1
from .transcript import (
    MAX_LINE_BYTES,
    ParseStats,
    find_transcript,
    first_session_id,
    iter_events,
    list_transcripts,
    newest_transcript,
    subagent_transcripts,
)

# --- results -------------------------------------------------------------------------


@dataclass
class RefineResult:
    """What one refinement of one session did."""

    session_id: str
    transcript: Path
    l1_path: Path | None
    new_entries: int = 0
    total_entries: int = 0
    broken_lines: int = 0
    bytes_read: int = 0
    sources: int = 0
    partial_tail: bool = False
    reconciled: bool = False  # offsets were missing or stale; existing lines were compared
    unknown_types: dict[str, int] = field(default_factory=dict)
    oversize_lines: int = 0  # over transcript.MAX_LINE_BYTES: kept as stub entries

    def add_stats(self, stats: ParseStats) -> None:
        """Count one more source read with ``stats``."""
        self.sources += 1
        self.broken_lines += stats.broken_lines
        self.oversize_lines += stats.oversize_lines
        self.bytes_read += stats.bytes_read
        self.partial_tail = self.partial_tail or stats.partial_tail
        for name, count in stats.unknown_types.items():
            self.unknown_types[name] = self.unknown_types.get(name, 0) + count

    def as_dict(self) -> dict[str, Any]:
        return json_fields(self, camel_case=True, keys={"session_id": "session", "l1_path": "l1"}) | {
            "transcript": str(self.transcript),
            "l1": str(self.l1_path) if self.l1_path else None,
        }


@dataclass
class L1File:
    """One L1 file of the store, as listed by :func:`list_l1`."""

    path: Path
    session_id: str | None
    started: str | None  # ISO-8601 UTC of the first entry (or from the name)
    last: str | None = None
    entries: int | None = None
    messages: int | None = None  # user + assistant entries
    tools: int | None = None
    size: int = 0
    compressed: bool = False
    legacy: bool = False  # written by the JS plugin (no session field)

    @property
    def name(self) -> str:
        return self.path.name

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.name} | json_fields(
            self, keys={"path": None, "session_id": "session", "size": "bytes"}
        )


# --- state ---------------------------------------------------------------------------


def _state_dir(paths: StorePaths) -> Path:
    return paths.state / "l1"


def _safe_key(session_id: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", session_id) and not session_id.startswith("."):
        return session_id
    return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:32]


def _state_path(paths: StorePaths, session_id: str) -> Path:
    return _state_dir(paths) / f"{_safe_key(session_id)}.json"


def _session_lock(paths: StorePaths, session_id: str) -> Path:
    return _state_dir(paths) / f"{_safe_key(session_id)}.lock"


def _load_state(paths: StorePaths, session_id: str) -> dict[str, Any] | None:
    """The session's refine state; None if absent. An unreadable one is backed up, not lost."""
    path = _state_path(paths, session_id)
    try:
        data = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        _backup_unreadable(paths, path)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("sources"), dict):
        _backup_unreadable(paths, path)
        return None
    return data


def _backup_unreadable(paths: StorePaths, path: Path) -> None:
    paths.backups.mkdir(mode=0o700, parents=True, exist_ok=True)
    target = paths.backups / f"{path.name}.unreadable-{int(time.time())}"
    try:
        os.replace(path, target)
    except OSError:
        pass


def _save_state(paths: StorePaths, session_id: str, state: dict[str, Any]) -> None:
    _state_dir(paths).mkdir(mode=0o700, parents=True, exist_ok=True)
    atomic_write_json(_state_path(paths, session_id), state)


# --- writing -------------------------------------------------------------------------


def _append_durable(path: Path, data: bytes) -> None:
    """Append whole lines with O_APPEND and fsync; a missing final newline is repaired first."""
    data = redact_bytes(path, data)  # the store's one writer's redaction (idempotent on L1 fields)
    fd = open_no_follow(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        size = os.fstat(fd).st_size
        if size and read_at(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _find_session_file(paths: StorePaths, session_id: str) -> Path | None:
    """An existing (uncompressed) L1 file of this session, written by memkeeper."""
    if not paths.sessions.is_dir():
        return None
    for path in sorted(paths.sessions.glob(f"*_{glob.escape(short_session(session_id))}{L1_SUFFIX}")):
        first = next(read_l1(path), None)
        if first is not None and first.get("session") == session_id:
            return path
    return None


def _existing_lines(path: Path | None) -> Counter[bytes]:
    if path is None or not path.exists():
        return Counter()
    lines: Counter[bytes] = Counter()
    for entry in read_l1(path):
        lines[dumps_entry(entry)] += 1
    return lines


@dataclass
class _Source:
    key: str  # "main" or "agent:<id>": offsets do not depend on where the transcript lives
    path: Path
    agent_id: str | None
    sidechain: bool


def _sources(transcript: Path, session_id: str) -> list[_Source]:
    # The session's own file is "main" wherever it lives; any other file of the session
    # (a 2.0.x ``agent-<id>.jsonl`` beside it, a renamed copy) keeps offsets of its own.
    key = "main" if transcript.stem == session_id else f"file:{transcript.name}"
    found = [_Source(key, transcript, None, False)]
    for path in subagent_transcripts(transcript, session_id):
        agent = path.stem.removeprefix("agent-")
        found.append(_Source(f"agent:{agent}", path, agent, True))
    return found


def refine_transcript(
    paths: StorePaths, transcript_path: Path | str, session_id: str | None = None
) -> RefineResult:
    """Bring the session's L1 file up to date with ``transcript_path`` (and its subagents)."""
    transcript = Path(transcript_path).expanduser().absolute()
    if not transcript.is_file():
        raise FileNotFoundError(2, "transcript not found", str(transcript))
    session = session_id or first_session_id(transcript) or transcript.stem
    ensure_store(paths)
    _state_dir(paths).mkdir(mode=0o700, parents=True, exist_ok=True)
    with file_lock(_session_lock(paths, session), timeout=60.0):
        result = _refine_locked(paths, transcript, session)
    if result.oversize_lines:
        from ..store.jobs import log_line

        log_line(
            paths.logs,
            f"L1: {result.oversize_lines} line(s) of {transcript.name} over {MAX_LINE_BYTES >> 20} MB,"
            " too large to keep: a stub entry stands for each of a kind L1 keeps",
        )
    if result.l1_path is not None:  # appended in place: the search index is told which file
        changes.record(paths, result.l1_path)
        from .l1_newest import newest_l1_names

        newest_l1_names(os.fspath(paths.root), settle=True)  # a new file: SessionStart's list is saved now
    return result


@dataclass
class _RefineState:
    """The refine state of one session (``.state/l1/<session>.json``), loaded, changed and saved.

    ``data`` is the file's JSON object as read (keys we do not know are written back): the L1
    file (``l1``), its entry count, each source's offset, and ``pending``, the marker of an
    append in flight, which :meth:`commit` writes before appending and clears after.
    """

    paths: StorePaths
    session: str
    data: dict[str, Any]
    fresh: bool  # nothing on disk: what L1 already holds must be compared, not trusted
    was_pending: bool = False

    @classmethod
    def load(cls, paths: StorePaths, session: str) -> _RefineState:
        data = _load_state(paths, session)
        if data is None:
            return cls(
                paths,
                session,
                {"session": session, "l1": None, "entries": 0, "sources": {}, "pending": None},
                True,
            )
        return cls(paths, session, data, False)

    @property
    def l1_path(self) -> Path | None:
        return self.paths.sessions / self.data["l1"] if self.data.get("l1") else None

    @property
    def offsets(self) -> dict[str, Any]:
        offsets: dict[str, Any] = self.data["sources"]
        return offsets

    @property
    def entries(self) -> int:
        return int(self.data.get("entries", 0))

    @entries.setter
    def entries(self, value: int) -> None:
        self.data["entries"] = value

    def recover(self) -> None:
        """Undo an append a killed run left without its offsets; let go of a vanished L1 file."""
        pending = self.data.get("pending")
        self.was_pending = pending is not None
        l1_path = self.l1_path
        if isinstance(pending, dict) and l1_path is not None and l1_path.exists():
            keep = int(pending.get("l1_size", 0))
            if l1_path.stat().st_size > keep:
                os.truncate(l1_path, keep)
            self.entries = int(pending.get("entries", self.entries))
        self.data["pending"] = None
        if l1_path is not None and not l1_path.exists():
            # compressed, deduplicated or deleted: later entries start a new file
            self.data["l1"] = None
            self.entries = 0

    def commit(self, l1_path: Path, chunks: list[bytes]) -> None:
        """Append ``chunks`` to ``l1_path`` durably, marked pending until it is done."""
        self.data["l1"] = l1_path.name
        size_before = l1_path.stat().st_size if l1_path.exists() else 0
        self.data["pending"] = {"l1_size": size_before, "entries": self.entries}
        self.save()
        _append_durable(l1_path, b"".join(chunks))
        self.entries += len(chunks)
        self.data["pending"] = None

    def finish(self, new_offsets: dict[str, dict[str, Any]], changed: bool) -> None:
        """Record the sources' new offsets; save if anything changed."""
        changed = changed or any(self.offsets.get(key) != value for key, value in new_offsets.items())
        self.offsets.update(new_offsets)
        if changed or self.was_pending:
            self.data["session"] = self.session
            self.data["updatedAt"] = iso_now()
            self.save()

    def save(self) -> None:
        _save_state(self.paths, self.session, self.data)


def _must_reconcile(state: _RefineState, sources: list[_Source], l1_path: Path | None) -> bool:
    """Compare content instead of trusting offsets: no state, a source that shrank (rewritten)
    or a source this session never read while L1 already holds lines."""
    reconcile = state.fresh
    for source in sources:
        known = state.offsets.get(source.key)
        if isinstance(known, dict) and source.path.stat().st_size < int(known.get("offset", 0)):
            reconcile = True
            state.offsets.pop(source.key, None)
    if any(source.key not in state.offsets for source in sources) and l1_path is not None:
        reconcile = True
    return reconcile


@dataclass
class _Read:
    """The new L1 lines of every source, and where each source was read up to."""

    lines: list[bytes] = field(default_factory=list)
    first_ts: str | None = None
    offsets: dict[str, dict[str, Any]] = field(default_factory=dict)


def _read_source(
    source: _Source, known: Any, session: str, seen: Counter[bytes], read: _Read, result: RefineResult
) -> None:
    """Add the new entries of ``source`` (from its known offset) to ``read``; ``seen`` lines are skipped."""
    start = int(known.get("offset", 0)) if isinstance(known, dict) else 0
    last_ts = known.get("last_ts") if isinstance(known, dict) else None
    stats = ParseStats()
    for event in iter_events(source.path, start, stats):
        ts = event.ts or last_ts or iso_now()
        last_ts = ts
        entry = entry_from_event(event, ts, session, source.agent_id, source.sidechain)
        if entry is None:
            continue
        line = dumps_entry(entry)
        if seen[line] > 0:
            seen[line] -= 1
            continue
        read.first_ts = read.first_ts or ts
        read.lines.append(line)
    result.add_stats(stats)
    read.offsets[source.key] = {
        "path": str(source.path),
        "offset": stats.end_offset,
        "size": source.path.stat().st_size,
        "last_ts": last_ts,
    }


def _refine_locked(paths: StorePaths, transcript: Path, session: str) -> RefineResult:
    state = _RefineState.load(paths, session)
    state.recover()
    l1_path = state.l1_path
    if l1_path is None and state.fresh:
        l1_path = _find_session_file(paths, session)
    sources = _sources(transcript, session)
    reconcile = _must_reconcile(state, sources, l1_path)
    seen = _existing_lines(l1_path) if reconcile else Counter()
    if reconcile and l1_path is not None:
        state.entries = sum(seen.values())
    result = RefineResult(session_id=session, transcript=transcript, l1_path=None)
    result.reconciled = reconcile and l1_path is not None
    read = _Read()
    for source in sources:
        _read_source(source, state.offsets.get(source.key), session, seen, read, result)
    if read.lines:
        l1_path = l1_path or paths.sessions / l1_name(parse_iso(read.first_ts) or utc_now(), session)
        state.commit(l1_path, read.lines)
    state.finish(read.offsets, changed=bool(read.lines) or reconcile)
    result.l1_path = l1_path
    result.new_entries = len(read.lines)
    result.total_entries = state.entries
    return result


# --- reading -------------------------------------------------------------------------


def _l1_paths(paths: StorePaths) -> list[Path]:
    if not paths.sessions.is_dir():
        return []
    return sorted(path for path in paths.sessions.iterdir() if path.is_file() and is_l1(path.name))


def list_l1(paths: StorePaths, counts: bool = True) -> list[L1File]:
    """Every L1 file of the store, oldest first; ``counts`` reads each file to count entries."""
    files: list[L1File] = []
    for path in _l1_paths(paths):
        info = L1File(
            path=path,
            session_id=l1_session(path.name),
            started=l1_started(path.name),
            size=path.stat().st_size,
            compressed=is_l1_gz(path.name),
        )
        entries = read_l1(path)
        first = next(entries, None)
        if first is None:
            info.entries = info.messages = info.tools = 0 if counts else None
            files.append(info)
            continue
        if isinstance(first.get("session"), str):
            info.session_id = first["session"]
        else:
            info.legacy = True
        if isinstance(first.get("ts"), str):
            info.started = first["ts"]
        if counts:
            tally = count_entries(_chain(first, entries))
            info.entries, info.messages, info.tools = tally.entries, tally.messages, tally.tools
            info.last = tally.last_ts
        files.append(info)
    return files


@dataclass(slots=True)
class EntryCounts:
    """What a session's L1 entries add up to: the one count for the CLI, the TUI and the index."""

    entries: int = 0
    messages: int = 0  # user and assistant lines
    tools: int = 0
    prompts: int = 0  # user lines of the main thread
    subagent: bool = False
    first: datetime | None = None
    last: datetime | None = None
    last_ts: str | None = None  # the newest entry's timestamp, as written

    @property
    def minutes(self) -> int:
        return int((self.last - self.first).total_seconds() // 60) if self.first and self.last else 0


def count_entries(entries: Iterable[dict[str, Any]]) -> EntryCounts:
    """Count a session's entries (timestamps compared as instants, not strings)."""
    tally = EntryCounts()
    for entry in entries:
        tally.entries += 1
        role = entry.get("role")
        if role in ("user", "assistant"):
            tally.messages += 1
        elif role == "tool":
            tally.tools += 1
        side = bool(entry.get("sidechain"))
        tally.subagent = tally.subagent or side
        if role == "user" and not side:
            tally.prompts += 1
        when = parse_iso(entry.get("ts"))
        if when is not None:
            if tally.first is None or when < tally.first:
                tally.first = when
            if tally.last is None or when > tally.last:
                tally.last, tally.last_ts = when, entry["ts"]
    return tally


def _chain(first: dict[str, Any], rest: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield first
    yield from rest


def entries_since(paths: StorePaths, watermark_ts: str | None) -> list[dict[str, Any]]:
    """Every L1 entry newer than ``watermark_ts`` (all of them when None), oldest first.

    Timestamps are compared as instants, not strings, so ``…:00Z`` and ``…:00.500Z`` order
    correctly. Files last modified before the watermark cannot hold newer entries and are
    not opened.
    """
    mark = parse_iso(watermark_ts) if watermark_ts else None
    found: list[tuple[datetime, int, dict[str, Any]]] = []
    order = 0
    for path in _l1_paths(paths):
        if mark is not None:
            try:
                modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            except OSError:
                continue
            if modified < mark:
                continue
        for entry in read_l1(path):
            when = parse_iso(entry.get("ts"))
            if when is None:
                if mark is not None:
                    continue
                when = datetime.min.replace(tzinfo=UTC)
            if mark is not None and when <= mark:
                continue
            found.append((when, order, entry))
            order += 1
    found.sort(key=lambda item: (item[0], item[1]))
    return [entry for _when, _order, entry in found]


# --- jobs and maintenance ------------------------------------------------------------


def run_l1_job(paths: StorePaths, options: dict[str, Any]) -> None:
    """Job runner ``l1``: options ``transcript_path`` and/or ``session_id``."""
    transcript = options.get("transcript_path")
    session = options.get("session_id")
    path: Path | None = Path(transcript) if transcript else None
    if path is None and session:
        path = find_transcript(str(session), paths.project)
    if path is None:
        path = newest_transcript(paths.project)
    if path is None or not path.is_file():
        return
    result = refine_transcript(paths, path, str(session) if session else None)
    if result.l1_path is not None:
        from .titles import refresh_titles

        refresh_titles(paths, [result.l1_path.name])


def refine_all(paths: StorePaths) -> list[RefineResult]:
    """Refine every transcript of this project that Claude Code still keeps."""
    return [refine_transcript(paths, path) for path in list_transcripts(paths.project, include_agents=True)]


@dataclass
class DedupeResult:
    kept: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def _canonical_lines(path: Path) -> set[str]:
    return {json.dumps(entry, sort_keys=True, ensure_ascii=False) for entry in read_l1(path)}


def dedupe_l1(paths: StorePaths, dry_run: bool = False) -> DedupeResult:
    """Move L1 files whose every entry is also in a larger file of the same session to trash.

    Files are grouped by session (the ``session`` field, else the 8-character id in the
    name); JS files without a session id are grouped by their first timestamp. Unlike the
    JS plugin, equal-size duplicates are removed too, and a file is only removed when its
    content is really contained in the one kept. Nothing is unlinked.
    """
    result = DedupeResult()
    groups: dict[tuple[str, str], list[L1File]] = {}
    for info in list_l1(paths, counts=False):
        if info.session_id:
            key = ("session", short_session(info.session_id))
        elif info.started:
            key = ("ts", info.started)
        else:
            continue
        groups.setdefault(key, []).append(info)
    with reentrant_lock(paths.lock):
        for members in groups.values():
            if len(members) < 2:
                continue
            members.sort(key=lambda info: (-info.size, info.name))
            keeper = members[0]
            kept_lines = _canonical_lines(keeper.path)
            result.kept.append(keeper.name)
            for other in members[1:]:
                if not _canonical_lines(other.path) <= kept_lines:
                    result.kept.append(other.name)
                    continue
                result.removed.append(other.name)
                if not dry_run:
                    _to_trash(paths, other)
    return result


def _to_trash(paths: StorePaths, info: L1File) -> None:
    """Into the store's trash like ``memkeeper forget``, so ``trash`` lists it and ``restore`` works."""
    from ..store.trash import move_into_trash

    if info.session_id and not info.legacy and len(info.session_id) > 8:
        with file_lock(_session_lock(paths, info.session_id), timeout=60.0):
            move_into_trash(paths, "l1", info.name, [info.path], {"reason": "dedupe-l1"})
    else:
        move_into_trash(paths, "l1", info.name, [info.path], {"reason": "dedupe-l1"})


def compress(paths: StorePaths, retention_days: int) -> list[str]:
    """Gzip L1 files not modified for ``retention_days`` into ``.l1.jsonl.gz``; never deletes data.

    The gzip keeps the original modification time, so age-based reads still skip it.
    """
    cutoff = time.time() - retention_days * 86400
    done: list[str] = []
    for info in list_l1(paths, counts=False):
        if info.compressed or info.path.stat().st_mtime >= cutoff:
            continue
        target = info.path.with_name(info.name.replace(L1_SUFFIX, L1_GZ_SUFFIX))
        if target.exists():
            continue
        if info.session_id and not info.legacy and len(info.session_id) > 8:
            with file_lock(_session_lock(paths, info.session_id), timeout=60.0):
                _gzip_file(info.path, target)
        else:
            _gzip_file(info.path, target)
        done.append(target.name)
    return done


def _gzip_file(source: Path, target: Path) -> None:
    stat = source.stat()
    tmp = target.with_name(f".{target.name}.tmp")
    fd = open_no_follow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with (
            os.fdopen(fd, "wb") as raw,
            gzip.GzipFile(filename=source.name, mode="wb", fileobj=raw, mtime=int(stat.st_mtime)) as packed,
        ):
            with open_read(source) as handle:
                shutil.copyfileobj(handle, packed)
            packed.flush()
        with open(tmp, "rb+") as sync:
            os.fsync(sync.fileno())
        os.replace(tmp, target)
        os.utime(target, (stat.st_atime, stat.st_mtime))
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    source.unlink()
