"""The L2 flush: new L1 entries become 2-4 English bullets appended to memory.md.

The asynchronous flush of the source design (spec 002), run as the detached ``flush``
job (:func:`run_flush_job`): bring the L1 copies of the recently seen sessions up to
date, take the L1 entries past the watermark (per L1 file, the byte offset flushed up to:
:mod:`memkeeper.core.log.flush_positions`; the index's ``lastMemoryUpdateTs`` is kept for the
JS plugin as the newest ``ts`` flushed), ask
the configured summarizer for ``- [topic]: fact`` bullets or ``SKIP``, and append

    \\n## YYYY-MM-DD_HHMM (local MM-DD_HHMM)\\n<bullets>\\n

to memory.md. The append and the watermark move happen in one step under the store
lock, after checking that the watermark is still the one the entries were read
against, so nothing is appended twice or skipped; a small journal written before the
append makes that hold across a kill between the two writes. When the model is not
available or today's budget is spent, a deterministic extractive set of bullets is
written instead, so memory is never silently lost. Then the rotation check, then the
pending L3 summaries.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import summarizers
from ..basics.fastjson import json_lines
from ..basics.timestamps import iso_now, section_header, utc_now
from ..capture import live_sessions
from ..capture.l1 import refine_transcript
from ..capture.live_sessions import read_sessions
from ..capture.titles import note_summary
from ..capture.transcript import find_transcript
from ..config.model import load_config_or_default
from ..config.reader import hook_settings
from ..redaction.redact import redact
from ..store import intents, jobs
from ..store.atomic import append_text, atomic_write_bytes, atomic_write_json
from ..store.index_entries import last_memory_update
from ..store.jobs import log_error
from ..store.lock import LockTimeout, reentrant_lock
from ..store.memory_index import list_archives, read_index, update_index
from ..store.memory_index_model import auto_targets
from ..store.paths import StorePaths, ensure_store
from ..summarizers import SummarizerError, resolve_backend_name
from . import flush_positions, rotation
from .flush_positions import Positions
from .flush_rules import Plan, extractive_bullets, flat_text, format_entry, plan_batch
from .migrate import migrate_legacy

#: The entries of one summarizer call are cut to about this many characters.
MAX_PROMPT_CHARS = 24_000
#: At most this many chunks per run; the rest waits for the next flush.
MAX_CHUNKS = 6
MAX_BULLETS = 6
MAX_BULLET_CHARS = 300
JOURNAL = "flush-journal.json"
RUNS_LOG = "flush-runs.jsonl"
RUNS_LOG_MAX_BYTES = 64 * 1024
RUNS_LOG_KEEP = 200

FLUSH_PROMPT = """You are a conversation memory extractor.
Summarize the coding session excerpt below into ENGLISH structured memory entries.

Rules:
- Output 2-4 bullet points, each one sentence.
- Keep decisions, facts learned, user preferences, outcomes and open problems; skip greetings, small talk and transient errors.
- If nothing is worth remembering, output exactly: SKIP
- Format every bullet as "- [topic]: fact" and output nothing else.

Example output:
- [build]: The project moved its packaging from setup.py to pyproject.toml with setuptools.
- [preference]: The user wants commit messages written in English.

