"""Three-way merges of the shared store's files, for git's ``merge.memkeeper`` driver.

Git calls ``memkeeper merge-driver BASE OURS THEIRS PATH`` when both sides of a merge (or a
rebase, or a cherry-pick) changed one of the files ``memkeeper share`` marks in the store's
``.gitattributes``; the result is written over OURS and the exit code says whether it is
clean (0). The rules, by file:

- ``memory.md`` and the archives ``memory_*.md``: a file is its head (the text before the
  first ``## `` line: a preamble, or the line-aligned carryover of a rotation) and its
  sections (a ``## `` line and what follows it up to the next one). A section either side
  added is kept; a section of the base that one side no longer holds (a rotation carried it
  into an archive, or a forget took it out) is left out; the others are kept. The sections
  come out in time order (the ``YYYY-MM-DD_HHMM`` of their header; a section without one
  keeps the place after the section before it), each exactly once. The head is the one
  side's that changed it (both changed: ours). Never a conflict marker.
- ``memory-index.json``: the archives listed on either side, each once (an entry both sides
  hold is merged: a summary generated on either side is generated; two different archives of
  the same name, two machines rotating in the same second, are pending again so the summary
  is made for the merged archive); one removed on one side and untouched on the other goes.
  The rotation statistics add both sides' new rotations. The machine's own keys
  (:data:`MACHINE_KEYS`: the JS plugin's counter and delta watermark, the last flush) are
  the local side's (ours in a merge, theirs in a rebase): they say what this machine did
  and never conflict.
- ``memory_*.summary.json``: two summaries of one archive (made on two machines): ours.

Stdlib only; nothing here reads the store, so a merge never depends on the machine's state.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..store.atomic import dumps_js
from ..store.index_entries import (
    mark_generated,
    mark_pending,
    summary_attempts,
    summary_generated,
    summary_generator,
)
from ..store.layout import INDEX_FILE, MEMORY_FILE
from ..store.names import is_archive, is_summary

#: Index keys that describe one machine's work, not the shared memory: ours wins, always.
MACHINE_KEYS = (
    "counter",
    "lastMemoryUpdateTs",
    "deltaCreatedAtMemoryMtime",
    "rulesInjectionCount",
    "lastFlushAt",
    "lastFlushGenerator",
    "recoveredFrom",
)

_HEADER = re.compile(r"^## ")
_HEADER_TIME = re.compile(r"^## (\d{4}-\d{2}-\d{2})[_ T](\d{2}):?(\d{2})")


# --- memory.md and the archives --------------------------------------------------------


def split_sections(text: str) -> tuple[str, list[str]]:
    """(head, sections) of a memory file; each section from its ``## `` line to the next."""
    head: list[str] = []
    sections: list[list[str]] = []
    for line in text.splitlines(keepends=True):
        if _HEADER.match(line):
            sections.append([line])
        elif sections:
            sections[-1].append(line)
        else:
            head.append(line)
    return "".join(head), ["".join(lines) for lines in sections]


def section_key(section: str) -> str:
    """What makes two sections the same: their text, without the blank lines around it."""
    return section.strip()


def section_time(section: str) -> str | None:
    """``YYYY-MM-DD HHMM`` of a section's header, or None."""
    match = _HEADER_TIME.match(section)
    return f"{match[1]} {match[2]}{match[3]}" if match else None


def _render(head: str, sections: list[str]) -> str:
    """The file: the head, then each section as the flush writes it (``\\n## …\\n<body>\\n``)."""
    out = head.rstrip("\n") + "\n" if head.strip() else ""
    for section in sections:
        out += "\n" + section_key(section) + "\n"
    return out


def _in_time_order(sections: list[str]) -> list[str]:
    """Sorted by header time, stably; a section without a time stays after the one before it."""
    keyed: list[tuple[str, int, str]] = []
    last = ""
    for order, section in enumerate(sections):
        last = section_time(section) or last
        keyed.append((last, order, section))
    return [section for _time, _order, section in sorted(keyed)]


def merge_sections(base: str, ours: str, theirs: str) -> str:
    """The three-way union of two memory files' sections (see the module docstring)."""
    base_head, base_sections = split_sections(base)
    our_head, our_sections = split_sections(ours)
    their_head, their_sections = split_sections(theirs)
    in_base = {section_key(s) for s in base_sections}
    in_ours = {section_key(s) for s in our_sections}
    in_theirs = {section_key(s) for s in their_sections}
    kept: list[str] = []
    seen: set[str] = set()
    for section, other in [(s, in_theirs) for s in our_sections] + [(s, in_ours) for s in their_sections]:
        key = section_key(section)
        if not key or key in seen:
            continue
        if key in in_base and key not in other:
            continue  # the other side carried it into an archive, or forgot it
        seen.add(key)
        kept.append(section)
    head = their_head if section_key(our_head) == section_key(base_head) else our_head
    return _render(head, _in_time_order(kept))


