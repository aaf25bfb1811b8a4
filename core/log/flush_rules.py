"""What a batch of L1 entries is worth, and the extractive bullets written without a model.

The flush (``core/log/flush.py``) asks :func:`plan_batch` what to do with each batch:

- ``"skip"``: nothing worth remembering (greetings, ``/exit`` and other slash commands,
  tool runs with no prompt, answer or change): the watermark moves, no model is asked;
- ``"wait"``: too little to be worth a model call yet and the session is still going:
  the entries stay after the watermark and join the next batch;
- ``"extractive"``: too little for a call but the session is over (or the flush was
  asked for): :func:`extractive_bullets` writes the bullets;
- ``"model"``: enough content for one call.

Slash commands (``/exit``, ``/clear``, ``/compact …``) and ``! shell`` lines are marked
``"kind": "command"`` in L1; older L1 files are recognised by their text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

#: Claude Code's own commands are never a request; a plugin's command with at least
#: COMMAND_ARG_WORDS words of arguments is kept as the request those words make (the
#: same rule that lets such a command name a session).
from ..capture.titles import BUILTIN_COMMANDS, COMMAND_ARG_WORDS, INTERRUPTED_PREFIX, SLASH_COMMAND

Plan = Literal["skip", "wait", "extractive", "model"]


# --- formatting entries (the conversation a summarizer is given) ---------------------------------


def flat_text(text: Any, limit: int) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def tool_info(entry: dict[str, Any]) -> str:
    """The short description of a tool call, as the JS delta file had it."""
    if entry.get("cmd"):
        return flat_text(entry["cmd"], 200)
    if entry.get("target"):
        info = str(entry["target"])
        if entry.get("diff"):
            info += " (edited)"
        if entry.get("size") is not None:
            info += f" ({entry['size']} bytes)"
        return flat_text(info, 200)
    if entry.get("pattern"):
        where = f" in {entry['path']}" if entry.get("path") else ""
        return flat_text(f"{entry['pattern']}{where}", 200)
    if entry.get("params"):
        return flat_text(entry["params"], 200)
    return ""


def format_entry(entry: dict[str, Any]) -> str:
    """One line of the conversation given to the summarizer ('' for entries left out)."""
    role = entry.get("role")
    prefix = "[subagent] " if entry.get("sidechain") else ""
    if role == "user" and entry.get("text"):
        return f"{prefix}User: {flat_text(entry['text'], 1_500)}"
    if role == "assistant" and entry.get("text"):
        return f"{prefix}Claude: {flat_text(entry['text'], 1_500)}"
    if role == "tool":
        return f"{prefix}Tool({entry.get('name') or 'tool'}): {tool_info(entry)}".rstrip(": ")
    if role == "tool_result" and entry.get("result") == "error":
        return f"{prefix}Tool error: {flat_text(entry.get('output'), 200)}"
    return ""


#: (A batch with fewer characters of conversation than ``summarizer.minCallChars`` is not
#: worth a model call.) While the session goes on, a batch waits until it has this much (a third of a full call).
LIVE_MIN_CALL_CHARS = 8000

COMMAND_RE = re.compile(f"{SLASH_COMMAND}|^!")  # a slash command or a ``!`` shell line
TRIVIAL_RE = re.compile(
    r"(?i)^(?:hi|hello|hey|yo|thanks?(?: you)?|thx|ty|ok(?:ay)?|k|yes|yep|no|nope|y|n|sure|"
    r"continue|go on|go ahead|proceed|good|great|cool|nice|perfect|done|bye|good ?bye|lgtm)"
    r"(?:[\s!.,]+(?:claude|there|again|please|thanks))*[\s!.,]*$"
)
CHANGING_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "Bash"})
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "NotebookEdit"})
DECISION_RE = re.compile(
    r"(?i)\b(?:decided|decide to|decision|instead of|chose|choose to|going with|we(?:'ll| will) use|"
    r"switch(?:ed|ing)? (?:to|from)|prefer(?:s|red)?|rather than)\b"
)
PROBLEM_RE = re.compile(
    r"(?i)\b(?:fail(?:ed|s|ing|ure)?|exception|traceback|broken|crash(?:ed|es)?|does(?:n't| not) work|"
    r"not working|error:)"
)
FIX_RE = re.compile(r"(?i)\b(?:fixed|resolved|works now|now pass(?:es)?|all passing|solved)\b")
NO_PROBLEM_RE = re.compile(r"(?i)\b(?:0|no|zero|without)\s+(?:fail|error|exception)")
#: Sentences that announce the next step rather than state a fact.
INTENT_RE = re.compile(r"(?i)^(?:let me|let's|i need to|i'll|i will|now let|next,? i|first,? i)\b")
SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
EXCEPTION_LINE_RE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b.*)$")


def _text(entry: dict[str, Any]) -> str:
    return str(entry.get("text") or "").strip()


def is_command(entry: dict[str, Any]) -> bool:
    """A slash command or ``!`` shell line the user typed (not a prompt for the model)."""
    if entry.get("role") != "user":
        return False
    return entry.get("kind") == "command" or bool(COMMAND_RE.match(_text(entry)))


def is_noise_prompt(entry: dict[str, Any]) -> bool:
    """A user line that says nothing to remember: a command, an interruption, a greeting."""
    text = _text(entry)
    return (
        not text or is_command(entry) or text.startswith(INTERRUPTED_PREFIX) or bool(TRIVIAL_RE.match(text))
    )


def command_request(entry: dict[str, Any]) -> str | None:
    """The request inside a plugin's slash command (``/plugin:cmd do this and that``), if any."""
    if not is_command(entry):
        return None
    name, _, args = _text(entry).partition(" ")
    if name.lstrip("/").lower() in BUILTIN_COMMANDS or len(args.split()) < COMMAND_ARG_WORDS:
        return None
    return f"({name}) {args.strip()}"


