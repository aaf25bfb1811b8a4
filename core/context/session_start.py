"""The memory Claude gets at session start (SessionStart ``additionalContext``).

:func:`build_context` assembles, within Claude Code's 10,000-character limit: the
project / architecture / conventions notes, the latest L3 summary (overall summary,
open issues, key decisions), the recent tail of memory.md, what the last session did
after the last flush (its L1 entries after the watermark, so nothing said there is
lost when a session ends before its flush lands), and the summaries still pending.
After ``source: compact`` it adds what this session did before the compaction, which
the compaction summary may have dropped. Every section has its own share of the
limit, so one large file cannot crowd out the others. It runs inside the hook, so it
reads the JSON files directly (stdlib only, no pydantic) and never raises on a bad
file: a section it cannot read is left out.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..basics.fastjson import json_lines, loads
from ..basics.platform import open_no_follow
from ..capture.l1_newest import newest_l1_names
from ..store.atomic import open_read
from ..store.index_entries import summary_error, summary_file
from ..store.index_glance import generated_entries, read_glance
from ..store.names import L1_SUFFIX, l1_session
from ..store.paths import NAMED_MEMORY_FILES, StorePaths, is_safe_basename
from . import injections

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

CONTEXT_LIMIT = 10_000
NAMED_FILE_CHARS = 1_200
NAMED_TOTAL_CHARS = 3_000
SUMMARY_CHARS = 2_000
SESSION_CHARS = 1_400
PENDING_CHARS = 500
MIN_MEMORY_CHARS = 2_500
#: An L1 file larger than this is read from its end only (the newest entries).
L1_TAIL_BYTES = 128 * 1024
TRANSCRIPT_TAIL_BYTES = 512 * 1024

NAMED_TITLES = {"project": "Project overview", "architecture": "Architecture", "conventions": "Conventions"}


def _clip(text: str, limit: int, note: str = "") -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    suffix = f"\n… (cut{'; ' + note if note else ''})"
    cut = text[: max(0, limit - len(suffix))]
    newline = cut.rfind("\n")
    if newline > len(cut) // 2:
        cut = cut[:newline]
    return cut.rstrip() + suffix


def _one_line(text: Any, limit: int) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _read_text(path: Path, max_bytes: int | None = None) -> str:
    """The file's text (its last ``max_bytes``), or "" when it cannot be read; a link is
    never opened (the hook checks only the store's top entries for links, and reads
    through this one opener)."""
    try:
        with os.fdopen(open_no_follow(path, os.O_RDONLY), "rb") as handle:
            if max_bytes is not None:
                size = os.fstat(handle.fileno()).st_size
                if size > max_bytes:
                    handle.seek(size - max_bytes)
            data = handle.read()
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def _read_json(path: Path) -> Any:
    """The JSON value of the store file ``path`` (never read through a link), or None."""
    try:
        with open_read(path) as handle:
            return loads(handle.read().decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # nested too deep: as unreadable as corrupt
        return None


# --- sections -----------------------------------------------------------------------


def named_files_section(paths: StorePaths) -> str:
    parts: list[str] = []
    used = 0
    for key, name in NAMED_MEMORY_FILES.items():
        text = _read_text(paths.root / name).strip()
        if not text:
            continue
        room = min(NAMED_FILE_CHARS, NAMED_TOTAL_CHARS - used)
        if room < 200:
            break
        part = f"## {NAMED_TITLES.get(key, key)}\n" + _clip(
            text, room - 40, f"full text in .claude/memory/{name}"
        )
        parts.append(part)
        used += len(part)
    return "\n\n".join(parts)


def latest_summary_section(paths: StorePaths, glance: dict[str, Any]) -> str:
    """The newest archive summary that exists: overall summary, open issues, key decisions."""
    for entry in _newest_generated(paths, glance):
        name = summary_file(entry) or ""
        if not is_safe_basename(name):
            continue
        data = _read_json(paths.root / name)
        if not isinstance(data, dict):
            continue
        lines = [
            f"## Summary of archived memory{_span(data, entry)}, from {entry['file']}",
            *_summary_lines(data),
        ]
        if len(lines) > 1:
            return _clip("\n".join(lines), SUMMARY_CHARS)
    return ""


def _newest_generated(paths: StorePaths, glance: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The entries with a generated summary, newest first: the glance's, then (only when none of
    those had a readable summary) the rest from the index itself."""
    yield from glance["newest"]
    if glance["moreGenerated"]:
        index = _read_json(paths.index)
        yield from generated_entries(index if isinstance(index, dict) else {})[len(glance["newest"]) :]


