"""The ``extractive`` backend: a deterministic L3 summary with no model at all.

It reads the archive's structure instead of its meaning: ``##`` headers give the
sections and their dates, ``- [topic]: fact`` bullets (the L2 flush format) and
``###`` / non-date ``##`` headers give the themes, and wording picks out decisions
("decided", "chose", "use X instead of", "switched to", 결정 …) and issues ("bug",
"fix", "error", "TODO", 버그, 해결 …) with a resolved/open status; a later fix of an
earlier problem closes it. The result is marked ``generator: "extractive"`` so it can
be upgraded by a model later. It is the fallback that makes a summary always exist.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .backend import DEFAULT_MAX_OUTPUT_TOKENS, Completion

ARCHIVE_START = "<<<ARCHIVE"
ARCHIVE_END = "ARCHIVE>>>"
MAX_ITEMS = 10
MAX_FACT_CHARS = 220
#: Near-duplicates are looked for among this many latest candidates, which keeps a huge
#: archive linear instead of quadratic.
RECENT_WINDOW = 60

DATE_RE = re.compile(r"(\d{4}-\d{2}-\d{2})")
HEADER_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
BULLET_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(.*)$")
TOPIC_RE = re.compile(r"^\[([^\]\n]{1,60})\]\s*[:：\-–—]?\s*(.*)$")
BOLD_TOPIC_RE = re.compile(r"^\*\*([^*\n]{1,60})\*\*\s*[:：\-–—]\s*(.*)$")

DECISION_RE = re.compile(
    r"\b(?:decided|decides|decide to|decision|chose|chosen|choose to|opted|went with|go with|settled on"
    r"|switched|switch to|migrated (?:to|from)|replaced|adopted|standardi[sz]ed on|picked(?! up)|in favou?r of"
    r"|prefer(?:red|s)?|instead of|rather than|will use|agreed)\b"
    r"|결정|선택했|채택|대신|(?:으)?로 변경|하기로",
    re.IGNORECASE,
)
#: A note that opens with a rule ("Use X …", "Never Y …") states a decision or convention.
RULE_START_RE = re.compile(r"^(?:use|keep|always|never|prefer|avoid|don'?t|do not|only)\b", re.IGNORECASE)
REASON_WORD_RE = re.compile(r"\bbecause\b|\bso that\b|\bto avoid\b|때문|위해", re.IGNORECASE)
ISSUE_RE = re.compile(
    r"\b(?:bugs?|fixed|fixes|errors?|fail(?:s|ed|ing|ures?)?|broken|breaks?|crash(?:es|ed|ing)?"
    r"|regressions?|todo|issues?|problems?|false positives?|workaround|blocked|blockers?|warnings?"
    r"|doesn'?t work|does not work|not working|still open|left open|exception|timeouts?|hangs?"
    r"|exhausted|leak(?:s|ed|ing)?|race condition|deadlocks?|flaky|stall(?:s|ed)?|overflows?|corrupt\w*|N\+1)\b"
    r"|해결|버그|오류|에러|문제|실패|안 ?됨",
    re.IGNORECASE,
)
OPEN_RE = re.compile(
    r"\b(?:still|not yet|todo|open|pending|blocked|unresolved|remains?|remaining|investigat\w*|next step"
    r"|follow-?up|needs? to|should be)\b|미해결|남음|남아|아직|확인 필요",
    re.IGNORECASE,
)
RESOLVED_RE = re.compile(
    r"\b(?:fixed|fixes|resolved|solved|works now|now works|now pass(?:es)?|passing|pass(?:es)? again|all green"
    r"|closed|worked around|workaround|no longer)\b|해결(?:됨|했|완료)|수정(?:됨|했|완료)|고쳤|통과"
    r"|;\s*(?:now |then |so )?(?:raised|added|switched|replaced|removed|increased|reduced|patched|reverted|bumped"
    r"|use[sd]?|wrapped|moved|pinned)\b",
    re.IGNORECASE,
)
#: Words about errors that describe a feature, not a problem ("error spans", "fails gracefully", flags).
FEATURE_NOISE_RE = re.compile(
    r"--[\w-]+|\b\w+_errors?\b|\berrors?_\w+|\bas an? error\b|\berror (?:handling|spans?|responses?|messages?|paths?|cases?|codes?)\b"
    r"|\bfails? gracefully\b|\bgraceful\w*|\binstead of failing\b|\bon (?:error|failure)\b",
    re.IGNORECASE,
)
NEW_BEHAVIOUR_RE = re.compile(r"\bnow (?!works?\b|pass\w*|fails?\b|breaks?\b|crash\w*)[a-z]+", re.IGNORECASE)
FIX_VERB_RE = re.compile(r"^\s*(?:fix(?:ed)?|resolved?|solved?)\b|해결", re.IGNORECASE)
PAREN_RE = re.compile(r"\s*\(([^()]{3,200})\)\s*$")
WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]{2,}|[가-힣]{2,}")
STOPWORDS = frozenset(
    """the and for with that this from into then than was were are has have had not but use used using
    now also all any our its via per new old add added adds when after before only still more less over
    under them they their there here what which who will would should could can did does done each make
    made run runs ran get got set let out off one two via instead because since while""".split()
)


@dataclass
class Item:
    text: str
    date: str | None
    topic: str | None
    order: int


@dataclass
class Section:
    header: str
    date: str | None
    items: list[Item] = field(default_factory=list)


def _clean(text: str) -> str:
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text


def _shorten(text: str, limit: int = MAX_FACT_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


@lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower().strip(".:/-") for w in WORD_RE.findall(text)) - STOPWORDS


def parse_sections(text: str) -> list[Section]:
    """The ``##`` sections of ``text`` with their items (bullets, paragraphs), dates and topics."""
    sections: list[Section] = []
    current = Section(header="", date=None)
    subtopic: str | None = None
    last_date: str | None = None
    order = 0
    pending: list[str] = []

    def flush_item() -> None:
        nonlocal order
        if not pending:
            return
        raw = _clean(" ".join(pending))
        pending.clear()
        if len(raw) < 4:
            return
        topic = subtopic
        match = TOPIC_RE.match(raw) or BOLD_TOPIC_RE.match(raw)
        if match and match.group(2).strip():
            topic, raw = match.group(1).strip(), match.group(2).strip()
        order += 1
        current.items.append(Item(raw, current.date, topic, order))

    for line in text.splitlines():
        header = HEADER_RE.match(line)
        if header and len(header.group(1)) == 1:  # the file's title ("# Project Memory"), not a section
            flush_item()
            subtopic = None
            continue
        if header and len(header.group(1)) == 2:
            flush_item()
            if current.header or current.items:
                sections.append(current)
            title = _clean(header.group(2))
            found = DATE_RE.search(title)
            if found:
                last_date = found.group(1)
            # A header without a date (a flush entry "## 12:03 — Memory Flush #4", "## Known
            # issues") belongs to the last dated day and names the topic of its bullets.
            current = Section(header=title, date=found.group(1) if found else last_date)
            subtopic = None if found or _is_flush_header(title) else title
            continue
        if header:
            flush_item()
            subtopic = _clean(header.group(2)) or subtopic
            continue
        bullet = BULLET_RE.match(line)
        if bullet:
            flush_item()
            pending.append(bullet.group(1))
        elif not line.strip():
            flush_item()
        elif pending and line.startswith((" ", "\t")):
            pending.append(line.strip())
        else:
            flush_item()
            pending.append(line.strip())
    flush_item()
    if current.header or current.items:
        sections.append(current)
    return sections


