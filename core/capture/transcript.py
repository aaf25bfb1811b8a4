"""Reading Claude Code transcripts: where they are, and a streaming parser that survives anything.

A transcript is JSONL written by Claude Code at ``~/.claude/projects/<encoded cwd>/<session>.jsonl``
with subagents beside it in ``<session>/subagents/agent-<id>.jsonl``. The parser reads
bytes from a byte offset, decodes each line with ``errors="replace"``, and turns the
conversation lines into typed :class:`TranscriptEvent` objects:

* ``prompt``: a prompt the user typed (string ``message.content``);
* ``command``: a typed slash command, in readable form (``/compact keep X``), or ``! cmd``;
* ``user_text``: text blocks of a user message (1.0.x prompts, interruptions);
* ``tool_result``: one per ``tool_result`` block, with its ``tool_use_id``;
* ``assistant_text`` and ``tool_use``: one per block, also when a message mixes them;
* ``compact_boundary``, ``compact_summary`` (the summary Claude Code writes after
  compaction) and ``summary`` (the 1.0.x title line);
* ``oversize``: a line over :data:`MAX_LINE_BYTES`, never parsed: what its first and last
  bytes say it was (a tool result, a tool call, an assistant or user message) and its size.

Skipped: unknown line types, ``isMeta`` lines, ``<local-command-…>`` / ``<system-reminder>``
/ ``<task-notification>`` noise, thinking blocks, images, progress, attachments, snapshots
and synthetic API-error replies. A line that is not JSON is counted in
:attr:`ParseStats.broken_lines` and skipped; it is never fatal. Only whole lines are
consumed: an unterminated last line is left for the next read unless it is already a
complete JSON object (a prefix of one line can never be a complete object, so that is safe).

Stdlib only.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

#: Line types that carry conversation; everything else is skipped (and counted when unknown).
KNOWN_SKIPPED_TYPES = frozenset(
    {
        "progress",
        "attachment",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "mode",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "atis-latch",
        "tools-used",
        "cost-state",
        "custom-title",
        "tag",
        "agent-name",
        "pr-link",
    }
)


@dataclass(slots=True)
class TranscriptEvent:
    """One meaningful piece of a transcript line (see the module docstring for kinds)."""

    kind: str
    ts: str | None
    text: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    is_error: bool = False
    content: Any = None
    session_id: str | None = None
    sidechain: bool = False
    agent_id: str | None = None
    uuid: str | None = None
    #: Byte offset just past the line this event came from.
    end_offset: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ParseStats:
    """What a read consumed and what it had to skip."""

    start_offset: int = 0
    end_offset: int = 0  # resume here next time (only whole lines are consumed)
    lines: int = 0
    broken_lines: int = 0
    oversize_lines: int = 0  # over MAX_LINE_BYTES: skipped without being read whole
    partial_tail: bool = False  # an unterminated, incomplete last line was left unread
    skipped_types: Counter[str] = field(default_factory=Counter)
    unknown_types: Counter[str] = field(default_factory=Counter)
    session_id: str | None = None  # the first ``sessionId`` seen

    @property
    def bytes_read(self) -> int:
        return self.end_offset - self.start_offset


# --- lines ---------------------------------------------------------------------------


#: A transcript line longer than this (a huge tool result) is skipped in chunks, never held
#: whole: parsing it would cost several times its size in memory.
MAX_LINE_BYTES = 32 * 1024 * 1024
SKIP_CHUNK = 1 << 20
#: What is kept of a line over MAX_LINE_BYTES, at each end, to tell what it was.
OVERSIZE_ENDS = 4096
#: The record :func:`iter_lines` yields for such a line (no transcript line has this type).
OVERSIZE_TYPE = "memkeeper-oversize"


def _next_line(handle: BinaryIO) -> tuple[bytes | None, int]:
    """(the next line, or None when it is over :data:`MAX_LINE_BYTES` and not yet ended; its
    length in bytes). A line over the limit comes back as its first and last OVERSIZE_ENDS bytes."""
    raw = handle.readline(MAX_LINE_BYTES + 1)
    if len(raw) <= MAX_LINE_BYTES:
        return raw, len(raw)
    length = len(raw)
    head, tail = raw[:OVERSIZE_ENDS], raw[-OVERSIZE_ENDS:]
    del raw
    chunk = b"\n" if tail.endswith(b"\n") else b""
    while not chunk.endswith(b"\n"):
        chunk = handle.readline(SKIP_CHUNK)
        if not chunk:
            return None, length
        length += len(chunk)
        tail = (tail + chunk)[-OVERSIZE_ENDS:]
    return head + b"\n" + tail, length


_OVERSIZE_FIELDS = {
    key: re.compile(rb'"' + key.encode() + rb'"\s*:\s*"([^"\\]{1,200})"')
    for key in ("timestamp", "sessionId", "agentId", "tool_use_id", "role")
}
_OVERSIZE_TOOL_USE = re.compile(
    rb'"type"\s*:\s*"tool_use"\s*,\s*"id"\s*:\s*"([^"\\]{1,200})"\s*,\s*"name"\s*:\s*"([^"\\]{1,200})"'
)


def _oversize_record(ends: bytes, length: int) -> dict[str, Any]:
    """What a line too long to parse was, told from its first and last bytes (``ends``)."""
    found = {
        key: m.group(1).decode("utf-8", "replace")
        for key, p in _OVERSIZE_FIELDS.items()
        if (m := p.search(ends))
    }
    tool_use = _OVERSIZE_TOOL_USE.search(ends)
    types = {t.decode() for t in re.findall(rb'"type"\s*:\s*"([\w-]{1,40})"', ends)}
    skipped = sorted(types & KNOWN_SKIPPED_TYPES)
    if skipped and not types & {"user", "assistant"}:
        what = skipped[0]  # a line of a type L1 does not keep (a huge attachment): no stub
    elif "tool_result" in types:
        what = "tool_result"
    elif tool_use:
        what = "tool_use"
        found["tool_use_id"], found["name"] = (g.decode("utf-8", "replace") for g in tool_use.groups())
    else:
        what = "assistant" if found.get("role") == "assistant" else "user"
        found.pop("tool_use_id", None)
    record: dict[str, Any] = {"type": OVERSIZE_TYPE, "bytes": length, "what": what}
    kept = ("timestamp", "sessionId", "agentId", "tool_use_id", "name")
    record.update((key, found[key]) for key in kept if found.get(key))
    record["isSidechain"] = bool(re.search(rb'"isSidechain"\s*:\s*true', ends))
    return record


def iter_lines(handle: BinaryIO, start: int, stats: ParseStats) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(end_offset, record)`` for each whole JSON-object line from ``start``.

    Broken lines are counted and skipped; a line over :data:`MAX_LINE_BYTES` is counted
    (``stats.oversize_lines``) and stands as an OVERSIZE_TYPE record of what it was (see
    :func:`_oversize_record`); ``stats.end_offset`` always marks the end of the last
    consumed line.
    """
    handle.seek(start)
    offset = start
    stats.start_offset = stats.end_offset = start
    while True:
        raw, length = _next_line(handle)
        if not length:
            return
        end = offset + length
        if raw is None:  # an oversize line still being written: leave it for next time
            stats.partial_tail = True
            return
        if length > MAX_LINE_BYTES:
            offset = stats.end_offset = end
            stats.lines += 1
            stats.oversize_lines += 1
            yield end, _oversize_record(raw, length)
            continue
        terminated = raw.endswith(b"\n")
        body = raw.strip()
        if not body:
            offset = stats.end_offset = end
            continue
        record = _decode(body)
        if not terminated and record is None:
            stats.partial_tail = True  # still being written: leave it for next time
            return
        offset = stats.end_offset = end
        stats.lines += 1
        if record is None:
            stats.broken_lines += 1
            continue
        yield end, record