def _span(summary: dict[str, Any], entry: dict[str, Any]) -> str:
    """`` (first to last)`` of the summary's (else the entry's) date range, or ''."""
    span = summary.get("dateRange") if isinstance(summary.get("dateRange"), dict) else entry.get("dateRange")
    if isinstance(span, dict) and span.get("first"):
        return f" ({span.get('first')} to {span.get('last') or span.get('first')})"
    return ""


def _summary_lines(summary: dict[str, Any]) -> list[str]:
    """The overall summary, up to five open issues and five key decisions, one line each."""
    lines: list[str] = []
    overall = _one_line(summary.get("overallSummary"), 1_100)
    if overall:
        lines.append(overall)
    issues = [i for i in summary.get("issues") or [] if isinstance(i, dict) and i.get("status") != "resolved"]
    if issues:
        lines.append("Open issues:")
        lines += [f"- {_one_line(i.get('issue'), 200)}" for i in issues[:5] if i.get("issue")]
    decisions = [d for d in summary.get("keyDecisions") or [] if isinstance(d, dict) and d.get("decision")]
    if decisions:
        lines.append("Key decisions:")
        for item in decisions[:5]:
            reason = f" (because {_one_line(item.get('reason'), 100)})" if item.get("reason") else ""
            lines.append(f"- {_one_line(item.get('decision'), 160)}{reason}")
    return lines


def pending_section(glance: dict[str, Any]) -> str:
    count = glance["pendingCount"]
    if not count:
        return ""
    failed = glance["failedCount"]
    lines = [
        f"## Archive summaries pending: {count}"
        + (f" ({failed} failed; `memkeeper regenerate --pending` retries)" if failed else "")
    ]
    for entry in glance["pending"][:5]:
        error = summary_error(entry)
        error = f": failed: {_one_line(error, 80)}" if error else ""
        lines.append(f"- {entry['file']}{error}")
    if count > 5:
        lines.append(f"- … and {count - 5} more")
    return _clip("\n".join(lines), PENDING_CHARS)


def memory_tail_section(paths: StorePaths, budget: int) -> str:
    """The newest part of memory.md that fits ``budget``, starting at a ``##`` header if it can."""
    title = "## Recent memory (end of .claude/memory/memory.md)\n"
    room = budget - len(title) - 2
    if room < 200:
        return ""
    text = _read_text(paths.memory, max_bytes=room * 4 + 4096).strip()
    if not text:
        return ""
    if len(text) > room:
        text = text[-room:]
        newline = text.find("\n")
        text = text[newline + 1 :] if newline >= 0 else text
        header = text.find("\n## ")
        if 0 <= header < len(text) // 2:
            text = text[header + 1 :]
    return title + text.strip()


# --- L1 (sessions) ------------------------------------------------------------------


#: SessionStart looks at this many of the newest L1 files (by name, which starts with the
#: UTC time the session began): found without listing the folder (:mod:`.l1_newest`).
NEWEST_L1_FILES = 16


def _l1_names(paths: StorePaths) -> list[str]:
    """The newest plain L1 file names, newest session first (names start with their UTC start time)."""
    return newest_l1_names(os.fspath(paths.root), NEWEST_L1_FILES)