def _is_flush_header(title: str) -> bool:
    return bool(re.match(r"^\d{1,2}:\d{2}\b", title)) or "memory flush" in title.lower()


# --- themes ----------------------------------------------------------------------------------


def _topic_key(topic: str) -> str:
    return re.sub(r"[\s_-]+", " ", topic.lower()).strip()


def _themes(items: list[Item]) -> list[dict[str, Any]]:
    groups: dict[str, list[Item]] = {}
    spellings: dict[str, Counter[str]] = {}
    for item in items:
        topic = item.topic or "General notes"
        key = _topic_key(topic)
        groups.setdefault(key, []).append(item)
        spellings.setdefault(key, Counter())[topic] += 1
    ranked = sorted(
        groups.items(),
        key=lambda kv: (
            kv[0] != _topic_key("General notes"),  # untagged notes rank after real themes of equal weight
            len({i.date for i in kv[1]}) + len(kv[1]),
            -min(i.order for i in kv[1]),
        ),
        reverse=True,
    )
    themes: list[dict[str, Any]] = []
    for key, group in ranked[:MAX_ITEMS]:
        name = spellings[key].most_common(1)[0][0]
        dates = sorted({i.date for i in group if i.date})
        themes.append({"name": name, "summary": _theme_summary(group, dates), "sessions": dates[:20]})
    return themes