# --- memory-index.json -----------------------------------------------------------------


def _load_index(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _entries(index: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = index.get("rotatedFiles")
    entries = found if isinstance(found, list) else []
    return {e["file"]: e for e in entries if isinstance(e, dict) and isinstance(e.get("file"), str)}


def _merge_entry(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """One archive listed on both sides."""
    merged = {**theirs, **ours}
    if ours.get("bytes") != theirs.get("bytes"):
        # two archives of one name (same-second rotations on two machines), merged into one
        # file by this driver: its summary is made again for what it now holds
        mark_pending(merged)
        for key in ("summaryError", "summaryAttempts", "bytes", "tokens"):
            merged.pop(key, None)
        return merged
    if summary_generated(theirs) and not summary_generated(ours):
        mark_generated(merged, summary_generator(theirs))
        merged.pop("summaryAttempts", None)
        if summary_attempts(theirs):
            merged["summaryAttempts"] = summary_attempts(theirs)
    return merged


def _rotated_files(
    base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]
) -> list[dict[str, Any]]:
    base_e, our_e, their_e = _entries(base), _entries(ours), _entries(theirs)
    merged: dict[str, dict[str, Any]] = {}
    for name in [*our_e, *(n for n in their_e if n not in our_e)]:
        mine, other = our_e.get(name), their_e.get(name)
        if name in base_e and (mine is None or other is None):
            kept = other if mine is None else mine
            if kept == base_e[name]:
                continue  # removed on one side (forgotten), untouched on the other
        if mine is not None and other is not None:
            merged[name] = _merge_entry(mine, other)
        else:
            merged[name] = mine if mine is not None else other  # type: ignore[assignment]
    return sorted(merged.values(), key=lambda e: (str(e.get("rotatedAt") or ""), e["file"]))


def _stats(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    def get(index: dict[str, Any]) -> tuple[int, str]:
        stats = index.get("stats") if isinstance(index.get("stats"), dict) else {}
        total = stats.get("totalRotations")  # type: ignore[union-attr]
        last = stats.get("lastRotation")  # type: ignore[union-attr]
        return (total if isinstance(total, int) else 0, last if isinstance(last, str) else "")

    (b_total, _), (o_total, o_last), (t_total, t_last) = get(base), get(ours), get(theirs)
    total = max(0, o_total + max(0, t_total - b_total))
    return {"totalRotations": total, "lastRotation": max(o_last, t_last) or None}


def merge_index(
    base_text: str, ours_text: str, theirs_text: str, local_is_theirs: bool = False
) -> str | None:
    """The merged ``memory-index.json`` text; None if ours or theirs does not parse.

    The machine's own keys come from the local side: ours in a merge, theirs in a rebase
    (``local_is_theirs``: git replays the local commits onto the other side's)."""
    base, ours, theirs = _load_index(base_text) or {}, _load_index(ours_text), _load_index(theirs_text)
    if ours is None or theirs is None:
        return None
    merged = dict(ours)
    for key, value in theirs.items():
        if key in MACHINE_KEYS or key in ("rotatedFiles", "stats"):
            continue
        if key not in ours or ours.get(key) == base.get(key):
            merged[key] = value  # changed on their side alone
    if local_is_theirs:
        for key in MACHINE_KEYS:
            merged.pop(key, None)
            if key in theirs:
                merged[key] = theirs[key]
    merged["rotatedFiles"] = _rotated_files(base, ours, theirs)
    merged["stats"] = _stats(base, ours, theirs)
    return dumps_js(merged)


# --- the driver ------------------------------------------------------------------------


def kind_of(path: str) -> str | None:
    """Which rule merges the store file at ``path`` (``memory``, ``index``, ``summary``)."""
    name = path.replace("\\", "/").rpartition("/")[2]
    if name == MEMORY_FILE or is_archive(name):
        return "memory"
    if name == INDEX_FILE:
        return "index"
    if is_summary(name):
        return "summary"
    return None


def merge_texts(kind: str, base: str, ours: str, theirs: str, rebasing: bool = False) -> str | None:
    """The merged text of one store file of ``kind``; None when it cannot be merged cleanly.
    ``rebasing``: git is replaying the local commits (theirs) onto the other side's (ours)."""
    if kind == "memory":
        return merge_sections(base, ours, theirs)
    if kind == "index":
        return merge_index(base, ours, theirs, local_is_theirs=rebasing)
    if kind == "summary":
        return ours if _load_index(ours) is not None else theirs
    return None
