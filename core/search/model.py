"""The answers of search: compact hits, per-tier groups, full entries and timelines.

Named tuples (no dataclasses: ``memkeeper search`` pays for every import) shared by the
CLI, the TUI and the MCP server; ``to_dict()`` gives their JSON shape. A snippet is
plain text plus the (start, end) spans of the matched terms, so no caller ever has to
parse markers out of user text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any

    from .sources import Doc

#: Seed 003's matcher: a hit at or above HIGH_CONFIDENCE is worth expanding with its text;
#: one at or above SUGGESTED_CONFIDENCE is worth listing; below, it is a weak match.
HIGH_CONFIDENCE = 0.92
SUGGESTED_CONFIDENCE = 0.75


#: The fields a hit and an entry begin with, in their order: id, tier, type, file, line,
#: session, date, title.
Place = tuple[str, str, str, str, int | None, str | None, str | None, str]


def place_of(doc: Doc, line: int | None) -> Place:
    """Where ``doc`` is, as the leading fields of its Hit or Entry (``line`` as known)."""
    return (doc.id, doc.tier, doc.type, doc.file, line, doc.session, doc.date, doc.title)


def file_line(item: Hit | Entry) -> str:
    """Where a hit or an entry is, as people and editors write it: ``file`` or ``file:line``."""
    return item.file + (f":{item.line}" if item.line else "")


class Hit(NamedTuple):
    """One compact search result (progressive disclosure, layer 1).

    ``confidence`` in [0, 1] says how well the hit answers the whole query, comparable
    across queries (unlike ``score``): in ranked mode, the share of the query's words
    (weighted by rarity) the entry holds, phrases and neighbours counted; in exact mode
    every hit holds every word, so 1.0.
    """

    id: str
    tier: str
    type: str
    file: str
    line: int | None
    session: str | None
    date: str | None
    title: str
    snippet: str
    tokens: int
    score: float
    highlights: tuple[tuple[int, int], ...] = ()
    confidence: float = 0.0
    #: An L1 hit's exchange: the conversational turns just before and after it (see
    #: ``search.exchange``), each a Hit of its own without an exchange; at most two.
    exchange: tuple[Hit, ...] = ()

    @property
    def tier_of_confidence(self) -> str:
        """``high`` (expand it), ``suggested`` (list it) or ``low``, by seed 003's thresholds."""
        if self.confidence >= HIGH_CONFIDENCE:
            return "high"
        if self.confidence >= SUGGESTED_CONFIDENCE:
            return "suggested"
        return "low"

    def marked_snippet(self, open_mark: str = "«", close_mark: str = "»") -> str:
        """The snippet with each match wrapped in the given marks (plain text)."""
        out: list[str] = []
        last = 0
        for start, end in self.highlights:
            out.append(self.snippet[last:start])
            out.append(open_mark + self.snippet[start:end] + close_mark)
            last = end
        out.append(self.snippet[last:])
        return "".join(out)

    def to_dict(self) -> dict[str, Any]:
        data = self._asdict()
        data["highlights"] = [list(span) for span in self.highlights]
        data["exchange"] = [h.to_dict() for h in self.exchange]
        return data


class TierResult(NamedTuple):
    tier: str
    hits: tuple[Hit, ...]
    total: int  # matches found (at most the candidate cap)
    more: bool = False  # True when the tier had more matches than were ranked

    def to_dict(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "total": self.total,
            "more": self.more,
            "hits": [h.to_dict() for h in self.hits],
        }


class SearchResults(NamedTuple):
    """Hits grouped by tier in the spec's order: memory, l3, l2, l1."""

    query: str
    terms: tuple[str, ...]
    tiers: tuple[TierResult, ...]
    source: str  # "index" or "scan"
    warnings: tuple[str, ...] = ()
    mode: str = "exact"  # "ranked": words ranked by BM25; "exact": every term as a substring
    suggestions: tuple[str, ...] = ()  # close words from the index when no query word occurs

    @property
    def ranked(self) -> list[Hit]:
        """Every hit, best first across the tiers (by confidence, then score within a tier)."""
        order = {tier.tier: i for i, tier in enumerate(self.tiers)}
        return sorted(self.hits, key=lambda h: (-h.confidence, order.get(h.tier, 9), -h.score))

    @property
    def hits(self) -> list[Hit]:
        return [hit for tier in self.tiers for hit in tier.hits]

    @property
    def total(self) -> int:
        return sum(t.total for t in self.tiers)

    def __bool__(self) -> bool:
        return any(t.hits for t in self.tiers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "terms": list(self.terms),
            "source": self.source,
            "mode": self.mode,
            "warnings": list(self.warnings),
            "suggestions": list(self.suggestions),
            "total": self.total,
            "tiers": [t.to_dict() for t in self.tiers],
        }


class Entry(NamedTuple):
    """The full entry behind a hit (progressive disclosure, layer 3)."""

    id: str
    tier: str
    type: str
    file: str
    line: int | None
    session: str | None
    date: str | None
    title: str
    text: str
    tokens: int
    raw: Any = None  # the L1 JSON object or the L3 item, when there is one

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class Timeline(NamedTuple):
    """What came just before and after an entry in the same file (layer 2)."""

    anchor: Entry
    before: tuple[Hit, ...] = ()
    after: tuple[Hit, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "anchor": self.anchor.to_dict(),
            "before": [h.to_dict() for h in self.before],
            "after": [h.to_dict() for h in self.after],
        }


class NotFound(LookupError):
    """No entry has this id (the file changed or the id is mistyped)."""