def _theme_summary(group: list[Item], dates: list[str]) -> str:
    picked = _representative(group, 3)
    span = ""
    if dates:
        span = f" on {dates[0]}" if len(dates) == 1 else f" from {dates[0]} to {dates[-1]}"
    count = f"{len(group)} note{'s' if len(group) != 1 else ''}{span}"
    facts = " ".join(_sentence(_shorten(i.text, 220)) for i in picked)
    return f"{facts} ({count}.)" if facts else f"({count}.)"


def _sentence(text: str) -> str:
    text = text.strip()
    if re.match(r"[a-z]+(?![\w.\-/`:])", text):  # a plain word, not an identifier like post_snapshot
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?", "…", "다", "요")) else text + "."


def _weight(item: Item) -> float:
    score = min(len(item.text), 160) / 40
    if DECISION_RE.search(item.text):
        score += 2
    if RESOLVED_RE.search(item.text) or ISSUE_RE.search(item.text):
        score += 1
    return score


def _representative(group: list[Item], count: int) -> list[Item]:
    """The ``count`` most telling items, shown in the order they happened."""
    if len(group) <= count:
        return list(group)
    chosen: list[Item] = [group[0]]  # how the theme started
    rest = sorted(group[1:], key=_weight, reverse=True)
    for item in rest:
        if len(chosen) >= count:
            break
        if all(_overlap(item.text, c.text) < 0.5 for c in chosen):
            chosen.append(item)
    return sorted(chosen, key=lambda i: i.order)


def _overlap(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))


# --- decisions -------------------------------------------------------------------------------


CLAUSE_SPLIT_RE = re.compile(r"\s*;\s+|\s+[—–]\s+|\s+-\s+")
SO_RE = re.compile(r",?\s+so\s+(?!that\b)", re.IGNORECASE)
BECAUSE_RE = re.compile(r"\s+(because of|because|since|due to)\s+", re.IGNORECASE)
PURPOSE_RE = re.compile(r"\s+((?:so that|to avoid|to keep|to make|in order to)\s+.*)$", re.IGNORECASE)


def _split_reason(text: str) -> tuple[str, str]:
    """(decision, reason): the clause that states the choice, and the words that explain it."""
    clauses = [c for c in CLAUSE_SPLIT_RE.split(text) if c.strip()]
    context = ""
    clause = text
    if len(clauses) > 1:
        index = next((i for i, c in enumerate(clauses) if DECISION_RE.search(c)), 0)
        clause = clauses[index]
        if index > 0:  # "X takes long — decided to only document it": X is the reason
            context = "; ".join(clauses[:index])
    so = SO_RE.search(clause)
    if so and DECISION_RE.search(clause[so.end() :]):
        return clause[so.end() :].strip(), clause[: so.start()].strip()
    paren = PAREN_RE.search(clause)
    if paren and (len(paren.group(1)) >= 8 or REASON_WORD_RE.search(paren.group(1))):
        return clause[: paren.start()].strip(), paren.group(1).strip()
    because = BECAUSE_RE.search(clause)
    if because and because.start() >= 12:
        return clause[: because.start()].strip().rstrip(","), clause[because.end() :].strip()
    purpose = PURPOSE_RE.search(clause)
    if purpose and purpose.start() >= 12:
        return clause[: purpose.start()].strip().rstrip(","), purpose.group(1).strip()
    return clause.strip(), context


def _is_decision(text: str) -> bool:
    if FIX_VERB_RE.search(text):
        return False  # "fixed X by using Y instead of Z" is an issue's resolution, not a decision
    if DECISION_RE.search(text) or RULE_START_RE.search(text):
        return True
    # A choice given with its reason ("Cache totals in Redis, because …") unless it explains a problem.
    return bool(REASON_WORD_RE.search(text)) and not _is_issue(text)


