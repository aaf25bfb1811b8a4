"""One document for the viewer, read through core (in a thread worker): memory.md, a named
note, an archive, an L3 summary, an L1 session or a day of sessions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..core.basics.wording import counted
from ..core.store.paths import StorePaths
from .items import DocItem
from .l1_items import l1_items
from .markdown_items import markdown_items
from .model import Document, StoreSnapshot, Target
from .summary_items import summary_items


def _read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


def load_document(paths: StorePaths, target: Target, snapshot: StoreSnapshot | None = None) -> Document:
    """Read and shape one document for the viewer."""
    if target.kind == "memory":
        from ..core.basics.tokens import tokens_for_bytes
        from ..core.config.reader import hook_settings

        raw = paths.memory.read_bytes() if paths.memory.exists() else b""
        text = raw.decode("utf-8", "replace")
        tokens, threshold = tokens_for_bytes(len(raw)), hook_settings(paths).threshold_tokens
        title = f"memory.md · {tokens:,} / {threshold:,} tokens ({100 * tokens / max(1, threshold):.0f}%)"
        items = _with_origins(paths, paths.memory.name, markdown_items(text))
        items = items or [DocItem("memory.md is empty.", kind="muted")]
        return Document(target, title, items, paths.memory)
    if target.kind == "named":
        path = paths.named(target.name)
        return Document(target, path.name, markdown_items(_read_text(path)), path)
    if target.kind == "archive":
        path = paths.archive(target.name)
        return Document(
            target, target.name, _with_origins(paths, path.name, markdown_items(_read_text(path))), path
        )
    if target.kind == "summary":
        return _summary_document(paths, target, snapshot)
    if target.kind == "l1":
        return _l1_document(paths, target)
    if target.kind == "day":
        return _day_document(paths, target, snapshot)
    return Document(target, target.name, [DocItem("Select something in the tree.", kind="muted")])


def _with_origins(paths: StorePaths, rel: str, items: list[DocItem]) -> list[DocItem]:
    """Mark each ``## `` section a teammate committed "from NAME" (a shared store; git blame)."""
    from ..core.sharing.provenance import section_authors

    authors = section_authors(paths, rel)
    if not authors:
        return items
    return [
        replace(item, origin=authors[item.line].label())
        if item.kind == "h2" and item.line in authors
        else item
        for item in items
    ]


def _summary_document(paths: StorePaths, target: Target, snapshot: StoreSnapshot | None) -> Document:
    from ..core.store.names import summary_name
    from ..core.summaries.summary import load_summary

    archive = target.name
    info = snapshot.archive_named.get(archive) if snapshot else None
    path = paths.archive(summary_name(archive))
    title = f"L3 · {summary_name(archive)}"
    items: list[DocItem] = []
    if info is not None and info.summary_state != "ok":
        state = "FAILED" if info.summary_state == "failed" else "PENDING"
        items.append(
            DocItem(f"Summary {state} (attempts: {info.attempts})", kind="error" if info.error else "title")
        )
        if info.error:
            items.append(DocItem(info.error, kind="error"))
        items.append(DocItem("Regenerate it from the pending screen (p).", kind="muted"))
        if not path.exists():
            return Document(target, title, items, path)
        items.append(DocItem(""))
    try:
        summary = load_summary(path)
    except Exception as exc:
        items.append(DocItem(f"The summary file cannot be read: {exc}", kind="error"))
        return Document(target, title, items, path)
    data = summary.model_dump(mode="json") if hasattr(summary, "model_dump") else dict(summary)
    items.extend(summary_items(data))
    return Document(target, title, items, path)


def _l1_document(paths: StorePaths, target: Target) -> Document:
    from ..core.capture.l1_entries import read_l1
    from ..core.sharing.provenance import session_author

    path = paths.sessions / target.name
    entries = list(read_l1(path))
    items = l1_items(entries)
    session = next((str(e["session"]) for e in entries if isinstance(e.get("session"), str)), None)
    users = sum(1 for i in items if i.kind == "user")
    tools = sum(1 for i in items if i.kind in ("tool", "error") and i.prefix.find("⚙") >= 0)
    title = f"L1 · {target.name} · {counted(users, 'prompt')}, {counted(tools, 'tool call')}"
    author = session_author(paths, f"{paths.sessions.name}/{target.name}")
    if author is not None:
        title += f" · {author.label()}"
    if not items:
        size = path.stat().st_size if path.exists() else 0
        note = (
            DocItem(f"This session cannot be read: no valid entry in its {size:,} bytes.", kind="error")
            if size
            else DocItem("This session is empty.", kind="muted")
        )
        return Document(target, f"L1 · {target.name} · unreadable" if size else title, [note], path, session)
    return Document(target, title, items, path, session)


def _day_document(paths: StorePaths, target: Target, snapshot: StoreSnapshot | None) -> Document:
    sessions = snapshot.days.get(target.name, []) if snapshot else []
    items = [DocItem(f"{counted(len(sessions), 'session')} on {target.name}", kind="title")]
    for info in sessions:
        items.append(
            DocItem(f"{info.time}  {info.session}  ({info.size:,} bytes)", kind="bullet", prefix="• ")
        )
    items.append(DocItem("Open a session in the tree to read it.", kind="muted"))
    return Document(target, target.name, items)
