"""An L1 session as viewer items: a conversation, tool calls folded with their results,
and each subagent's work nested under the Task (or Agent) call that started it.

Subagent entries are marked in L1 by ``sidechain: true`` and ``agentId`` (read from the
``<session>/subagents/agent-<id>.jsonl`` transcripts). The Task call itself only has a
``tool_use_id``; which subagent it started is found, in this order, from the result's
``agentId: <id>`` line (Claude Code writes it at the end, so a clipped result may have lost
it), then from the call's time span (the subagent's first entry falls between the call and
its result), then from the nearest unclaimed call before the subagent started. A subagent
no call claims stays where it was written, marked with its id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.basics.timestamps import local_time
from ..core.basics.wording import counted
from .items import DocItem

#: Tools whose call starts a subagent (``Task`` until Claude Code 2.1, ``Agent`` since).
AGENT_TOOLS = frozenset({"Task", "Agent"})
_AGENT_ID = re.compile(r"agentId: ?([\w-]+)")
_HIDDEN_FIELDS = frozenset({"ts", "role", "name", "session", "tool_use_id", "sidechain", "agentId"})


def tool_line(entry: dict[str, Any]) -> str:
    """The one line that says what a tool call did (its command, file, pattern or description)."""
    for key in ("cmd", "target", "pattern", "detail", "params"):
        value = entry.get(key)
        if value:
            text = str(value)
            if key == "pattern" and entry.get("path"):
                text += f" in {entry['path']}"
            return text
    return ""


@dataclass
class _Task:
    """A Task call in the main conversation: where it is, when it ran, which agent it named."""

    index: int
    started: str
    ended: str = ""
    agent: str | None = None
    children: list[str] = field(default_factory=list)


@dataclass
class _Agent:
    """One subagent's items, where its first entry came, and when."""

    items: list[DocItem] = field(default_factory=list)
    position: int = 0
    started: str = ""


class _Conversation:
    """Collects items entry by entry, then nests the subagents (:meth:`items`)."""

    def __init__(self) -> None:
        self.main: list[DocItem] = []
        self.agents: dict[str, _Agent] = {}
        self.tasks: dict[str, _Task] = {}
        self.calls: dict[str, tuple[list[DocItem], int]] = {}

    def add(self, number: int, entry: dict[str, Any]) -> None:
        ts = str(entry.get("ts") or "")
        side = bool(entry.get("sidechain"))
        target = self._target(entry, ts) if side else self.main
        role = entry.get("role")
        if role == "tool_result":
            self._result(number, entry, ts, target)
            return
        item = _entry_item(number, entry, ts, side)
        use_id = entry.get("tool_use_id")
        if role == "tool" and isinstance(use_id, str):
            self.calls[use_id] = (target, len(target))
            if not side and entry.get("name") in AGENT_TOOLS:
                self.tasks[use_id] = _Task(len(target), ts)
        target.append(item)

    def _target(self, entry: dict[str, Any], ts: str) -> list[DocItem]:
        key = str(entry.get("agentId") or "")
        agent = self.agents.get(key)
        if agent is None:
            agent = self.agents[key] = _Agent(position=len(self.main), started=ts)
        return agent.items

    def _result(self, number: int, entry: dict[str, Any], ts: str, target: list[DocItem]) -> None:
        use_id = entry.get("tool_use_id")
        found = self.calls.pop(use_id, None) if isinstance(use_id, str) else None
        if found is None:
            target.append(_result_item(number, entry, ts))
            return
        items, index = found
        items[index] = _folded(items[index], entry, number)
        task = self.tasks.get(str(use_id))
        if task is not None:
            task.ended = ts
            named = _AGENT_ID.search(str(entry.get("output") or ""))
            task.agent = named.group(1) if named else None

    def items(self) -> list[DocItem]:
        """The main conversation with every subagent's items right under the call that started it."""
        claimed = self._claim()
        out: list[DocItem] = []
        loose = sorted((a.position, key) for key, a in self.agents.items() if key not in claimed)
        by_index = {task.index: task for task in self.tasks.values()}
        for index, item in enumerate(self.main):
            while loose and loose[0][0] <= index:
                out.extend(self.agents[loose.pop(0)[1]].items)
            task = by_index.get(index)
            if task is None or not task.children:
                out.append(item)
                continue
            out.append(_with_children(item, task.children, self.agents))
            for key in task.children:
                out.extend(replace(child, prefix=_untagged(child.prefix)) for child in self.agents[key].items)
        for _, key in loose:
            out.extend(self.agents[key].items)
        return out

    def _claim(self) -> set[str]:
        """Give each subagent to the Task call that started it (see the module's docstring)."""
        claimed: set[str] = set()
        tasks = sorted(self.tasks.values(), key=lambda t: t.index)
        for rule in (_names_it, _spans_it, _precedes_it):
            for key, agent in self.agents.items():
                free = [t for t in tasks if not t.children and rule(t, key, agent)]
                if key not in claimed and free:
                    # The nearest call before it, for the last rule; else the first that fits.
                    free[-1 if rule is _precedes_it else 0].children.append(key)
                    claimed.add(key)
        return claimed