def _decode(body: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    except RecursionError:  # absurdly nested garbage
        return None
    return value if isinstance(value, dict) else None


# --- noise ---------------------------------------------------------------------------

_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.DOTALL)
_NOISE_PREFIXES = (
    "<local-command-",
    "<bash-stdout",
    "<bash-stderr",
    "<task-notification",
    "<user-prompt-submit-hook",
)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_BASH_INPUT = re.compile(r"<bash-input>(.*?)</bash-input>", re.DOTALL)


def clean_user_text(text: str) -> tuple[str, str] | None:
    """Classify user text: ``("prompt"|"command", readable text)``, or None for noise."""
    if "<system-reminder>" in text:
        text = _SYSTEM_REMINDER.sub("", text)
    stripped = text.strip()
    if not stripped:
        return None
    if stripped.startswith("<"):
        if stripped.startswith(_NOISE_PREFIXES):
            return None
        name = _COMMAND_NAME.search(stripped)
        if name:
            command = name.group(1).strip()
            if command and not command.startswith("/"):
                command = "/" + command
            args = _COMMAND_ARGS.search(stripped)
            arg_text = args.group(1).strip() if args else ""
            return "command", f"{command} {arg_text}".strip()
        bash = _BASH_INPUT.search(stripped)
        if bash:
            return "command", "! " + bash.group(1).strip()
        if stripped.startswith("<command-message>") or stripped.startswith("<command-args>"):
            return None
    return "prompt", stripped


