"""How an L3 summary's lenient fields are read: the rules the :class:`~memkeeper.core.summaries.summary.Summary`
model's validators apply, kept here so that a reader of thousands of summaries (the activity
screen's decisions and issues) applies the same rules without building the pydantic models.

Files written by the JS plugin or a model load leniently: a missing field is its default, a
number is text, a bare string in a list is an item, junk in a list is dropped. A field that
is still not text after that (a list, an object) makes the model refuse the whole file.
Stdlib only.
"""

from __future__ import annotations

from typing import Any

#: Each list of items in a summary, and the key a bare string in it becomes.
ITEM_KEYS = {"themes": "name", "keyDecisions": "decision", "issues": "issue"}


def as_text(value: Any) -> Any:
    """None is "", a number its text; anything else as it is (text, or what the model refuses)."""
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    return value


def items(value: Any, key: str) -> list[Any]:
    """A list of objects from whatever a file holds: strings become ``{key: text}``, junk is dropped."""
    if value is None:
        return []
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    out: list[Any] = []
    for item in value:
        if isinstance(item, dict):
            out.append(item)
        elif isinstance(item, str) and item.strip():
            out.append({key: item})
    return out


def status_text(value: Any) -> str:
    """An issue's status, lowercased ("open" when missing or blank)."""
    text = str(value or "open").strip().lower()
    return text or "open"


class Refused(ValueError):
    """The summary model would refuse the file: a field that must be text is not."""


def _texts(item: dict[str, Any], names: tuple[str, ...]) -> list[str]:
    """The fields ``names`` of an item as text (a missing one is "")."""
    out = []
    for name in names:
        value = item.get(name)
        if type(value) is not str:
            value = as_text(value)
            if not isinstance(value, str):
                raise Refused(name)
        out.append(value)
    return out


def decisions_and_issues(data: dict[str, Any]) -> tuple[list[list[str]], list[list[str]]]:
    """The ``keyDecisions`` ([decision, reason, date]) and ``issues`` ([issue, status, date]) of a
    summary's JSON object, as the model reads them; :class:`Refused` when it would refuse it."""
    decisions = [
        _texts(d, ("decision", "reason", "date")) for d in items(data.get("keyDecisions"), "decision")
    ]
    issues = []
    for item in items(data.get("issues"), "issue"):
        issue, date = _texts(item, ("issue", "date"))
        issues.append([issue, status_text(item.get("status")), date])
    return decisions, issues


Row = tuple[str, str, str, str]
"""A decision or an open issue of a summary: (kind, text, date, detail); kind is "decision"
(detail: its reason) or "issue" (detail: its status)."""


def findings_of(data: bytes) -> list[Row]:
    """Every key decision and every issue not resolved of a summary file's bytes, as
    ``core.summary.load_summary`` reads them; none of a file it cannot read or refuses.

    The one rule of the activity screen's list: the screen applies it to a file it reads, the
    search indexer to every summary it indexes (:mod:`memkeeper.core.search.l3findings`)."""
    import json

    try:
        parsed = json.loads(data.decode("utf-8-sig"))
        if not isinstance(parsed, dict):
            return []
        decisions, issues = decisions_and_issues(parsed)
    except (ValueError, RecursionError):  # Refused, UnicodeDecodeError, a JSON error; too deep
        return []
    found: list[Row] = [("decision", text, date, reason) for text, reason, date in decisions if text]
    found.extend(
        ("issue", text, date, status) for text, status, date in issues if text and status != "resolved"
    )
    return found