def _decisions(items: list[Item]) -> list[dict[str, Any]]:
    found: list[tuple[Item, str, str]] = []
    for item in items:
        if not _is_decision(item.text):
            continue
        decision, reason = _split_reason(item.text)
        if any(_overlap(decision, d) > 0.7 for _, d, _ in found[-RECENT_WINDOW:]):
            continue
        found.append((item, decision, reason))
    if len(found) > MAX_ITEMS:
        keep = sorted(found, key=lambda f: (bool(f[2]), _weight(f[0])), reverse=True)[:MAX_ITEMS]
        found = sorted(keep, key=lambda f: f[0].order)
    return [
        {"decision": _shorten(_prefix(item, d)), "reason": _shorten(r, 200), "date": item.date or ""}
        for item, d, r in found
    ]


def _prefix(item: Item, text: str) -> str:
    """``topic: text`` unless the text already names the topic."""
    if item.topic and _topic_key(item.topic) not in text.lower() and item.topic != "General notes":
        return f"{item.topic}: {text}"
    return text


# --- issues ----------------------------------------------------------------------------------


def _status(text: str) -> str:
    if RESOLVED_RE.search(text) and not re.search(r"\b(?:still|not yet|todo)\b|아직", text, re.IGNORECASE):
        return "resolved"
    if OPEN_RE.search(text):
        return "open"
    if FIX_VERB_RE.search(text):
        return "resolved"
    return "open"


@dataclass
class _Issue:
    item: Item
    text: str
    status: str
    resolution: str = ""


def _is_issue(text: str) -> bool:
    cleaned = FEATURE_NOISE_RE.sub(" ", text)
    if not ISSUE_RE.search(cleaned):
        return False
    # "failed enrichments now mark their span": a description of new behaviour, not a problem.
    return not (NEW_BEHAVIOUR_RE.search(cleaned) and not RESOLVED_RE.search(cleaned))


def _issues(items: list[Item]) -> list[dict[str, Any]]:
    found: list[_Issue] = []
    for item in items:
        if not _is_issue(item.text):
            continue
        status = _status(item.text)
        earlier = _related_open_issue(found, item, resolving=status == "resolved")
        if earlier is not None:
            if status == "resolved":
                earlier.status = "resolved"
                earlier.resolution = item.text
            # else: more about the same open problem; the first note states it
            continue
        if any(_overlap(item.text, f.text) > 0.7 for f in found[-RECENT_WINDOW:]):
            continue
        found.append(_Issue(item, item.text, status))
    if len(found) > MAX_ITEMS:
        # Keep every open issue first (they matter most), then the weightiest resolved ones.
        keep = sorted(found, key=lambda f: (f.status == "open", _weight(f.item), f.item.order), reverse=True)
        found = sorted(keep[:MAX_ITEMS], key=lambda f: f.item.order)
    out: list[dict[str, Any]] = []
    for issue in found:
        text = _prefix(issue.item, issue.text)
        if issue.resolution:
            text = f"{_shorten(text, 160)} → {_shorten(issue.resolution, 130)}"
        out.append({"issue": _shorten(text, 300), "status": issue.status, "date": issue.item.date or ""})
    return out


def _related_open_issue(found: list[_Issue], item: Item, resolving: bool) -> _Issue | None:
    """The latest earlier open issue about the same thing: same topic (for a fix, any day; for
    more about the problem, the same day or shared words), or without topics, many shared words."""
    for issue in reversed(found[-RECENT_WINDOW * 2 :]):
        if issue.status != "open":
            continue
        overlap = _overlap(issue.text, item.text)
        same_topic = issue.item.topic is not None and _topic_key(issue.item.topic) == _topic_key(
            item.topic or ""
        )
        if (same_topic and (resolving or issue.item.date == item.date or overlap >= 0.2)) or overlap >= 0.45:
            return issue
    return None


# --- overall ---------------------------------------------------------------------------------


def _overall(
    sections: list[Section],
    items: list[Item],
    themes: list[dict[str, Any]],
    decisions: list[dict[str, Any]],
    issues: list[dict[str, Any]],
) -> str:
    dates = sorted({s.date for s in sections if s.date})
    sentences = [_size_sentence(len(sections), len(items), dates)]
    sentences += _themes_sentence(items, themes)
    sentences += _day_sentences(items, dates)
    sentences += _decisions_sentence(decisions) + _issues_sentence(issues)
    sentences.append("(Extractive summary, made from headers and wording without a model.)")
    return " ".join(sentences)


