"""The hit a found entry gives: its place, a one-line snippet around the query's words, highlights."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memkeeper.core.search import words
from memkeeper.core.search.model import Hit, place_of
from memkeeper.core.search.query import SNIPPET_CHARS, merge_spans
from memkeeper.core.search.question import RankedQuery
from memkeeper.core.search.scoring import Ranked
from memkeeper.core.search.sources import SMALL_TIERS, Doc, line_of_offset
from memkeeper.core.tokens import estimate_tokens


def hit_of(
    doc: Doc, base: Path, score: float, text: str, spans: Sequence[tuple[int, int]], confidence: float
) -> Hit:
    """The hit a found entry gives, ranked or exact: its line (counted from the file for the
    big tiers, whose rows hold offsets), snippet, highlights, token count and confidence."""
    line = doc.line
    if line is None and doc.tier not in SMALL_TIERS:
        line = line_of_offset(base / doc.file, int(doc.loc), gz=doc.file.endswith(".gz"))
    return Hit(
        *place_of(doc, line),
        snippet=text,
        tokens=estimate_tokens(doc.body),
        score=round(score, 4),
        highlights=tuple(spans),
        confidence=confidence,
    )


def make_hit(item: Ranked, query: RankedQuery, base: Path) -> Hit:
    text, spans = ranked_snippet(item.doc.body, query)
    return hit_of(item.doc, base, item.score, text, spans, item.confidence)


def ranked_snippet(
    body: str, query: RankedQuery, width: int = SNIPPET_CHARS
) -> tuple[str, list[tuple[int, int]]]:
    """A one-line window of ``body`` around the densest run of query words, with their spans."""
    flat = " ".join(body.split())
    stems = {words.porter(f) for g in query.groups for f in g.forms}
    spans = words.word_spans(flat, stems)
    lowered = flat.lower()
    for group in query.groups:
        if group.spaceless:
            pos = lowered.find(group.word)
            while pos >= 0:
                spans.append((pos, pos + len(group.word)))
                pos = lowered.find(group.word, pos + len(group.word))
    spans.sort()
    first = _densest(spans, width)
    start = max(0, first - width // 3)
    end = min(len(flat), start + width)
    start = max(0, min(start, end - width))
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(flat) else ""
    shift = len(prefix) - start
    inside = [(a + shift, b + shift) for a, b in spans if a >= start and b <= end]
    return prefix + flat[start:end] + suffix, merge_spans(inside)


def _densest(spans: list[tuple[int, int]], width: int) -> int:
    """Start of the span that begins the window holding the most matches."""
    best, best_n = 0, 0
    j = 0
    for i, (start, _end) in enumerate(spans):
        while spans[j][0] < start - width // 2:
            j += 1
        if i - j + 1 > best_n:
            best, best_n = spans[j][0], i - j + 1
    return best
