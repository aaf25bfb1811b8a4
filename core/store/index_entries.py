"""An entry of ``memory-index.json``, read and changed one field at a time: the one rule for each.

Plain functions over the parsed index (a dict as the JS plugin writes it, unknown keys kept),
below both the index's locked read-modify-write (:mod:`.memory_index`) and the glance
SessionStart reads (:mod:`.index_glance`). Nothing else reads an entry's summary flags.
Stdlib only (the hook path uses it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .names import summary_name

if TYPE_CHECKING:
    from typing import Any, Literal

    SummaryState = Literal["generated", "pending", "failed"]


def rotated_files(index: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries of ``rotatedFiles`` that are objects (as found; see :func:`safe_entries`)."""
    found = index.get("rotatedFiles")
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []


def listed_files(index: dict[str, Any]) -> set[str]:
    """The archive names the index lists."""
    return {name for e in rotated_files(index) if (name := entry_file(e))}


def find_entry(index: dict[str, Any], archive: str) -> dict[str, Any] | None:
    """The entry of ``archive``, or None."""
    return next((e for e in rotated_files(index) if e.get("file") == archive), None)


def entry_file(entry: dict[str, Any]) -> str | None:
    name = entry.get("file")
    return name if isinstance(name, str) and name else None


def summary_file(entry: dict[str, Any]) -> str | None:
    """The summary file name the entry records, else the one its archive name gives."""
    recorded = entry.get("summary")
    if isinstance(recorded, str) and recorded:
        return recorded
    name = entry_file(entry)
    return summary_name(name) if name else None


def summary_generated(entry: dict[str, Any]) -> bool:
    """The one rule for "generated": ``summaryGenerated`` is exactly ``true``."""
    return entry.get("summaryGenerated") is True


def summary_error(entry: dict[str, Any]) -> str | None:
    error = entry.get("summaryError")
    return error if isinstance(error, str) and error else None


def summary_attempts(entry: dict[str, Any]) -> int:
    value = entry.get("summaryAttempts")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def summary_generator(entry: dict[str, Any]) -> str | None:
    value = entry.get("summaryGenerator")
    return value if isinstance(value, str) and value else None


def summary_state(entry: dict[str, Any]) -> SummaryState:
    """``generated``; ``failed`` (not generated, with an error); else ``pending``."""
    if summary_generated(entry):
        return "generated"
    return "failed" if summary_error(entry) else "pending"


def mark_generated(entry: dict[str, Any], generator: str | None = None, tries: int = 0) -> None:
    """The summary file is written: flag the entry generated (and forget an old error)."""
    entry["summaryGenerated"] = True
    if generator is not None:
        entry["summaryGenerator"] = generator
    entry.pop("summaryError", None)
    if tries:
        entry["summaryAttempts"] = summary_attempts(entry) + tries


def mark_failed(entry: dict[str, Any], error: str, tries: int) -> None:
    """``tries`` more attempts failed; the entry stays pending with the last error."""
    entry["summaryGenerated"] = False
    entry["summaryError"] = error[:500]
    entry["summaryAttempts"] = summary_attempts(entry) + tries


def mark_pending(entry: dict[str, Any]) -> None:
    """The summary is missing or unusable: pending again, so the job regenerates it."""
    entry["summaryGenerated"] = False


def last_memory_update(index: dict[str, Any]) -> str | None:
    """``lastMemoryUpdateTs``: the newest transcript moment flushed into memory.md."""
    value = index.get("lastMemoryUpdateTs")
    return value if isinstance(value, str) and value else None
