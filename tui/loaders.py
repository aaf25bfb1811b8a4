"""What the TUI shows, read through core into immutable view models (run in thread workers).

Nothing here parses store formats itself: the index comes from
:mod:`memkeeper.core.index`, summaries from :mod:`memkeeper.core.summary`, L1 sessions
from :mod:`memkeeper.core.l1`, the threshold from :mod:`memkeeper.core.config`. This
module only turns their results into frozen dataclasses and :class:`DocItem` lists,
and it never reads the whole L1 tier: the snapshot lists L1 file names; counts are
computed per day, on demand (:func:`count_l1`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from memkeeper.core.names import is_l1, l1_session, l1_started
from memkeeper.core.store import NAMED_MEMORY_FILES, StorePaths
from memkeeper.core.timefmt import local_time
from memkeeper.tui.items import DocItem, ItemKind


@dataclass(frozen=True)
class ArchiveInfo:
    """An L2 archive and the state of its L3 summary."""

    name: str
    rotated_at: str
    first: str | None
    last: str | None
    bytes: int
    tokens: int
    summary_state: SummaryState
    error: str | None = None
    attempts: int = 0


@dataclass(frozen=True)
class SessionInfo:
    """An L1 session file: its start (local day and time) comes from its name, nothing is read."""

    name: str
    day: str
    time: str
    session: str
    size: int


@dataclass(frozen=True)
class SessionCounts:
    """Messages, prompts, tool calls and length of one L1 session (computed lazily)."""

    messages: int
    tools: int
    subagent: bool
    minutes: int = 0
    unreadable: bool = False
    prompts: int = 0


@dataclass(frozen=True)
class StoreSnapshot:
    """Everything the tree and the status line need, read in one go."""

    project: Path
    exists: bool
    memory_tokens: int = 0
    memory_bytes: int = 0
    threshold: int = 23750
    named: tuple[str, ...] = ()
    archives: tuple[ArchiveInfo, ...] = ()
    sessions: tuple[SessionInfo, ...] = ()
    last_rotation: str | None = None
    last_flush: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def pending(self) -> int:
        return sum(1 for a in self.archives if a.summary_state in ("pending", "failed"))

    @property
    def failed(self) -> int:
        return sum(1 for a in self.archives if a.summary_state == "failed")

    @cached_property
    def days(self) -> dict[str, list[SessionInfo]]:
        """Sessions grouped by day (computed once per snapshot)."""
        grouped: dict[str, list[SessionInfo]] = {}
        for info in self.sessions:
            grouped.setdefault(info.day, []).append(info)
        return grouped

    @cached_property
    def _first_days(self) -> dict[str, int]:
        days: dict[str, int] = {}
        for archive in self.archives:
            key = archive.first or archive.rotated_at[:10]
            days[key] = days.get(key, 0) + 1
        return days

    def same_day(self, archive: ArchiveInfo) -> bool:
        """Whether another archive starts on the same day (its label needs the time too)."""
        return self._first_days.get(archive.first or archive.rotated_at[:10], 0) > 1

    @cached_property
    def archive_named(self) -> dict[str, ArchiveInfo]:
        return {a.name: a for a in self.archives}

    @cached_property
    def session_named(self) -> dict[str, SessionInfo]:
        return {s.name: s for s in self.sessions}


TargetKind = Literal["memory", "named", "archive", "summary", "l1", "day", "tier", "group", "none"]
"""What a tree node or the viewer shows (``tier`` and ``group`` are headings, ``none`` nothing)."""

SummaryState = Literal["ok", "pending", "failed", "missing"]


@dataclass(frozen=True)
class Target:
    """What the viewer shows: a document of ``kind`` named ``name``."""

    kind: TargetKind
    name: str = ""

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass(frozen=True)
class Document:
    """A loaded document: title line, items, and the file it came from."""

    target: Target
    title: str
    items: list[DocItem] = field(default_factory=list)
    path: Path | None = None
    session: str | None = None  # the full session id of an L1 document


def session_info(name: str, size: int) -> SessionInfo | None:
    """An L1 file's session, started at the local day and time its (UTC) name says."""
    started = l1_started(name)
    if started is None:
        return None
    return SessionInfo(
        name=name,
        day=local_time(started, "%Y-%m-%d"),
        time=local_time(started, "%H:%M"),
        session=l1_session(name) or "",
        size=size,
    )


def _summary_state(entry: dict[str, Any]) -> SummaryState:
    from memkeeper.core.index import summary_state

    state = summary_state(entry)
    return "ok" if state == "generated" else state


