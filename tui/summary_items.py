"""An L3 summary (its JSON as a dict) as viewer items: overall summary, themes, decisions, issues."""

from __future__ import annotations

from typing import Any

from .items import DocItem


def summary_items(data: dict[str, Any]) -> list[DocItem]:
    """An L3 summary as overall summary, themes, decisions and issues."""
    items: list[DocItem] = []
    date_range = data.get("dateRange") or {}
    if isinstance(date_range, dict) and date_range.get("first"):
        items.append(DocItem(f"{date_range.get('first')} → {date_range.get('last')}", kind="muted"))
    items.append(DocItem("Overall", kind="h2", anchor=True))
    items.append(DocItem(str(data.get("overallSummary") or "(none)")))
    items.extend(_section(data, "themes", "Themes", _theme))
    items.extend(_section(data, "keyDecisions", "Decisions", _decision))
    items.extend(_section(data, "issues", "Issues", _issue))
    return items


def _section(data: dict[str, Any], key: str, title: str, item: Any) -> list[DocItem]:
    """A heading with the count, then one item per well-formed entry of ``data[key]``."""
    entries = [entry for entry in data.get(key) or [] if isinstance(entry, dict)]
    return [DocItem(f"{title} ({len(entries)})", kind="h2", anchor=True), *(item(e) for e in entries)]


def _when(entry: dict[str, Any]) -> str:
    return f" ({entry.get('date')})" if entry.get("date") else ""


def _theme(theme: dict[str, Any]) -> DocItem:
    sessions = theme.get("sessions") or []
    extra = f"  [{', '.join(str(s) for s in sessions)}]" if sessions else ""
    return DocItem(str(theme.get("name") or "?"), kind="h3", body=str(theme.get("summary") or "") + extra)


def _decision(decision: dict[str, Any]) -> DocItem:
    text = str(decision.get("decision") or "?") + _when(decision)
    return DocItem(text, kind="bullet", prefix="• ", body=str(decision.get("reason") or ""))


def _issue(issue: dict[str, Any]) -> DocItem:
    mark = "✓ " if str(issue.get("status") or "") == "resolved" else "○ "
    return DocItem(str(issue.get("issue") or "?") + _when(issue), kind="bullet", prefix=mark)
