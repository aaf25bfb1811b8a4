"""L1 entries: one Claude Code transcript event as one line of a session's L1 file.

Exactly the fields and limits the JS refiner chose (texts redacted, then clipped in UTF-16
units as JavaScript counts them), so a store written by either reads the same. Used by
:mod:`memkeeper.core.capture.l1`, which keeps the files, their offsets and their state.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..redaction.redact import redact
from ..store.names import is_l1_gz
from .transcript import TranscriptEvent

OUTPUT_LIMIT = 200  # tool_result output, UTF-16 units (JS)
CMD_LIMIT = 200  # Bash command, UTF-16 units (JS)
DIFF_LIMIT = 100  # each side of an Edit diff (JS)
DETAIL_LIMIT = 200
#: Redact this much of a long text before clipping it, so a secret cut by the clip is still seen;
#: the window grows if redaction shrank it to less than the clip plus this margin.
REDACT_WINDOW = 1024
REDACT_MARGIN = 512


# --- JS-compatible string helpers ----------------------------------------------------


def utf16_len(text: str) -> int:
    """``text.length`` in JavaScript."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(text: str, limit: int) -> str:
    """``text.slice(0, limit)`` in JavaScript, but never splitting a surrogate pair."""
    if len(text) * 2 <= limit or (len(text) <= limit and text.isascii()):
        return text
    prefix = text[:limit]
    if utf16_len(prefix) <= limit:
        return prefix
    units = 0
    for index, char in enumerate(prefix):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return prefix[:index]
    return prefix


def clip(text: str, limit: int) -> str:
    """Redact, then cut to ``limit`` UTF-16 units (redacting first so no secret is half-cut)."""
    if len(text) <= REDACT_WINDOW:
        return js_slice(redact(text), limit)
    window = REDACT_WINDOW
    while True:
        redacted = redact(text[:window])
        if len(redacted) >= limit + REDACT_MARGIN or window >= len(text):
            return js_slice(redacted, limit)
        window *= 4


def _js_number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --- events → entries ----------------------------------------------------------------


def _with_target(tool_input: dict[str, Any]) -> dict[str, Any]:
    target = tool_input.get("file_path") or tool_input.get("path")
    return {"target": redact(str(target))} if target else {}


def _read_fields(tool_input: dict[str, Any]) -> dict[str, Any]:
    fields = _with_target(tool_input)
    offset = tool_input.get("offset")
    if offset and isinstance(offset, (int, float)):
        limit = tool_input.get("limit") or 100
        end = offset + limit if isinstance(limit, (int, float)) else offset + 100
        fields["lines"] = f"{_js_number(offset)}-{_js_number(end)}"
    return fields


def _edit_fields(tool_input: dict[str, Any]) -> dict[str, Any]:
    fields = _with_target(tool_input)
    old, new = tool_input.get("old_string"), tool_input.get("new_string")
    if isinstance(old, str) and isinstance(new, str) and old and new:
        fields["diff"] = f"-{_diff_side(old)}\n+{_diff_side(new)}"
    return fields


def _write_fields(tool_input: dict[str, Any]) -> dict[str, Any]:
    fields = _with_target(tool_input)
    content = tool_input.get("content")
    if isinstance(content, str):
        fields["size"] = utf16_len(content)
    return fields


def _bash_fields(tool_input: dict[str, Any]) -> dict[str, Any]:
    command = tool_input.get("command")
    return {"cmd": clip(command, CMD_LIMIT)} if isinstance(command, str) else {}


