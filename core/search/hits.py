"""The hit a found entry gives: its place, a one-line snippet around the query's words, highlights."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..basics.tokens import estimate_tokens
from . import readahead, words
from .model import Hit, place_of
from .query import SNIPPET_CHARS, merge_spans
from .question import RankedQuery
from .scoring import Ranked
from .sources import SMALL_TIERS, Doc, lines_at, parse_id


def hit_of(doc: Doc, score: float, text: str, spans: Sequence[tuple[int, int]], confidence: float) -> Hit:
    """The hit a found entry gives, ranked or exact: its place, snippet, highlights, token count
    and confidence. The line of a big tier's doc (whose index row holds an offset) is left None:
    :func:`with_lines` counts it for the hits a search returns."""
    return Hit(
        *place_of(doc, doc.line),
        snippet=text,
        tokens=estimate_tokens(doc.body),
        score=round(score, 4),
        highlights=tuple(spans),
        confidence=confidence,
    )


def with_lines(hits: Sequence[Hit], base: Path) -> tuple[Hit, ...]:
    """``hits`` with the line of each big tier's hit (and of the turns of its exchange) counted from
    its file: each file read once, up to the last offset asked for (the hits a search drops never
    cost a read)."""
    if any(hit.exchange for hit in hits):
        flat = with_lines([h for hit in hits for h in (hit._replace(exchange=()), *hit.exchange)], base)
        out: list[Hit] = []
        at = 0
        for hit in hits:
            n = len(hit.exchange)
            out.append(flat[at]._replace(exchange=flat[at + 1 : at + 1 + n]))
            at += 1 + n
        return tuple(out)
    offsets = [_offset(hit) for hit in hits]
    wanted: dict[str, set[int]] = {}
    for hit, offset in zip(hits, offsets, strict=True):
        if offset is not None:
            wanted.setdefault(hit.file, set()).add(offset)
    if len(wanted) > 1:  # read from disk side by side where they are not in the OS cache
        readahead.files(
            (base / rel, 0 if rel.endswith(".gz") else max(found)) for rel, found in wanted.items()
        )
    lines = {
        (rel, offset): line
        for rel, found in wanted.items()
        for offset, line in lines_at(base / rel, sorted(found), gz=rel.endswith(".gz"))
    }
    return tuple(
        hit if offset is None else hit._replace(line=lines[hit.file, offset])
        for hit, offset in zip(hits, offsets, strict=True)
    )


def _offset(hit: Hit) -> int | None:
    """The byte offset of a big tier's hit whose line is not known yet (None otherwise)."""
    if hit.line is not None or hit.tier in SMALL_TIERS:
        return None
    place = parse_id(hit.id)
    return int(place[2]) if place is not None and place[2].isdigit() else None


def make_hit(item: Ranked, query: RankedQuery, exchange: Sequence[Doc] = ()) -> Hit:
    """The hit of a ranked entry; ``exchange``: the turns around it (see :mod:`.exchange`), each
    a hit of its own (score 0, its own snippet; the exchange's confidence is the hit's)."""
    text, spans = ranked_snippet(item.doc.body, query)
    hit = hit_of(item.doc, item.score, text, spans, item.confidence)
    if not exchange:
        return hit
    around = []
    for doc in exchange:
        near_text, near_spans = ranked_snippet(doc.body, query)
        around.append(hit_of(doc, 0.0, near_text, near_spans, item.confidence))
    return hit._replace(exchange=tuple(around))


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