# --- records → events ----------------------------------------------------------------


def events_from_record(record: dict[str, Any], end_offset: int = 0) -> list[TranscriptEvent]:
    """The events of one parsed transcript line (empty for everything we skip)."""
    kind = record.get("type")
    ts = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
    base: dict[str, Any] = {
        "ts": ts,
        "session_id": record.get("sessionId") if isinstance(record.get("sessionId"), str) else None,
        "sidechain": bool(record.get("isSidechain")),
        "agent_id": record.get("agentId") if isinstance(record.get("agentId"), str) else None,
        "uuid": record.get("uuid") if isinstance(record.get("uuid"), str) else None,
        "end_offset": end_offset,
    }
    if kind == "user":
        return _user_events(record, base)
    if kind == "assistant":
        return _assistant_events(record, base)
    if kind == "system":
        if record.get("subtype") == "compact_boundary":
            meta = record.get("compactMetadata")
            return [TranscriptEvent("compact_boundary", meta=meta if isinstance(meta, dict) else {}, **base)]
        return []
    if kind == "summary":
        summary = record.get("summary")
        if isinstance(summary, str) and summary.strip():
            return [TranscriptEvent("summary", text=summary, **base)]
        return []
    if kind == "tool_use":  # legacy top-level tool call
        name = record.get("name") or record.get("tool_name") or ""
        tool_input = record.get("input") or record.get("tool_input") or {}
        return [
            TranscriptEvent(
                "tool_use",
                name=str(name),
                input=tool_input if isinstance(tool_input, dict) else {"value": tool_input},
                tool_use_id=_str_or_none(record.get("id") or record.get("tool_use_id")),
                **base,
            )
        ]
    return []


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _message_content(record: dict[str, Any]) -> Any:
    message = record.get("message")
    if isinstance(message, dict):
        return message.get("content")
    return None