def typed_prompts(entries: list[dict[str, Any]]) -> list[str]:
    """The prompts the user typed in the main thread, in order, without commands or repeats."""
    seen: set[str] = set()
    prompts: list[str] = []
    for entry in entries:
        if entry.get("role") != "user" or entry.get("sidechain"):
            continue
        text = command_request(entry) if is_noise_prompt(entry) else _text(entry)
        key = " ".join((text or "").lower().split())[:200]
        if text and key not in seen:
            seen.add(key)
            prompts.append(text)
    return prompts


def _line_chars(entry: dict[str, Any]) -> int:
    if entry.get("role") == "user" and is_noise_prompt(entry):
        return 0
    return len(format_entry(entry))


def substance(entries: list[dict[str, Any]]) -> int:
    """Characters of conversation a model would read (commands and greetings left out)."""
    return sum(_line_chars(e) for e in entries)


def is_trivial(entries: list[dict[str, Any]]) -> bool:
    """Nothing to remember: no real prompt, (almost) no answer, no change made."""
    if typed_prompts(entries):
        return False
    answered = sum(len(_text(e)) for e in entries if e.get("role") == "assistant")
    changed = any(e.get("role") == "tool" and e.get("name") in CHANGING_TOOLS for e in entries)
    return answered < 200 and not changed


def plan_batch(entries: list[dict[str, Any]], *, final: bool, min_chars: int) -> Plan:
    """What the flush does with ``entries`` (see the module docstring)."""
    if is_trivial(entries):
        return "skip"
    size = substance(entries)
    if not final and size < max(min_chars, LIVE_MIN_CALL_CHARS):
        return "wait"
    if size < min_chars:
        return "extractive"
    return "model"


# --- extractive bullets -----------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    parts = (s.replace("**", "").strip(" -*•>#\t") for s in SENTENCE_RE.split(text))
    return [s for s in parts if len(s) >= 12]


def _statement(sentence: str) -> bool:
    """A sentence that states something (not "Let me fix this:", not a heading or a list intro)."""
    return len(sentence) >= 25 and not sentence.endswith(":") and not INTENT_RE.match(sentence)


def _pack(label: str, items: list[str], width: int = 320) -> list[str]:
    """``- [label]: a · b · c`` bullets of at most ``width`` characters, every item kept."""
    bullets: list[str] = []
    current: list[str] = []
    for item in items:
        if current and len(" · ".join([*current, item])) > width:
            bullets.append(f"- [{label}]: " + " · ".join(current))
            current = []
        current.append(item)
    if current:
        bullets.append(f"- [{label}]: " + " · ".join(current))
    return bullets


