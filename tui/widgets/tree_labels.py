"""The tier tree's labels: memory.md's gauge, archives and summaries with their state, days and
sessions (local start, length, tools, title). Plain functions of the snapshot's view models."""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.text import Text

from ..model import ArchiveInfo, SessionCounts, SessionInfo, StoreSnapshot
from ..text import gauge, human_bytes, human_minutes, human_tokens, literal

SUMMARY_MARKS = {"ok": "✓", "pending": "○", "failed": "✗", "missing": "?"}
STATE_WORDS = {"ok": "", "pending": " pending", "failed": " failed", "missing": " missing"}

MarkStyle = Callable[[str], Style]
"""The style of a summary state's mark (from the tree's component classes)."""


def memory_label(snapshot: StoreSnapshot) -> Text:
    ratio = snapshot.memory_tokens / max(1, snapshot.threshold)
    return Text.assemble(
        ("memory.md ", "bold"),
        (gauge(ratio, 6), "bold"),
        f" {human_tokens(snapshot.memory_tokens)}/{human_tokens(snapshot.threshold)}",
    )


def l3_label(snapshot: StoreSnapshot) -> Text:
    label = Text.assemble(("L3 summaries", "bold"))
    if snapshot.pending:
        label.append(f"  {snapshot.pending} pending", "bold")
    return label


def archive_label(archive: ArchiveInfo, snapshot: StoreSnapshot | None, style: MarkStyle) -> Text:
    """Its days, its size and its summary's state; the rotation time too if another shares its day."""
    dates = f"{archive.first}…{(archive.last or '')[5:]}" if archive.first else archive.rotated_at[:10]
    if snapshot is not None and snapshot.same_day(archive):
        dates += f" {_clock(archive)}"
    mark = SUMMARY_MARKS.get(archive.summary_state, "?")
    return Text.assemble(
        literal(dates), f" {human_bytes(archive.bytes):>5} ", (mark, style(archive.summary_state))
    )


def summary_label(archive: ArchiveInfo, snapshot: StoreSnapshot | None, style: MarkStyle) -> Text:
    """Its state's mark, its first day (and time if another shares it), and the state in words."""
    when = archive.first or archive.rotated_at[:10]
    if snapshot is not None and snapshot.same_day(archive):
        when += f" {_clock(archive)}"
    state = archive.summary_state
    mark = SUMMARY_MARKS.get(state, "?")
    return Text.assemble((mark, style(state)), " ", literal(when), (STATE_WORDS[state], style(state)))


def day_label(counts: dict[str, SessionCounts], day: str, names: list[str]) -> Text:
    """The day, its sessions, and their messages once all are counted."""
    label = Text.assemble(literal(day), f" ({len(names)})")
    known = [counts[n] for n in names if n in counts]
    if known and len(known) == len(names):
        label.append(f" {sum(c.messages for c in known)} msg", "dim")
    return label


def session_label(name: str, info: SessionInfo | None, counts: SessionCounts | None, title: str) -> Text:
    """Local start time, length and tools, then the title (the viewer's title names the file)."""
    label = literal(info.time if info else name)
    if counts is None:
        label.append(" …", "dim")
    elif counts.unreadable:
        label.append(" unreadable", "bold")
    else:
        label.append(f" {human_minutes(counts.minutes)} {counts.tools}⚙", "dim")
        if counts.subagent:
            label.append(" +agent", "italic")
    if title:
        label.append(" ")
        label.append_text(literal(title))
    return label


def _clock(archive: ArchiveInfo) -> str:
    """The local rotation time of an archive (tells apart two archives of the same day)."""
    from ...core.basics.timestamps import local_time

    return local_time(archive.rotated_at, "%H:%M") if archive.rotated_at else archive.name[16:20]
