"""The TUI's view models: what the tree, the status line and the viewer show (immutable).

Made by :mod:`memkeeper.tui.snapshot` (the store's state) and :mod:`memkeeper.tui.documents`
(one document), read by the widgets; nothing here reads a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

from .items import DocItem


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
    flush_every: int = 10
    flush_left: int | None = None
    """Prompts and tool uses until the flush of the session counted last (None: no session counted)."""
    memory_enabled: bool = True
    recall_enabled: bool = True

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


@dataclass(frozen=True)
class BackendHealth:
    """The summarizer backend: which one summarises now, and until when the chosen one rests."""

    backend: str
    in_use: str
    why: str = ""
    resting_until: str | None = None
    calls: int = 0
    """Model calls today (UTC), against ``daily_calls``; tokens against ``daily_tokens``."""
    daily_calls: int = 0
    tokens: int = 0
    daily_tokens: int = 0

    @property
    def resting(self) -> bool:
        return self.resting_until is not None


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


#: Hits shown at first, and added by each "more".
SEARCH_PAGE = 20


@dataclass(frozen=True)
class SearchState:
    """Where a search was left: reopening ``/`` starts from here (the App keeps it, a
    :class:`~memkeeper.tui.messages.SearchLeft` carries it up)."""

    query: str = ""
    tier_index: int = 0
    type_index: int = 0
    deep: bool = True
    exact: bool = False
    limit: int = SEARCH_PAGE
    highlighted: int | None = None