def _pattern_fields(*keys: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def fields(tool_input: dict[str, Any]) -> dict[str, Any]:
        return {key: redact(str(tool_input[key])) for key in keys if tool_input.get(key) is not None}

    return fields


def _other_fields(tool_input: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {"params": ",".join(tool_input.keys())}
    detail = _tool_detail(tool_input)
    if detail:
        fields["detail"] = detail
    return fields


#: The per-tool fields of a ``tool`` entry, exactly as the JS refiner chose them.
_TOOL_FIELDS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "Read": _read_fields,
    "Edit": _edit_fields,
    "Write": _write_fields,
    "Bash": _bash_fields,
    "Grep": _pattern_fields("pattern", "path"),
    "Glob": _pattern_fields("pattern"),
}


def _tool_fields(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """The per-tool fields of a ``tool`` entry (:data:`_TOOL_FIELDS`; others list their params)."""
    return _TOOL_FIELDS.get(name, _other_fields)(tool_input)


def _diff_side(text: str) -> str:
    return js_slice(redact("\n".join(text.split("\n")[:3])), DIFF_LIMIT)


_DETAIL_KEYS = ("description", "query", "url", "skill", "subagent_type", "prompt", "command", "file_path")


def _tool_detail(tool_input: dict[str, Any]) -> str:
    """A short readable hint for tools the JS format only listed by parameter names."""
    for key in _DETAIL_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return clip(value.strip(), DETAIL_LIMIT)
    return ""


def _result_output(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"))


def entry_from_event(
    event: TranscriptEvent, ts: str, session_id: str, agent_id: str | None = None, sidechain: bool = False
) -> dict[str, Any] | None:
    """The L1 entry for one transcript event (None for events L1 does not keep)."""
    entry: dict[str, Any]
    kind = event.kind
    if kind in ("prompt", "command", "user_text"):
        text = redact(event.text)
        if not text.strip():
            return None
        entry = {"ts": ts, "role": "user", "text": text}
        if kind == "command":  # a slash command or `! shell` line: shown in L1, kept out of L2
            entry["kind"] = "command"
    elif kind == "assistant_text":
        text = redact(event.text)
        if not text.strip():
            return None
        entry = {"ts": ts, "role": "assistant", "text": text}
    elif kind == "tool_use":
        entry = {"ts": ts, "role": "tool", "name": event.name}
        entry.update(_tool_fields(event.name, event.input))
        if event.tool_use_id:
            entry["tool_use_id"] = event.tool_use_id
    elif kind == "tool_result":
        entry = {"ts": ts, "role": "tool_result"}
        if event.tool_use_id:
            entry["tool_use_id"] = event.tool_use_id
        entry["result"] = "error" if event.is_error else "ok"
        output = clip(_result_output(event.content), OUTPUT_LIMIT)
        if output or event.is_error:
            entry["output"] = output
    elif kind == "oversize":
        entry = _oversize_entry(event, ts)
    else:
        return None
    if sidechain or event.sidechain:
        entry["sidechain"] = True
        agent = event.agent_id or agent_id
        if agent:
            entry["agentId"] = agent
    entry["session"] = session_id
    return entry


#: The role of the stub of a transcript line too large to keep, by what the line was, and the
#: field that says so.
_OVERSIZE_ROLES = {
    "tool_result": ("tool_result", "output"),
    "tool_use": ("tool", "detail"),
    "assistant": ("assistant", "text"),
    "user": ("user", "text"),
}


def _oversize_entry(event: TranscriptEvent, ts: str) -> dict[str, Any]:
    """A stub for a transcript line over ``MAX_LINE_BYTES``: what it was, its size, that it was
    too large (``"kind": "oversize"``, ``"bytes"``); its text was never read."""
    from .transcript import MAX_LINE_BYTES

    size = int(event.meta.get("bytes", 0))
    role, field = _OVERSIZE_ROLES.get(str(event.meta.get("what")), _OVERSIZE_ROLES["user"])
    entry: dict[str, Any] = {"ts": ts, "role": role}
    if role == "tool" and event.name:
        entry["name"] = redact(event.name)
    if event.tool_use_id and role in ("tool", "tool_result"):
        entry["tool_use_id"] = event.tool_use_id
    if role == "tool_result":
        entry["result"] = "ok"
    entry[field] = (
        f"[a transcript line of {size / (1 << 20):.1f} MB, over the {MAX_LINE_BYTES >> 20} MB a line may have:"
        " too large to keep]"
    )
    entry["kind"] = "oversize"
    entry["bytes"] = size
    return entry


def dumps_entry(entry: dict[str, Any]) -> bytes:
    """One compact JSON line with literal non-ASCII (lone surrogates kept as JSON escapes)."""
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "backslashreplace") + b"\n"


def read_l1(path: Path) -> Iterator[dict[str, Any]]:
    """The entries of an L1 file (``.l1.jsonl`` or ``.l1.jsonl.gz``); bad lines are skipped."""
    opener = gzip.open if is_l1_gz(str(path)) else open
    try:
        with opener(path, "rb") as handle:
            for raw in handle:
                raw = raw.strip()
                if not raw:
                    continue
                try:
                    value = json.loads(raw.decode("utf-8", errors="replace"))
                except ValueError:
                    continue
                if isinstance(value, dict):
                    yield value
    except (OSError, EOFError):  # unreadable or truncated gzip: what was read stands
        return
