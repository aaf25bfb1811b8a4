"""An L1 session as a Markdown document (``memkeeper-tui``'s export; plain functions, stdlib only)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..store.atomic import atomic_write_text
from ..store.names import L1_GZ_SUFFIX, L1_SUFFIX

_SKIP = ("ts", "role", "name", "session", "tool_use_id", "sidechain", "agentId")


def session_markdown(title: str, entries: Iterable[dict[str, Any]]) -> str:
    """Prompts and answers as sections, tool calls as bullets with their fields, results under them."""
    out = [f"# {title}", ""]
    for entry in entries:
        role = entry.get("role")
        when = str(entry.get("ts") or "")[:19].replace("T", " ")
        agent = " (subagent)" if entry.get("sidechain") else ""
        if role == "user":
            out += [f"## You{agent} · {when} UTC", "", str(entry.get("text") or ""), ""]
        elif role == "assistant":
            out += [f"### Claude{agent} · {when} UTC", "", str(entry.get("text") or ""), ""]
        elif role == "tool":
            fields = "; ".join(f"{k}: {v}" for k, v in entry.items() if k not in _SKIP)
            out.append(f"- `{entry.get('name') or 'tool'}`{agent} {fields}".rstrip())
        elif role == "tool_result":
            output = str(entry.get("output") or "")
            out.append(f"  - → {entry.get('result') or 'ok'}" + (f": {output}" if output else ""))
    return "\n".join(out).rstrip() + "\n"


def export_session(path: Path, folder: Path) -> Path:
    """Write the L1 session ``path`` as ``folder/<session>.md`` (never over an existing file)."""
    from .l1_entries import read_l1

    stem = path.name.removesuffix(L1_GZ_SUFFIX).removesuffix(L1_SUFFIX)
    text = session_markdown(f"Session {stem}", read_l1(path))
    target = folder / f"{stem}.md"
    number = 1
    while target.exists():
        number += 1
        target = folder / f"{stem}-{number}.md"
    atomic_write_text(target, text)
    return target
