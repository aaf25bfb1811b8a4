"""What the viewer highlights: the words of a search query, as one case-insensitive pattern."""

from __future__ import annotations

import re


def query_words(query: str) -> tuple[str, ...]:
    """The words of a search query (quotes, operators and field filters dropped)."""
    words = re.findall(r"[^\s\"()*:]+", query)
    return tuple(w for w in words if w.upper() not in ("AND", "OR", "NOT", "NEAR"))


def terms_pattern(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    """A case-insensitive pattern matching any of ``terms``, longest first."""
    words = sorted({t for t in terms if t}, key=len, reverse=True)
    if not words:
        return None
    return re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)


def query_pattern(query: str) -> re.Pattern[str] | None:
    """A case-insensitive pattern matching any word of a search query."""
    return terms_pattern(query_words(query))