def _user_events(record: dict[str, Any], base: dict[str, Any]) -> list[TranscriptEvent]:
    if record.get("isMeta"):
        return []
    content = _message_content(record)
    if record.get("isCompactSummary"):
        text = content if isinstance(content, str) else _join_text(content)
        return [TranscriptEvent("compact_summary", text=text, **base)] if text else []
    if isinstance(content, str):
        cleaned = clean_user_text(content)
        if cleaned is None:
            return []
        return [TranscriptEvent(cleaned[0], text=cleaned[1], **base)]
    if not isinstance(content, list):
        return []
    events: list[TranscriptEvent] = []
    texts: list[str] = []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        block_type = block.get("type")
        if block_type == "tool_result":
            events.append(
                TranscriptEvent(
                    "tool_result",
                    tool_use_id=_str_or_none(block.get("tool_use_id")),
                    is_error=bool(block.get("is_error")),
                    content=block.get("content"),
                    **base,
                )
            )
        elif block_type == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    if texts:
        cleaned = clean_user_text("\n".join(texts))
        if cleaned is not None:
            kind = "command" if cleaned[0] == "command" else "user_text"
            events.append(TranscriptEvent(kind, text=cleaned[1], **base))
    return events


def _assistant_events(record: dict[str, Any], base: dict[str, Any]) -> list[TranscriptEvent]:
    message = record.get("message")
    if not isinstance(message, dict):
        return []
    if record.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
        return []  # "Not logged in", "No response requested.": Claude Code's, not the model's
    content = message.get("content")
    if isinstance(content, str):
        return [TranscriptEvent("assistant_text", text=content, **base)] if content.strip() else []
    if not isinstance(content, list):
        return []
    events: list[TranscriptEvent] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        block_type = block.get("type")
        if block_type == "text":
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                events.append(TranscriptEvent("assistant_text", text=text, **base))
        elif block_type in ("tool_use", "server_tool_use"):
            tool_input = block.get("input")
            events.append(
                TranscriptEvent(
                    "tool_use",
                    name=str(block.get("name") or ""),
                    input=tool_input if isinstance(tool_input, dict) else {},
                    tool_use_id=_str_or_none(block.get("id")),
                    **base,
                )
            )
    return events


def _join_text(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )


# --- files ---------------------------------------------------------------------------


def iter_events(
    path: Path, start_offset: int = 0, stats: ParseStats | None = None
) -> Iterator[TranscriptEvent]:
    """Stream the events of ``path`` from ``start_offset``; ``stats`` is filled as it goes."""
    stats = stats if stats is not None else ParseStats()
    with open(path, "rb") as handle:
        for end, record in iter_lines(handle, start_offset, stats):
            kind = record.get("type")
            if stats.session_id is None and isinstance(record.get("sessionId"), str):
                stats.session_id = record["sessionId"]
            if kind == OVERSIZE_TYPE:
                if record["what"] in KNOWN_SKIPPED_TYPES:
                    stats.skipped_types[record["what"]] += 1
                else:
                    yield _oversize_event(record, end)
                continue
            if kind not in ("user", "assistant", "system", "summary", "tool_use"):
                if kind in KNOWN_SKIPPED_TYPES:
                    stats.skipped_types[str(kind)] += 1
                else:
                    stats.unknown_types[str(kind)] += 1
                continue
            yield from events_from_record(record, end)


def _oversize_event(record: dict[str, Any], end: int) -> TranscriptEvent:
    return TranscriptEvent(
        "oversize",
        record.get("timestamp"),
        name=record.get("name", ""),
        tool_use_id=record.get("tool_use_id"),
        session_id=record.get("sessionId"),
        sidechain=record["isSidechain"],
        agent_id=record.get("agentId"),
        end_offset=end,
        meta={"bytes": record["bytes"], "what": record["what"]},
    )


def read_events(path: Path, start_offset: int = 0) -> tuple[list[TranscriptEvent], ParseStats]:
    stats = ParseStats()
    events = list(iter_events(path, start_offset, stats))
    return events, stats


def first_session_id(path: Path, max_lines: int = 200) -> str | None:
    """The ``sessionId`` of the first lines of ``path`` (None if none is found early)."""
    stats = ParseStats()
    try:
        with open(path, "rb") as handle:
            for count, (_end, record) in enumerate(iter_lines(handle, 0, stats)):
                session = record.get("sessionId")
                if isinstance(session, str) and session:
                    return session
                if count >= max_lines:
                    break
    except OSError:
        return None
    return None