def _names_it(task: _Task, key: str, agent: _Agent) -> bool:
    return task.agent is not None and key.startswith(task.agent)


def _spans_it(task: _Task, key: str, agent: _Agent) -> bool:
    return task.started <= agent.started <= (task.ended or "~")


def _precedes_it(task: _Task, key: str, agent: _Agent) -> bool:
    return task.started <= agent.started


def l1_items(entries: Iterable[dict[str, Any]]) -> list[DocItem]:
    """An L1 session as a conversation: roles distinct, tool calls folded with their results,
    subagent work nested under its Task call."""
    conversation = _Conversation()
    for number, entry in enumerate(entries, start=1):
        conversation.add(number, entry)
    return conversation.items()


def _agent_tag(entry: dict[str, Any], side: bool) -> str:
    if not side:
        return ""
    agent = entry.get("agentId")
    return f" [subagent {str(agent)[:8]}]" if agent else " [subagent]"


def _untagged(prefix: str) -> str:
    """A nested item's prefix without its ``[subagent …]`` tag (the Task call above names it)."""
    return re.sub(r" \[subagent[^\]]*\]", "", prefix)


def _entry_item(number: int, entry: dict[str, Any], ts: str, side: bool) -> DocItem:
    role = entry.get("role")
    clock = local_time(ts, "%H:%M") if ts else ""
    tag = _agent_tag(entry, side)
    if role in ("user", "assistant"):
        who = "you" if role == "user" else "claude"
        return DocItem(
            str(entry.get("text") or ""),
            kind="user" if role == "user" else "assistant",
            prefix=f"{clock} {who}{tag} ▸ ",
            anchor=role == "user" and not side,
            sidechain=side,
            line=number,
        )
    if role == "tool":
        details = [f"{k}: {v}" for k, v in entry.items() if k not in _HIDDEN_FIELDS]
        return DocItem(
            tool_line(entry),
            kind="tool",
            prefix=f"{clock} ⚙ {entry.get('name') or 'tool'}{tag} ",
            body="\n".join(details),
            sidechain=side,
            line=number,
        )
    return DocItem(str(entry.get("text") or entry), kind="muted", prefix=f"{clock} ", line=number)


def _result_item(number: int, entry: dict[str, Any], ts: str) -> DocItem:
    """A result whose call is not in the file (read on its own)."""
    clock = local_time(ts, "%H:%M") if ts else ""
    return DocItem(
        f"→ {entry.get('result') or 'ok'}",
        kind="tool_result",
        prefix=f"{clock} ",
        body=str(entry.get("output") or ""),
        sidechain=bool(entry.get("sidechain")),
        line=number,
    )


def _folded(call: DocItem, entry: dict[str, Any], number: int) -> DocItem:
    """The call with its result folded in: one line per tool use, details on Enter."""
    result = str(entry.get("result") or "ok")
    output = str(entry.get("output") or "")
    mark = "✗" if result == "error" else "✓"
    body = (call.body + "\n" if call.body else "") + f"→ {result}" + (f": {output}" if output else "")
    return replace(
        call,
        text=call.text + f"  {mark}",
        kind="error" if result == "error" else call.kind,
        body=body,
        end_line=number,  # the result's line: a hit on it opens this entry
    )


def _with_children(call: DocItem, keys: list[str], agents: dict[str, _Agent]) -> DocItem:
    """The Task call, saying which subagent's work follows it."""
    lines = [
        f"subagent {key[:8] or '(no id)'}: {counted(len(agents[key].items), 'entry', 'entries')} below"
        for key in keys
    ]
    count = sum(len(agents[key].items) for key in keys)
    return replace(call, text=f"{call.text}  ↳ {count} subagent entries", body="\n".join([*lines, call.body]))