def _l1_files(paths: StorePaths, names: list[str] | None = None) -> list[tuple[float, Path]]:
    """(mtime, path) of the newest L1 files, newest activity first (only those are stat-ed)."""
    found: list[tuple[float, Path]] = []
    for name in (_l1_names(paths) if names is None else names)[:NEWEST_L1_FILES]:
        path = paths.sessions / name
        try:
            found.append((path.lstat().st_mtime, path))
        except OSError:
            continue
    found.sort(reverse=True)
    return found


def _read_entries(path: Path) -> Iterator[dict[str, Any]]:
    return json_lines(_read_text(path, max_bytes=L1_TAIL_BYTES))


def _main_texts(entries: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    """The entries of ``role`` in the main conversation (not a subagent's) that carry text."""
    return [e for e in entries if e.get("role") == role and not e.get("sidechain") and e.get("text")]


def _tool_counts(entries: list[dict[str, Any]]) -> dict[str, int]:
    tools: dict[str, int] = {}
    for entry in entries:
        if entry.get("role") == "tool":
            name = str(entry.get("name") or "tool")
            tools[name] = tools.get(name, 0) + 1
    return tools


def _describe(entries: list[dict[str, Any]], title: str) -> str:
    prompts, answers = _main_texts(entries, "user"), _main_texts(entries, "assistant")
    tools = _tool_counts(entries)
    if not prompts and not answers and not tools:
        return ""
    first = str(entries[0].get("ts") or "")[:16].replace("T", " ")
    last = str(entries[-1].get("ts") or "")[:16].replace("T", " ")
    lines = [f"## {title} ({first} to {last} UTC)"]
    lines += [f"- asked: {_one_line(entry.get('text'), 200)}" for entry in prompts[-6:]]
    if tools:
        used = ", ".join(f"{n} ×{c}" for n, c in sorted(tools.items(), key=lambda kv: -kv[1])[:6])
        lines.append(f"- tools used: {used}")
    if answers:
        lines.append(f"- last answer: {_one_line(answers[-1].get('text'), 300)}")
    return _clip("\n".join(lines), SESSION_CHARS)


def last_session_section(paths: StorePaths, glance: dict[str, Any], exclude_session: str | None) -> str:
    """What the most recent other session did after the flush watermark."""
    watermark = glance["lastMemoryUpdateTs"]
    skip = (exclude_session or "")[:8]
    for _mtime, path in _l1_files(paths)[:3]:
        if skip and l1_session(path.name) == skip:
            continue
        entries = [
            e
            for e in _read_entries(path)
            if not (isinstance(watermark, str) and isinstance(e.get("ts"), str) and e["ts"] <= watermark)
        ]
        return _describe(entries, "Last session, after its last memory flush") if entries else ""
    return ""


def this_session_section(paths: StorePaths, session_id: str | None) -> str:
    """What this session did before a compaction (from its L1 copy)."""
    if not session_id:
        return ""
    mine = [n for n in newest_l1_names(os.fspath(paths.root)) if l1_session(n) == session_id[:8]]
    if not mine:  # a long session that many others started after: look through them all (compactions only)
        try:
            names = os.listdir(paths.sessions)
        except OSError:
            names = []
        mine = sorted(
            (n for n in names if n.endswith(L1_SUFFIX) and l1_session(n) == session_id[:8]), reverse=True
        )
    for _mtime, path in _l1_files(paths, mine):
        if l1_session(path.name) == session_id[:8]:
            entries = [
                e for e in _read_entries(path) if not e.get("session") or e.get("session") == session_id
            ]
            return _describe(entries, "This session before the compaction") if entries else ""
    return ""


def transcript_section(transcript: Path) -> str:
    """What the compaction just dropped, read from the end of the live transcript.

    The L1 copy may lag behind (the PreCompact flush refines it in the background), so
    the transcript itself is read: the events between the previous and the last compact
    boundary of its last ``TRANSCRIPT_TAIL_BYTES``. Private spans and secrets are
    redacted as everywhere else, although this text goes only to Claude's context.
    """
    from ..capture.transcript import events_from_record
    from ..redaction.redact import redact

    text = _read_text(transcript, max_bytes=TRANSCRIPT_TAIL_BYTES)
    segments: list[list[dict[str, Any]]] = [[]]
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            record = loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("isSidechain"):
            continue
        for event in events_from_record(record):
            if event.kind == "compact_boundary":
                segments.append([])
            elif event.kind in ("prompt", "command", "user_text") and event.text.strip():
                segments[-1].append({"ts": event.ts, "role": "user", "text": redact(event.text)})
            elif event.kind == "assistant_text" and event.text.strip():
                segments[-1].append({"ts": event.ts, "role": "assistant", "text": redact(event.text)})
            elif event.kind == "tool_use":
                segments[-1].append({"ts": event.ts, "role": "tool", "name": event.name})
    dropped = segments[-2] if len(segments) > 1 else segments[-1]
    return _describe(dropped, "This session before the compaction") if dropped else ""


# --- assembly -----------------------------------------------------------------------


def not_kept_section(paths: StorePaths) -> str:
    """Why memory is not being kept right now (told once, at session start), or ''."""
    from .keeping import not_kept_reasons

    try:
        reasons = not_kept_reasons(paths)
    except Exception:  # a notice must never cost the session its memory
        return ""
    if not reasons:
        return ""
    lines = "\n".join(f"- {r}" for r in reasons)
    return f"## memkeeper: memory is not being fully kept (tell the user)\n{lines}"


def build_context(
    paths: StorePaths,
    source: str = "startup",
    *,
    session_id: str | None = None,
    transcript_path: str | None = None,
    limit: int = CONTEXT_LIMIT,
) -> str:
    """The memory as text for ``additionalContext``; at most ``limit`` characters, '' if empty.

    ``session_id`` is the session starting (left out of "last session"); after a
    compaction, ``transcript_path`` (else the session's L1 copy) tells what it dropped.
    """
    glance = read_glance(os.fspath(paths.root))  # what it needs of the index, not all of it
    header = (
        f"# memkeeper: long-term memory of the project {paths.project.name}\n"
        "Notes kept from earlier sessions (facts and history, not instructions). "
        "`memkeeper search QUERY` finds more in older memory."
    )
    if source == "compact":
        header += "\nRe-supplied after the conversation was compacted."
    named = named_files_section(paths)
    summary = latest_summary_section(paths, glance)
    if source == "compact":
        session = ""
        if transcript_path and os.path.isfile(transcript_path):
            session = transcript_section(Path(transcript_path))
        session = session or this_session_section(paths, session_id)
    else:
        session = last_session_section(paths, glance, session_id)
    pending = pending_section(glance)
    notice = not_kept_section(paths)
    fixed = [s for s in (notice, named, summary, session, pending) if s]
    used = len(header) + sum(len(s) + 2 for s in fixed)
    budget = max(MIN_MEMORY_CHARS, limit - used - 2)
    memory = memory_tail_section(paths, budget)
    if not fixed and not memory:
        return ""
    parts = [
        (key, part)
        for key, part in (
            ("notice", notice),
            ("named", named),
            ("summary", summary),
            (injections.MEMORY, memory),
            ("session", session),
            ("pending", pending),
        )
        if part
    ]
    if session_id:
        seen = injections.injected(paths, session_id) if source == "resume" else None
        injections.remember(paths, session_id, injections.digests(parts) | (seen or set()))
        if seen is not None:  # a resume: Claude Code kept what was injected before
            changed = injections.changed_parts(parts, seen)
            return "\n\n".join([injections.resume_note(parts, changed)] + [p for _k, p in changed])
    sections = [header] + [part for _key, part in parts]
    text = "\n\n".join(sections)
    if len(text) > limit:  # the fixed sections were large: the memory tail gave way, now cut the end
        text = _clip(text, limit)
    return text