def load_snapshot(paths: StorePaths) -> StoreSnapshot:
    """Read the store's state: index, memory size, threshold, file names (no L1 content)."""
    # Stdlib-only core modules here: the snapshot is on the path to the first paint.
    from memkeeper.core.index import read_index, safe_entries, summary_attempts, summary_error
    from memkeeper.core.rotation import memory_tokens
    from memkeeper.core.settings import hook_settings

    if not paths.exists():
        return StoreSnapshot(project=paths.project, exists=False)
    threshold = hook_settings(paths).threshold_tokens
    warnings: list[str] = []
    index = read_index(paths)
    entries, refused = safe_entries(index)
    archives: list[ArchiveInfo] = []
    for entry in entries:
        name = str(entry.get("file"))
        found = entry.get("dateRange")
        date_range: dict[str, Any] = found if isinstance(found, dict) else {}
        archives.append(
            ArchiveInfo(
                name=name,
                rotated_at=str(entry.get("rotatedAt") or ""),
                first=date_range.get("first"),
                last=date_range.get("last"),
                bytes=int(entry.get("bytes") or 0),
                tokens=int(entry.get("tokens") or 0),
                summary_state=_summary_state(entry),
                error=summary_error(entry),
                attempts=summary_attempts(entry),
            )
        )
    archives.sort(key=lambda a: a.name)
    sessions = list_sessions(paths)
    try:
        memory_bytes = paths.memory.stat().st_size
    except OSError:
        memory_bytes = 0
    found_stats = index.get("stats")
    stats: dict[str, Any] = found_stats if isinstance(found_stats, dict) else {}
    return StoreSnapshot(
        project=paths.project,
        exists=True,
        memory_tokens=memory_tokens(paths),
        memory_bytes=memory_bytes,
        threshold=threshold,
        named=tuple(n for n, f in NAMED_MEMORY_FILES.items() if (paths.root / f).is_file()),
        archives=tuple(archives),
        sessions=tuple(sessions),
        last_rotation=stats.get("lastRotation") if isinstance(stats.get("lastRotation"), str) else None,
        last_flush=index.get("lastFlushAt") if isinstance(index.get("lastFlushAt"), str) else None,
        warnings=tuple(warnings + refused),
    )


def list_sessions(paths: StorePaths) -> list[SessionInfo]:
    """The L1 session files by name and size only: no file is opened (the tier may hold thousands)."""
    sessions: list[SessionInfo] = []
    try:
        entries = list(os.scandir(paths.sessions))
    except OSError:
        return sessions
    for entry in entries:
        if not is_l1(entry.name):
            continue
        try:
            size = entry.stat().st_size
        except OSError:
            continue
        info = session_info(entry.name, size)
        if info is not None:
            sessions.append(info)
    return sorted(sessions, key=lambda s: s.name, reverse=True)


def count_l1(paths: StorePaths, names: Iterable[str]) -> dict[str, SessionCounts]:
    """Messages, tool calls, subagent use and length per L1 session (reads those files only)."""
    counts: dict[str, SessionCounts] = {}
    for name in names:
        try:
            counts[name] = _count_one(paths.sessions / name)
        except (OSError, ValueError):
            continue
    return counts


def _count_one(path: Path) -> SessionCounts:
    from memkeeper.core.l1 import count_entries, read_l1

    tally = count_entries(read_l1(path))
    messages, tools = tally.messages, tally.tools
    unreadable = messages + tools == 0 and path.stat().st_size > 0 and not _has_entries(path)
    return SessionCounts(messages, tools, tally.subagent, tally.minutes, unreadable, tally.prompts)


def _has_entries(path: Path) -> bool:
    from memkeeper.core.l1 import read_l1

    return next(read_l1(path), None) is not None


# -- documents ---------------------------------------------------------------------------------


HEADING_RE = re.compile(r"^(#{1,6})\s+(.*)$")


def markdown_items(text: str) -> list[DocItem]:
    """Markdown lines as items: headings styled and navigable, bullets, code blocks; 1 line = 1 item."""
    items: list[DocItem] = []
    in_code = False
    number = 0
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_code = not in_code
            items.append(DocItem(line, kind="code", line=number))
            continue
        if in_code:
            items.append(DocItem(line, kind="code", line=number))
            continue
        heading = HEADING_RE.match(line)
        if heading:
            level = min(len(heading.group(1)), 3)
            kind: ItemKind = ("h1", "h2", "h3")[level - 1]
            items.append(DocItem(heading.group(2), kind=kind, line=number, anchor=level <= 2))
            continue
        bullet = re.match(r"^(\s*)[-*+]\s+(.*)$", line)
        if bullet:
            items.append(DocItem(bullet.group(2), kind="bullet", prefix=bullet.group(1) + "• ", line=number))
            continue
        items.append(DocItem(line, kind="text", line=number))
    while items and not items[-1].text.strip():
        items.pop()
    return _with_end_lines(items, number)