def _size_sentence(n: int, notes: int, dates: list[str]) -> str:
    span = ""
    if dates:
        span = (
            f" on {dates[0]}"
            if len(dates) == 1
            else f" from {dates[0]} to {dates[-1]} ({len(dates)} days with notes)"
        )
    return f"This archive holds {n} section{'s' if n != 1 else ''} with {notes} notes{span}."


def _themes_sentence(items: list[Item], themes: list[dict[str, Any]]) -> list[str]:
    real = [t for t in themes if t["name"] != "General notes"]
    if not real:
        return []
    counts = Counter(_topic_key(i.topic) for i in items if i.topic)
    top = sorted(real[:5], key=lambda t: counts.get(_topic_key(t["name"]), 0), reverse=True)
    named = [f"{t['name']} ({counts.get(_topic_key(t['name']), 0)} notes)" for t in top]
    return ["Most notes are about " + _join(named) + "."]


def _day_sentences(items: list[Item], dates: list[str]) -> list[str]:
    sentences: list[str] = []
    for day in _timeline_days(dates):
        day_items = [i for i in items if i.date == day]
        if not day_items:
            continue
        topics = list(dict.fromkeys(i.topic for i in day_items if i.topic and i.topic != "General notes"))
        about = f" ({', '.join(topics[:6])})" if topics else ""
        facts = "; ".join(_shorten(i.text, 150).rstrip(".") for i in _representative(day_items, 2))
        sentences.append(f"On {day}{about}: {facts}.")
    return sentences


def _decisions_sentence(decisions: list[dict[str, Any]]) -> list[str]:
    if not decisions:
        return []
    shown = "; ".join(_shorten(d["decision"], 110).rstrip(".") for d in decisions[:2])
    return [
        f"{len(decisions)} decision{'s were' if len(decisions) != 1 else ' was'} recorded, among them: {shown}."
    ]


def _issues_sentence(issues: list[dict[str, Any]]) -> list[str]:
    if not issues:
        return []
    open_issues = [i for i in issues if i["status"] == "open"]
    resolved = len(issues) - len(open_issues)
    line = f"Of {len(issues)} problems noted, {resolved} {'was' if resolved == 1 else 'were'} solved"
    if open_issues:
        shown = "; ".join(_shorten(i["issue"], 120).rstrip(".") for i in open_issues[-2:])
        line += f"; still open at the end: {shown}"
    return [line + "."]


def _timeline_days(dates: list[str]) -> list[str]:
    if len(dates) <= 4:
        return dates
    return [dates[0], dates[len(dates) // 2], dates[-1]]


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def extract_summary(text: str) -> dict[str, Any]:
    """The L3 fields (dateRange, sectionCount, themes, keyDecisions, issues, overallSummary) of ``text``."""
    sections = parse_sections(text)
    items = [item for section in sections for item in section.items]
    themes = _themes(items)
    decisions = _decisions(items)
    issues = _issues(items)
    dates = sorted({s.date for s in sections if s.date})
    header_count = sum(1 for s in sections if s.header)
    return {
        "dateRange": {"first": dates[0], "last": dates[-1]} if dates else None,
        "sectionCount": header_count,
        "themes": themes,
        "keyDecisions": decisions,
        "issues": issues,
        "overallSummary": _overall(sections, items, themes, decisions, issues)
        if items
        else "The archive has no notes.",
    }


def archive_from_prompt(prompt: str) -> str:
    """The archive text between the prompt's markers (the whole prompt if there are none)."""
    start = prompt.find(ARCHIVE_START)
    end = prompt.rfind(ARCHIVE_END)
    if start == -1 or end == -1 or end < start:
        return prompt
    return prompt[start + len(ARCHIVE_START) : end].strip("\n")


class ExtractiveBackend:
    """No model: answers a summary prompt with :func:`extract_summary` of its archive, as JSON."""

    name = "extractive"  # for logs, health and ``generator`` (the Backend protocol)

    def complete(
        self, prompt: str, timeout: float, max_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    ) -> Completion:
        del max_tokens  # no model: nothing to bound
        summary = extract_summary(archive_from_prompt(prompt))
        return Completion(json.dumps(summary, ensure_ascii=False), "extractive", None, None)