def _request_bullets(prompts: list[str]) -> list[str]:
    if not prompts:
        return []
    if len(prompts) <= 2:
        return [f"- [request]: The user asked: {flat_text(p, 240)}" for p in prompts]
    each = max(50, min(200, 900 // len(prompts)))
    return _pack("requests", [flat_text(p, each) for p in prompts])


def _tool_error(entry: dict[str, Any]) -> str:
    """The exception line of a failed tool's traceback ('' for other, often transient, errors)."""
    lines = [line for line in str(entry.get("output") or "").splitlines() if line.strip()]
    for line in reversed(lines):
        match = EXCEPTION_LINE_RE.match(line)
        if match:
            return flat_text(match.group(1), 200)
    return ""


def _notable(entries: list[dict[str, Any]]) -> tuple[list[str], list[str], list[str]]:
    """(decisions, problems, fixes) recognised in the main thread's words and tool errors."""
    decisions: list[str] = []
    problems: list[str] = []
    fixes: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        if entry.get("sidechain"):
            continue
        if entry.get("role") == "tool_result" and entry.get("result") == "error":
            line = _tool_error(entry)
            if line and line not in seen:
                seen.add(line)
                problems.append(line)
            continue
        if entry.get("role") not in ("user", "assistant") or is_noise_prompt(entry):
            continue
        for sentence in _sentences(_text(entry)):
            short = flat_text(sentence, 220)
            if short in seen or not _statement(sentence):
                continue
            for pattern, found in ((DECISION_RE, decisions), (FIX_RE, fixes), (PROBLEM_RE, problems)):
                if pattern.search(sentence) and not (found is problems and NO_PROBLEM_RE.search(sentence)):
                    seen.add(short)
                    found.append(short)
                    break
    return decisions[-3:], problems[-3:], fixes[-3:]


def _files_bullet(entries: list[dict[str, Any]]) -> list[str]:
    edited: list[str] = []
    created: list[str] = []
    counts: dict[str, int] = {}
    for entry in entries:
        if entry.get("role") != "tool":
            continue
        name = str(entry.get("name") or "tool")
        counts[name] = counts.get(name, 0) + 1
        target = entry.get("target")
        if not isinstance(target, str) or not target:
            continue
        label = Path(target).name or target
        into = edited if name in EDIT_TOOLS else created if name == "Write" else None
        if into is not None and label not in edited and label not in created:
            into.append(label)
    if not counts:
        return []
    parts = []
    if edited:
        parts.append("edited " + ", ".join(edited[:8]) + (" …" if len(edited) > 8 else ""))
    if created:
        parts.append("wrote " + ", ".join(created[:6]) + (" …" if len(created) > 6 else ""))
    used = ", ".join(f"{n} ×{c}" for n, c in sorted(counts.items(), key=lambda kv: -kv[1])[:5])
    parts.append(f"{sum(counts.values())} tool calls ({used})")
    return [f"- [files]: {'; '.join(parts)}."]


def extractive_bullets(entries: list[dict[str, Any]]) -> list[str] | None:
    """Deterministic bullets from the entries themselves; None when there is nothing to keep.

    Every typed prompt (compressed, deduplicated; commands left out), the decisions,
    problems and fixes the words name, the files changed, and the last answer.
    """
    main = [e for e in entries if not e.get("sidechain")]
    bullets = _request_bullets(typed_prompts(main))
    decisions, problems, fixes = _notable(entries)
    bullets += [f"- [decision]: {d}" for d in decisions]
    bullets += [f"- [problem]: {p}" for p in problems]
    bullets += [f"- [fix]: {f}" for f in fixes]
    bullets += _files_bullet(entries)
    answers = [e for e in main if e.get("role") == "assistant" and _text(e)]
    if answers:
        last = flat_text(" ".join(_sentences(_text(answers[-1]))[:2]) or _text(answers[-1]), 240)
        if all(last not in b for b in bullets):
            bullets.append(f"- [outcome]: {last}")
    return bullets or None