def _with_end_lines(items: list[DocItem], last_line: int) -> list[DocItem]:
    """Give each heading the last line of its section and each bullet its own (for removal)."""
    from dataclasses import replace

    levels = {"h1": 1, "h2": 2, "h3": 3}
    out: list[DocItem] = []
    for index, item in enumerate(items):
        if item.kind in levels and item.line is not None:
            end = last_line
            for later in items[index + 1 :]:
                if later.kind in levels and levels[later.kind] <= levels[item.kind] and later.line:
                    end = later.line - 1
                    break
            item = replace(item, end_line=end)
        elif item.kind == "bullet":
            item = replace(item, end_line=item.line)
        out.append(item)
    return out


def _read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


def load_document(paths: StorePaths, target: Target, snapshot: StoreSnapshot | None = None) -> Document:
    """Read and shape one document for the viewer."""
    if target.kind == "memory":
        from memkeeper.core.settings import hook_settings
        from memkeeper.core.tokens import tokens_for_bytes

        raw = paths.memory.read_bytes() if paths.memory.exists() else b""
        text = raw.decode("utf-8", "replace")
        tokens, threshold = tokens_for_bytes(len(raw)), hook_settings(paths).threshold_tokens
        title = f"memory.md · {tokens:,} / {threshold:,} tokens ({100 * tokens / max(1, threshold):.0f}%)"
        items = markdown_items(text) or [DocItem("memory.md is empty.", kind="muted")]
        return Document(target, title, items, paths.memory)
    if target.kind == "named":
        path = paths.named(target.name)
        return Document(target, path.name, markdown_items(_read_text(path)), path)
    if target.kind == "archive":
        path = paths.archive(target.name)
        return Document(target, target.name, markdown_items(_read_text(path)), path)
    if target.kind == "summary":
        return _summary_document(paths, target, snapshot)
    if target.kind == "l1":
        return _l1_document(paths, target)
    if target.kind == "day":
        return _day_document(paths, target, snapshot)
    return Document(target, target.name, [DocItem("Select something in the tree.", kind="muted")])


def _summary_document(paths: StorePaths, target: Target, snapshot: StoreSnapshot | None) -> Document:
    from memkeeper.core.names import summary_name
    from memkeeper.core.summary import load_summary

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


def summary_items(data: dict[str, Any]) -> list[DocItem]:
    """An L3 summary as overall summary, themes, decisions and issues."""
    items: list[DocItem] = []
    date_range = data.get("dateRange") or {}
    if isinstance(date_range, dict) and date_range.get("first"):
        items.append(DocItem(f"{date_range.get('first')} → {date_range.get('last')}", kind="muted"))
    items.append(DocItem("Overall", kind="h2", anchor=True))
    items.append(DocItem(str(data.get("overallSummary") or "(none)")))
    themes = [t for t in data.get("themes") or [] if isinstance(t, dict)]
    items.append(DocItem(f"Themes ({len(themes)})", kind="h2", anchor=True))
    for theme in themes:
        sessions = theme.get("sessions") or []
        extra = f"  [{', '.join(str(s) for s in sessions)}]" if sessions else ""
        items.append(
            DocItem(str(theme.get("name") or "?"), kind="h3", body=str(theme.get("summary") or "") + extra)
        )
    decisions = [d for d in data.get("keyDecisions") or [] if isinstance(d, dict)]
    items.append(DocItem(f"Decisions ({len(decisions)})", kind="h2", anchor=True))
    for decision in decisions:
        when = f" ({decision.get('date')})" if decision.get("date") else ""
        reason = str(decision.get("reason") or "")
        items.append(
            DocItem(str(decision.get("decision") or "?") + when, kind="bullet", prefix="• ", body=reason)
        )
    issues = [i for i in data.get("issues") or [] if isinstance(i, dict)]
    items.append(DocItem(f"Issues ({len(issues)})", kind="h2", anchor=True))
    for issue in issues:
        status = str(issue.get("status") or "")
        mark = "✓ " if status == "resolved" else "○ "
        when = f" ({issue.get('date')})" if issue.get("date") else ""
        items.append(DocItem(str(issue.get("issue") or "?") + when, kind="bullet", prefix=mark))
    return items


