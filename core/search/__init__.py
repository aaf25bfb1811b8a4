"""Search over every tier of the store: one incremental SQLite FTS5 index, progressive disclosure.

``search`` answers a query tier by tier (memory.md, L3 summaries, L2 archives, then L1
sessions with ``deep``); ``show`` and ``timeline`` expand a hit; ``refresh`` updates the
index incrementally and ``reindex`` rebuilds it; ``scan_search`` answers without the
index (the fallback, and the tests' oracle). Stdlib only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .engine import CAP, DEFAULT_LIMIT, scan_search, search
from .indexer import IndexBusy, Progress, RefreshStats, refresh, reindex
from .model import (
    HIGH_CONFIDENCE,
    SUGGESTED_CONFIDENCE,
    Entry,
    Hit,
    NotFound,
    SearchResults,
    TierResult,
    Timeline,
)
from .query import MAX_QUERY_CHARS, QueryError
from .sources import TIERS, TYPES_BY_TIER

if TYPE_CHECKING:
    from .disclosure import show, timeline

__all__ = [
    "CAP",
    "HIGH_CONFIDENCE",
    "SUGGESTED_CONFIDENCE",
    "DEFAULT_LIMIT",
    "MAX_QUERY_CHARS",
    "TIERS",
    "TYPES_BY_TIER",
    "Entry",
    "Hit",
    "IndexBusy",
    "NotFound",
    "Progress",
    "QueryError",
    "RefreshStats",
    "SearchResults",
    "TierResult",
    "Timeline",
    "refresh",
    "reindex",
    "scan_search",
    "search",
    "show",
    "timeline",
]


def __getattr__(name: str) -> object:
    """``show`` and ``timeline`` load their module when first asked for (a search needs neither)."""
    if name in ("show", "timeline"):
        from . import disclosure

        return getattr(disclosure, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