# --- where transcripts live ----------------------------------------------------------

_NOT_NAME_CHAR = re.compile(r"[^A-Za-z0-9-]")
MAX_DIR_NAME = 200


def encode_project_dir(cwd: str | os.PathLike[str]) -> str:
    """Claude Code's folder name for a cwd: every char outside ``[A-Za-z0-9-]`` becomes ``-``."""
    return _NOT_NAME_CHAR.sub("-", os.fspath(cwd))


def claude_projects_root(env: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if env is None else env
    config_dir = environ.get("CLAUDE_CONFIG_DIR")
    base = (
        Path(config_dir).expanduser() if config_dir else Path(environ.get("HOME") or Path.home()) / ".claude"
    )
    return base / "projects"


def project_transcript_dir(project: str | os.PathLike[str], env: dict[str, str] | None = None) -> Path | None:
    """The transcript folder of exactly this project (never a substring match), or None."""
    environ = os.environ if env is None else env
    root = claude_projects_root(environ)
    override = environ.get("CLAUDE_CODE_PROJECT_DIR_NAME")
    name = override or encode_project_dir(os.path.abspath(os.fspath(project)))
    exact = root / name
    if exact.is_dir():
        return exact
    if len(name) > MAX_DIR_NAME and root.is_dir():
        # Claude Code truncates long names and appends a hash we cannot recompute.
        prefix = name[:MAX_DIR_NAME] + "-"
        matches = [entry for entry in root.iterdir() if entry.is_dir() and entry.name.startswith(prefix)]
        if len(matches) == 1:
            return matches[0]
    return None


def list_transcripts(
    project: str | os.PathLike[str], env: dict[str, str] | None = None, include_agents: bool = False
) -> list[Path]:
    """Session transcripts of this project, oldest first by modification time.

    Claude Code 2.0.x wrote subagent files ``agent-<id>.jsonl`` beside the sessions; they
    are left out unless ``include_agents``.
    """
    folder = project_transcript_dir(project, env)
    if folder is None:
        return []
    files = [
        path
        for path in folder.glob("*.jsonl")
        if path.is_file() and (include_agents or not path.name.startswith("agent-"))
    ]
    return sorted(files, key=lambda path: (path.stat().st_mtime, path.name))


def newest_transcript(project: str | os.PathLike[str], env: dict[str, str] | None = None) -> Path | None:
    files = list_transcripts(project, env)
    return files[-1] if files else None


def find_transcript(
    session_id: str, project: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None
) -> Path | None:
    """``<session_id>.jsonl`` in this project's folder, else in any project folder."""
    if not session_id or "/" in session_id or "\\" in session_id or session_id.startswith("."):
        return None
    if project is not None:
        folder = project_transcript_dir(project, env)
        if folder is not None and (folder / f"{session_id}.jsonl").is_file():
            return folder / f"{session_id}.jsonl"
    root = claude_projects_root(env)
    if root.is_dir():
        for folder_path in sorted(root.iterdir()):
            candidate = folder_path / f"{session_id}.jsonl"
            if candidate.is_file():
                return candidate
    return None


def subagent_transcripts(transcript: Path, session_id: str | None = None) -> list[Path]:
    """Sidechain files of a session: ``<dir>/<session>/subagents/agent-*.jsonl``.

    The compaction agent (``agent-acompact-*``) is left out: its prompt is Claude Code's
    instruction and its answer is the compact summary already in the main transcript.
    """
    names = {transcript.stem}
    if session_id:
        names.add(session_id)
    found: list[Path] = []
    for name in sorted(names):
        folder = transcript.parent / name / "subagents"
        if folder.is_dir():
            found.extend(
                path
                for path in sorted(folder.glob("agent-*.jsonl"))
                if path.is_file() and not path.name.startswith("agent-acompact")
            )
    return found
