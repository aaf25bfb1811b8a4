"""Counts in words for people: ``1 hit``, ``2 hits``, ``1 match``, ``3 matches`` (CLI and TUI alike)."""

from __future__ import annotations


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``count`` with its noun in the right number (``plural`` defaults to ``singular + "s"``)."""
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"