def _tool_line(entry: dict[str, Any]) -> str:
    for key in ("cmd", "target", "pattern", "detail", "params"):
        value = entry.get(key)
        if value:
            text = str(value)
            if key == "pattern" and entry.get("path"):
                text += f" in {entry['path']}"
            return text
    return ""


def l1_items(entries: Iterable[dict[str, Any]]) -> list[DocItem]:
    """An L1 session as a conversation: roles distinct, tool calls folded with their results."""
    items: list[DocItem] = []
    pending_tools: dict[str, int] = {}
    for number, entry in enumerate(entries, start=1):
        role = entry.get("role")
        ts = str(entry.get("ts") or "")
        clock = local_time(ts, "%H:%M") if ts else ""
        side = bool(entry.get("sidechain"))
        agent = (
            f" [subagent {str(entry.get('agentId'))[:8]}]"
            if side and entry.get("agentId")
            else (" [subagent]" if side else "")
        )
        if role == "user":
            items.append(
                DocItem(
                    str(entry.get("text") or ""),
                    kind="user",
                    prefix=f"{clock} you{agent} ▸ ",
                    anchor=not side,
                    sidechain=side,
                    line=number,
                )
            )
        elif role == "assistant":
            items.append(
                DocItem(
                    str(entry.get("text") or ""),
                    kind="assistant",
                    prefix=f"{clock} claude{agent} ▸ ",
                    sidechain=side,
                    line=number,
                )
            )
        elif role == "tool":
            details = [
                f"{k}: {v}"
                for k, v in entry.items()
                if k not in ("ts", "role", "name", "session", "tool_use_id", "sidechain", "agentId")
            ]
            item = DocItem(
                _tool_line(entry),
                kind="tool",
                prefix=f"{clock} ⚙ {entry.get('name') or 'tool'}{agent} ",
                body="\n".join(details),
                sidechain=side,
                line=number,
            )
            use_id = entry.get("tool_use_id")
            if isinstance(use_id, str):
                pending_tools[use_id] = len(items)
            items.append(item)
        elif role == "tool_result":
            result = str(entry.get("result") or "ok")
            output = str(entry.get("output") or "")
            use_id = entry.get("tool_use_id")
            if isinstance(use_id, str) and use_id in pending_tools:
                # Fold the result into its call: one line per tool use, details on Enter.
                index = pending_tools.pop(use_id)
                call = items[index]
                mark = "✗" if result == "error" else "✓"
                body = (
                    (call.body + "\n" if call.body else "")
                    + f"→ {result}"
                    + (f": {output}" if output else "")
                )
                items[index] = DocItem(
                    call.text + f"  {mark}",
                    kind="error" if result == "error" else call.kind,
                    prefix=call.prefix,
                    body=body,
                    sidechain=call.sidechain,
                    line=call.line,
                    end_line=number,  # the result's line: a hit on it opens this entry
                )
            else:
                items.append(
                    DocItem(
                        f"→ {result}",
                        kind="tool_result",
                        prefix=f"{clock} ",
                        body=output,
                        sidechain=side,
                        line=number,
                    )
                )
        else:
            items.append(
                DocItem(str(entry.get("text") or entry), kind="muted", prefix=f"{clock} ", line=number)
            )
    return items


def _l1_document(paths: StorePaths, target: Target) -> Document:
    from memkeeper.core.l1 import read_l1

    path = paths.sessions / target.name
    entries = list(read_l1(path))
    items = l1_items(entries)
    session = next((str(e["session"]) for e in entries if isinstance(e.get("session"), str)), None)
    users = sum(1 for i in items if i.kind == "user")
    tools = sum(1 for i in items if i.kind in ("tool", "error") and i.prefix.find("⚙") >= 0)
    title = f"L1 · {target.name} · {users} prompts, {tools} tool calls"
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
    items = [DocItem(f"{len(sessions)} sessions on {target.name}", kind="title")]
    for info in sessions:
        items.append(
            DocItem(f"{info.time}  {info.session}  ({info.size:,} bytes)", kind="bullet", prefix="• ")
        )
    items.append(DocItem("Open a session in the tree to read it.", kind="muted"))
    return Document(target, target.name, items)


def file_signature(path: Path | None) -> tuple[int, int] | None:
    """(size, mtime_ns) of ``path``: the viewer reloads only when it changed."""
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns)