Conversation:
{conversation}
"""

BULLET_RE = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(.+?)\s*$")
TOPIC_RE = re.compile(r"^\*{0,2}\[([^\]\n]{1,60})\]\*{0,2}\s*[:：\-–—]?\s*(.+)$")

#: (section text or None for SKIP, generator name) from a chunk of entries.
Summarize = Callable[[StorePaths, list[dict[str, Any]]], tuple[list[str] | None, str]]
#: What to do with a chunk (see core/log/flush_rules.py), given whether more entries follow it.
Planner = Callable[[list[dict[str, Any]], bool], Plan]


@dataclass
class FlushResult:
    sections: int = 0  # sections appended to memory.md
    skipped: int = 0  # chunks the summarizer judged not worth remembering
    entries: int = 0  # L1 entries processed (the watermark moved past them)
    generators: list[str] = field(default_factory=list)
    watermark: str | None = None
    more: bool = False  # entries are left for the next run
    waiting: int = 0  # entries left after the watermark: too few yet to be worth a model call


def chunk_entries(entries: list[dict[str, Any]], max_chars: int | None = None) -> list[list[dict[str, Any]]]:
    """Split into chunks of about ``max_chars`` of text, never between two entries with one ``ts``.

    The watermark is a ``ts``: a chunk boundary inside a group of equal stamps would
    make the rest of the group look processed.
    """
    limit = max_chars or MAX_PROMPT_CHARS
    chunks: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = 0
    for i, entry in enumerate(entries):
        current.append(entry)
        size += len(format_entry(entry)) + 1
        following = entries[i + 1] if i + 1 < len(entries) else None
        if size >= limit and (following is None or following.get("ts") != entry.get("ts")):
            chunks.append(current)
            current, size = [], 0
    if current:
        chunks.append(current)
    return chunks


def build_prompt(entries: list[dict[str, Any]]) -> str:
    lines = [line for line in (format_entry(e) for e in entries) if line]
    return FLUSH_PROMPT.format(conversation="\n".join(lines))


# --- model output -------------------------------------------------------------------


def parse_bullets(text: str) -> list[str] | None:
    """Normalized ``- [topic]: fact`` bullets; None for SKIP; [] when the answer is unusable."""
    stripped = text.strip().strip("`").strip()
    if re.fullmatch(r"(?i)\**skip\**\.?", stripped):
        return None
    bullets: list[str] = []
    for line in stripped.splitlines():
        match = BULLET_RE.match(line)
        if not match:
            continue
        body = match.group(1)
        topic_match = TOPIC_RE.match(body)
        if topic_match:
            topic, fact = topic_match.group(1).strip(), topic_match.group(2).strip()
        else:
            topic, fact = "note", body
        fact = flat_text(fact, MAX_BULLET_CHARS)
        if fact:
            bullets.append(f"- [{flat_text(topic, 60)}]: {fact}")
    if not bullets and stripped.splitlines() and stripped.splitlines()[0].strip().upper() == "SKIP":
        return None
    return bullets[:MAX_BULLETS]


def summarize_with_backend(paths: StorePaths, entries: list[dict[str, Any]]) -> tuple[list[str] | None, str]:
    """Ask the configured summarizer; the extractive bullets when it fails or the budget is spent."""
    config, _warnings = load_config_or_default(paths)
    try:
        if resolve_backend_name(config) == "extractive":
            return extractive_bullets(entries), "extractive"
        completion = summarizers.complete(paths, config, build_prompt(entries), purpose="flush")
    except SummarizerError as exc:
        log_error(paths, f"flush: summarizer unavailable, extractive bullets written instead: {exc}")
        return extractive_bullets(entries), "extractive"
    bullets = parse_bullets(completion.text)
    if bullets is None:
        return None, completion.model or "model"
    if not bullets:
        log_error(
            paths, f"flush: summarizer answer had no bullets, extractive used: {completion.text[:120]!r}"
        )
        return extractive_bullets(entries), "extractive"
    return bullets, completion.model or "model"


# --- writing ------------------------------------------------------------------------


def section_text(bullets: list[str], moment: datetime | None = None) -> str:
    """``\\n## YYYY-MM-DD_HHMM (local MM-DD_HHMM)\\n<bullets>\\n`` (UTC first, as the JS skill)."""
    return f"\n{section_header(moment or utc_now())}\n" + "\n".join(bullets) + "\n"


def _redact(text: str) -> str:
    return redact(text)


def _journal(paths: StorePaths) -> Path:
    return paths.state / JOURNAL


def _set_watermark(paths: StorePaths, moved: Positions, newest: str | None, generator: str | None) -> None:
    """Move the flushed files' positions to ``moved``; keep the JS ``lastMemoryUpdateTs`` (newest ``ts``)."""
    if moved:
        current = flush_positions.load(paths) or {}
        flush_positions.save(paths, {**current, **moved})

    def change(index: dict[str, Any]) -> None:
        if newest:
            previous = last_memory_update(index)
            index["lastMemoryUpdateTs"] = flush_positions.newest_ts(
                [{"ts": newest}], previous if isinstance(previous, str) else None
            )
        # this machine's own state lives in .state/, not in the index a team shares
        index.pop("lastFlushAt", None)
        index.pop("lastFlushGenerator", None)

    update_index(paths, change)
    flush_positions.save_last_flush(paths, iso_now(), generator)


def _positions(paths: StorePaths) -> Positions:
    """The current positions, made (and saved) from the index's timestamp the first time."""
    with reentrant_lock(paths.lock):
        positions = flush_positions.load(paths)
        if positions is None:
            legacy = last_memory_update(read_index(paths))
            positions = flush_positions.initial(paths, legacy if isinstance(legacy, str) else None)
            flush_positions.save(paths, positions)
        return positions


def _unchanged(paths: StorePaths, expected: Positions) -> bool:
    current = flush_positions.load(paths) or {}
    return all(current.get(key, 0) == value for key, value in expected.items())


def _already_written(paths: StorePaths, section: str) -> bool:
    """True if ``section`` is in memory.md or (after a rotation) in the newest archive."""
    needle = section.strip()
    candidates = [paths.memory]

    archives = list_archives(paths)
    if archives:
        candidates.append(paths.archive(archives[-1]))
    for path in candidates:
        try:
            if needle in path.read_text("utf-8", "replace"):
                return True
        except OSError:
            continue
    return False


def recover_journal(paths: StorePaths) -> None:
    """Finish a commit that a kill interrupted between the append and the watermark move."""
    with reentrant_lock(paths.lock):
        try:
            journal = json.loads(_journal(paths).read_text("utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            _journal(paths).unlink(missing_ok=True)
            return
        if isinstance(journal, dict):
            _finish_journal(paths, journal)
        _journal(paths).unlink(missing_ok=True)


def _finish_journal(paths: StorePaths, journal: dict[str, Any]) -> None:
    expected, moved = journal.get("expected"), journal.get("moved")
    if isinstance(expected, dict) and isinstance(moved, dict):
        if not _unchanged(paths, expected):
            return  # the positions moved on: that flush was completed
        newest = journal.get("newest")
    elif journal.get("watermark"):  # written by a version with the timestamp watermark
        if last_memory_update(read_index(paths)) != expected:
            return
        moved, newest = {}, journal["watermark"]
    else:
        return
    section = str(journal.get("section") or "")
    if section and not _already_written(paths, section):
        append_text(paths.memory, section)
    _set_watermark(paths, moved, newest if isinstance(newest, str) else None, journal.get("generator"))


def commit(
    paths: StorePaths,
    expected: Positions,
    moved: Positions,
    section: str | None,
    generator: str | None = None,
    newest: str | None = None,
) -> bool:
    """Append ``section`` (None: nothing) and move the files' positions from ``expected`` to
    ``moved``, atomically with respect to other flushes; False (nothing done) if a position is
    no longer as ``expected``. ``newest`` (the chunk's newest ``ts``) feeds the JS watermark."""
    with reentrant_lock(paths.lock):
        intents.recover_pending(paths)  # an interrupted rotation is finished before we append
        if not _unchanged(paths, expected):
            return False
        if section:
            journal = {
                "expected": expected,
                "moved": moved,
                "newest": newest,
                "section": section,
                "generator": generator,
            }
            atomic_write_json(_journal(paths), journal)
            append_text(paths.memory, section)
        _set_watermark(paths, moved, newest, generator)
        _journal(paths).unlink(missing_ok=True)
        return True


def append_note(paths: StorePaths, text: str) -> str:
    """Append a note the user asked to keep (``memkeeper save``) as a dated section; returns it."""
    ensure_store(paths)
    lines = [line.rstrip() for line in _redact(text).strip().splitlines() if line.strip()]
    bullets = [line if BULLET_RE.match(line) else f"- [note]: {line.strip()}" for line in lines]
    if not bullets:
        raise ValueError("nothing to save: the note is empty")
    section = section_text(bullets)
    with reentrant_lock(paths.lock):
        append_text(paths.memory, section)
    return section


# --- the flush ----------------------------------------------------------------------


def _new_entries(paths: StorePaths, positions: Positions) -> list[dict[str, Any]]:
    """Every entry past its file's flush position, whatever its ``ts`` (see core.flush_positions)."""
    return flush_positions.new_entries(paths, positions)


def default_planner(paths: StorePaths, final: bool) -> Planner:
    """The content rule of core/log/flush_rules.py with the store's ``summarizer.minCallChars``."""
    config, _warnings = load_config_or_default(paths)
    min_chars = config.summarizer.minCallChars
    # A session that has ended adds nothing more: its small batch does not wait (a rerun
    # of a mid-session flush job can be what serves the SessionEnd request).
    live = {sid for sid, info in read_sessions(paths).items() if not info.get("ended")}

    def plan(chunk: list[dict[str, Any]], more_follow: bool) -> Plan:
        going_on = any(entry.get("session") in live for entry in chunk)
        return plan_batch(chunk, final=final or more_follow or not going_on, min_chars=min_chars)

    return plan


def _always_model(chunk: list[dict[str, Any]], more_follow: bool) -> Plan:
    return "model"


def _summarize_planned(
    paths: StorePaths, chunk: list[dict[str, Any]], plan: Plan, summarize: Summarize
) -> tuple[list[str] | None, str]:
    if plan == "skip":
        return None, "local-skip"
    if plan == "extractive":
        return extractive_bullets(chunk), "extractive"
    return summarize(paths, chunk)


def flush_pending(
    paths: StorePaths,
    *,
    summarize: Summarize | None = None,
    max_chunks: int = MAX_CHUNKS,
    final: bool = True,
    planner: Planner | None = None,
) -> FlushResult:
    """Flush the L1 entries after the watermark into memory.md (no transcript refining).

    Each chunk is planned first (``planner``; by default the content rule, under which a
    small last chunk waits unless ``final``, and a caller's own ``summarize`` is always asked).
    """
    ensure_store(paths)
    if planner is None:
        planner = default_planner(paths, final) if summarize is None else _always_model
    summarize = summarize or summarize_with_backend
    recover_journal(paths)
    from ..sharing.marks import is_shared
    from .pulled import foreign_sessions

    if is_shared(paths):
        foreign_sessions(paths)  # pulled L1 sessions were flushed where they were made
    result = FlushResult()
    for _ in range(max_chunks):
        positions = _positions(paths)
        entries = _new_entries(paths, positions)
        if not entries:
            result.more = False
            break
        chunk = chunk_entries(entries)[0]
        plan = planner(chunk, len(chunk) < len(entries))
        if plan == "wait":
            result.waiting = len(entries)
            break
        bullets, generator = _summarize_planned(paths, chunk, plan, summarize)
        section = None
        if bullets:
            section = section_text([_redact(b).replace("\n", " ") for b in bullets])
        moved = flush_positions.moves(chunk)
        expected = {key: positions.get(key, 0) for key in moved}
        newest = flush_positions.newest_ts(chunk)
        if not commit(paths, expected, moved, section, generator, newest):
            break  # someone else flushed meanwhile: their run covers these entries
        if section and bullets and generator != "extractive" and len(moved) == 1:
            _name_session(paths, next(iter(moved)), bullets)
        result.entries += len(chunk)
        result.generators.append(generator)
        result.watermark = newest
        if section:
            result.sections += 1
        else:
            result.skipped += 1
        result.more = len(chunk) < len(entries)
    return result


def _name_session(paths: StorePaths, l1_key: str, bullets: list[str]) -> None:
    """A model's section about one session's entries only: its first bullet titles that session."""
    try:
        note_summary(paths, l1_key, [_redact(b) for b in bullets])
    except (OSError, LockTimeout) as exc:  # the memory is written; only the title waits
        log_error(paths, f"flush: the session title of {l1_key} was not updated: {exc}")


def record_run(paths: StorePaths, options: dict[str, Any], result: FlushResult) -> None:
    """One line per flush run in ``.state/flush-runs.jsonl`` (what ran, why, with what result)."""
    line = {
        "ts": iso_now(),
        "reason": options.get("reason") or "manual",
        "session": options.get("session_id"),
        "entries": result.entries,
        "sections": result.sections,
        "skipped": result.skipped,
        "waiting": result.waiting,
        "generators": sorted(set(result.generators)),
    }
    log = paths.state / RUNS_LOG
    try:
        if log.stat().st_size > RUNS_LOG_MAX_BYTES:
            kept = log.read_bytes().splitlines(keepends=True)[-RUNS_LOG_KEEP:]
            atomic_write_bytes(log, b"".join(kept))
    except FileNotFoundError:
        pass
    append_text(log, json.dumps(line, ensure_ascii=False) + "\n")


def read_runs(paths: StorePaths) -> list[dict[str, Any]]:
    """The recorded flush runs, oldest first (unreadable lines skipped)."""
    try:
        text = (paths.state / RUNS_LOG).read_text("utf-8", "replace")
    except FileNotFoundError:
        return []
    return list(json_lines(text))


#: Flush reasons of a session that goes on: a batch too small for a model call waits.
LIVE_REASONS = frozenset({"count", "stop"})

#: A session whose transcript has not changed for this long is over (killed before SessionEnd).
IDLE_SESSION_SECONDS = 3600


def _requested_transcript(paths: StorePaths, options: dict[str, Any]) -> tuple[str | None, str | None]:
    """(transcript, session id) named in the job's options; the transcript found by id if only that is."""
    transcript = options.get("transcript_path")
    sid = options.get("session_id")
    sid = sid if isinstance(sid, str) and sid else None
    if isinstance(transcript, str) and transcript:
        return transcript, sid
    if sid:
        found = find_transcript(sid, paths.project)
        return (str(found) if found else None), sid
    return None, sid


def refine_sessions(paths: StorePaths, options: dict[str, Any]) -> None:
    """Bring the L1 copies up to date: the session named in ``options``, then the others seen lately."""
    transcript, sid = _requested_transcript(paths, options)
    wanted: list[tuple[str, str | None]] = [(transcript, sid)] if transcript else []
    for other, info in live_sessions.read_sessions(paths).items():
        path = info.get("transcript")
        if isinstance(path, str) and path and all(path != w[0] for w in wanted):
            wanted.append((path, other))
    requested = sid if transcript else None
    for path, session in wanted:
        idle = _refine_one(paths, path, session)
        # Another session whose transcript is gone or idle is over (killed before its
        # SessionEnd) and now fully copied: mark it ended, or every start would flush again.
        if (
            idle is not False
            and session
            and session != requested
            and (idle is None or idle > IDLE_SESSION_SECONDS)
        ):
            live_sessions.note_session(paths, session, None, ended=True)


def _refine_one(paths: StorePaths, path: str, session: str | None) -> float | None | bool:
    """Refine one transcript; its idle seconds (None: it is gone), False if refining failed."""
    try:
        idle = time.time() - Path(path).stat().st_mtime
    except OSError:
        return None  # gone: nothing left to copy
    try:
        refine_transcript(paths, Path(path), session_id=session)
    except Exception as exc:  # one bad transcript must not stop the others
        log_error(paths, f"flush: could not refine {path}: {type(exc).__name__}: {exc}")
        return False
    return idle


def run_flush_job(paths: StorePaths, options: dict[str, Any]) -> None:
    """The ``flush`` job: refine, flush into memory.md, rotate if due, then pending L3 summaries."""
    # The session's unflushed count was zeroed by the hook that started this job; zeroing
    # it again here would drop the events counted since then.
    ensure_store(paths)
    refine_sessions(paths, options)
    settings = hook_settings(paths)
    # Mid-session flushes (every flushEvery events, Stop) let a small batch wait for more.
    final = options.get("reason") not in LIVE_REASONS
    result = flush_pending(paths, final=final) if settings.memory_enabled else FlushResult()
    record_run(paths, options, result)
    if settings.rotation_enabled:
        if rotation.far_over(rotation.memory_tokens(paths), settings.threshold_tokens):
            migrate_legacy(paths)  # legacy content: split by date, not archived whole
        else:
            rotation.rotate(paths, settings.threshold_tokens, settings.carryover_tokens)

    if auto_targets(paths):  # the summary job's own rule: failed ones with tries left too
        jobs.start_job(paths, "summary")
