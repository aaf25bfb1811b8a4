"""Ranked search: any text, a question or keywords, gives the entries that best answer it.

The default of ``search``. The query's words (stop words left out) are ORed, each with the
forms Porter's stemmer keeps apart (``decision`` → also ``decide``), plus each pair of
adjacent words as a phrase (a bonus where they stand together). Each tier's word index
(see :mod:`.schema`) ranks its rows by BM25 with field weights (what a person or Claude
wrote above tool output) and returns the top ``CANDIDATES`` through ``ORDER BY … LIMIT``:
no Python loop over the store. An L1 entry is also a candidate for the rare words its
neighbours hold (:mod:`.near`: the entries before and after it, its turn's prompt), at a
lower weight. Words found in almost every entry are left out of the candidate search
(they narrow nothing and cost the most) unless nothing else is left.

The candidates are then re-scored: a coordination factor (the share of the query's words,
weighted by rarity, the entry holds, half for words only its neighbours hold) and the
mild recency bonus. That share is also the hit's ``confidence``.

Words in scripts written without spaces (Korean, Japanese, Chinese) also go through the
trigram channel (the exact engine, as substrings): its hits are fused with the word
channel's by reciprocal rank. A query none of whose words occur anywhere answers no hits,
with close words from the index vocabulary as suggestions.

The pieces: :mod:`.question` parses the query; :mod:`.tierstats` reads what a tier's index
holds of its words; this module picks each tier's candidates; :mod:`.docreader` reads their
docs; :mod:`.scoring` re-scores them; :mod:`.hits` makes the hits and :mod:`.suggest` the
close words of an empty answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from . import schema
from .docreader import DocReader
from .hits import hit_of, make_hit, ranked_snippet, with_lines
from .near import Near, followed, near_words
from .query import bm25_norm, bm25_term, quoted
from .question import Group, RankedQuery, group_expr, match_expression, parse_ranked
from .scoring import (
    FIELD_WEIGHTS,
    Candidate,
    Ranked,
    confidence,
    confidence_cap,
    coverage_marks,
    rescored,
    scan_rank,
)
from .sources import SMALL_TIERS, Doc
from .tierstats import TierStats, average_length, idf_of, newest_lengths, tier_stats

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "CANDIDATES",
    "RRF_K",
    "DocReader",
    "Ranked",
    "RankedQuery",
    "confidence",
    "hit_of",
    "make_hit",
    "parse_ranked",
    "rank_confident",
    "rank_tier",
    "ranked_snippet",
    "scan_rank",
    "with_lines",
]

#: Rows ranked by SQLite per tier before re-scoring (more when filters may drop some).
CANDIDATES = 60
FILTERED_CANDIDATES = 400
#: The candidate search scores every row its words match (about 2 µs each): the rarest words
#: are asked for while their rows add up to at most SCORE_BUDGET; the others only re-score.
SCORE_BUDGET = 4000
#: When every word is that common, the newest NEWEST_BUDGET rows holding the two rarest are
#: ranked (walking common words newest first costs about 9 µs a row at 1 GB).
NEWEST_BUDGET = 1000
#: Reciprocal-rank fusion of the word and trigram channels: 1 / (RRF_K + rank).
RRF_K = 60
#: Rows of a word walked at most to tell which of the newest rows hold it in ``hi``.
PRESENCE_ROWS = 5000
#: A path-like token's words standing together (``core/log/flush.py``) outrank the same words apart.
PHRASE_BOOST = 2.0


def _candidate_groups(stats: TierStats, query: RankedQuery) -> tuple[list[Group], bool]:
    """The groups to ask the index for, rarest first within the budget; True when they must be ANDed."""
    present = sorted((g for g in query.groups if stats.df.get(g.stem, 0) > 0), key=lambda g: stats.df[g.stem])
    chosen: list[Group] = []
    rows = 0
    for group in present:
        if rows + stats.df[group.stem] > SCORE_BUDGET:
            break
        chosen.append(group)
        rows += stats.df[group.stem]
    if chosen or not present:
        return chosen, False
    return present[:2], len(present) > 1


def _top_rows(conn: sqlite3.Connection, index: str, expr: str, limit: int) -> list[Candidate]:
    """The best ``limit`` rows by SQLite's BM25 (for rare words: it walks every row of each word)."""
    table = schema.WORDS[index]
    rank = f"bm25({table}, {', '.join(str(w) for w in FIELD_WEIGHTS)})"
    live = schema.live_only(conn, table)
    sql = f"SELECT rowid, {rank} FROM {table} WHERE {table} MATCH ?{live} ORDER BY {rank} LIMIT ?"
    return [Candidate(rowid, -score) for rowid, score in conn.execute(sql, (expr, limit))]


def _newest_rows(
    conn: sqlite3.Connection, index: str, expr: str, units: Sequence[tuple[str, float]], limit: int
) -> list[Candidate]:
    """The best ``limit`` of the newest NEWEST_BUDGET rows matching ``expr``, by BM25 computed here
    over ``units`` ((FTS5 expression, idf): words or phrases every such row holds), each counted
    once, weighted as in the ``hi`` column or else as in ``lo``.

    SQLite's bm25() first counts every row of each word over the whole table (50 ms and more
    for a common word at 1 GB): here the rows come newest first, the rows holding each unit
    in ``hi`` from one query within their rowid range (walked newest first, at most
    PRESENCE_ROWS: older rows beyond count as ``lo``), the lengths from ``docsize``.
    """
    table = schema.WORDS[index]
    sizes = newest_lengths(conn, table, expr, NEWEST_BUDGET)
    if not sizes:
        return []
    ids = list(sizes)
    avg = max(1.0, average_length(conn, table))
    norms = {r: bm25_norm(avg if n is None else n, avg) for r, n in sizes.items()}
    scores = dict.fromkeys(ids, 0.0)
    high_weight, low_weight = FIELD_WEIGHTS[0], FIELD_WEIGHTS[1]
    for unit, idf in units:
        held = {
            rowid
            for (rowid,) in conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?"
                f" ORDER BY rowid DESC LIMIT {PRESENCE_ROWS}",
                (f"hi : ({unit})", ids[-1], ids[0]),
            )
        }
        for rowid in ids:
            tfw = high_weight if rowid in held else low_weight
            scores[rowid] += bm25_term(idf, tfw, norms[rowid])
    return _best(scores, limit)


def _phrase_rows(
    conn: sqlite3.Connection, index: str, query: RankedQuery, stats: TierStats, limit: int
) -> list[Candidate]:
    """Rows holding a path-like token of the query (``core/log/flush.py``) as a phrase, newest first, ranked
    above the rows that only hold its words somewhere (scored PHRASE_BOOST times higher)."""
    out: list[Candidate] = []
    by_word = {g.word: g for g in query.groups}
    for phrase in query.phrases:
        groups = [by_word[w] for w in phrase if w in by_word]
        if not groups or any(stats.df.get(g.stem, 0) == 0 for g in groups):
            continue  # a word the tier does not hold: the phrase cannot be there
        seen = {c.rowid for c in out}
        text = quoted(" ".join(phrase))
        for cand in _newest_rows(conn, index, text, [(text, sum(idf_of(stats, g) for g in groups))], limit):
            if cand.rowid not in seen:
                cand.score *= PHRASE_BOOST
                out.append(cand)
    out.sort(key=lambda c: -c.score)
    return out[:limit]


# -- one tier ---------------------------------------------------------------------------


def rank_tier(
    conn: sqlite3.Connection,
    reader: DocReader,
    tier: str,
    query: RankedQuery,
    keep: Callable[[Doc], bool],
    filtered: bool,
) -> tuple[list[Ranked], bool]:
    """The tier's best docs, re-scored, and whether the index held any query word."""
    index = "small" if tier in SMALL_TIERS else tier
    stats = tier_stats(conn, index, query)
    known = any(stats.df.get(g.stem, 0) for g in query.groups)
    groups, both = _candidate_groups(stats, query)
    if not groups:
        return [], known
    limit = FILTERED_CANDIDATES if filtered else CANDIDATES
    # the rows next to its rare words: candidates (by BM25) and the candidates' context marks
    near = near_words(conn, followed(query, stats.df)) if index == "l1" else None
    # memory and L3 share the small index: its candidates are asked for once per search
    key = (index, query.text, limit)
    found = reader.candidates.get(key)
    if found is None:
        found = reader.candidates[key] = [
            (c.rowid, c.score)
            for c in _index_candidates(conn, index, query, stats, (groups, both), limit, near)
        ]
    cands = [Candidate(rowid, score) for rowid, score in found]
    _read_docs(reader, tier, cands)
    cands = [c for c in cands if c.doc is not None and keep(c.doc)]
    coverage_marks(conn, index, query, cands, (stats, near))
    return rescored(query, cands, {g.stem: idf_of(stats, g) for g in query.groups}), known


def _index_candidates(
    conn: sqlite3.Connection,
    index: str,
    query: RankedQuery,
    stats: TierStats,
    chosen: tuple[list[Group], bool],
    limit: int,
    near: Near | None,
) -> list[Candidate]:
    """The index's best ``limit`` rows for the chosen groups (ANDed when ``both``), by BM25
    (for L1, with what each entry's neighbours hold: ``near``, see :mod:`.near`)."""
    groups, both = chosen
    expr = " AND ".join(group_expr(g) for g in groups) if both else match_expression(groups, query.pairs)
    if _by_bm25(stats, groups, both):
        if near is not None and near.context:
            idf = {g.stem: idf_of(stats, g) for g in query.groups}
            return _with_context(_top_rows(conn, index, expr, SCORE_BUDGET), near, idf, limit)
        return _top_rows(conn, index, expr, limit)
    cands = _phrase_rows(conn, index, query, stats, limit)
    seen = {c.rowid for c in cands}
    units = [(group_expr(g), idf_of(stats, g)) for g in groups]
    more = _newest_rows(conn, index, expr, units, limit) if len(cands) < limit else []
    return cands + [c for c in more if c.rowid not in seen][: limit - len(cands)]


def _by_bm25(stats: TierStats, groups: list[Group], both: bool) -> bool:
    """Whether the candidates are the rows SQLite's bm25() ranks best (rare words), not the newest."""
    return not both and not (len(groups) == 1 and stats.df[groups[0].stem] > SCORE_BUDGET)


def _with_context(own: list[Candidate], near: Near, idf: dict[str, float], limit: int) -> list[Candidate]:
    """The best ``limit`` of the rows their own words score (``own``) and the rows next to the
    query's rare words (``near``), each with what its context adds."""
    scores = {c.rowid: c.score for c in own}
    for rowid in near.context:
        scores[rowid] = scores.get(rowid, 0.0) + near.context_score(rowid, idf)
    return _best(scores, limit)


def _best(scores: dict[int, float], limit: int) -> list[Candidate]:
    """The ``limit`` best-scored rows, the newest first among equals."""
    best = sorted(scores, key=lambda r: (-scores[r], -r))[:limit]
    return [Candidate(rowid, scores[rowid]) for rowid in best]


#: Rows per tier :func:`rank_confident` re-scores (all of them hold every word it requires).
CONFIDENT_CANDIDATES = 10


def rank_confident(
    conn: sqlite3.Connection, reader: DocReader, tier: str, query: RankedQuery, min_confidence: float
) -> list[Ranked] | None:
    """Only the tier's docs that may reach ``min_confidence``, as :func:`rank_tier` scores them.

    For per-prompt recall, which wants only high-confidence hits, cheaply: confidence is the
    idf-weighted share of the query's words a doc holds, so a doc must hold every word
    whose share alone is more than ``1 - min_confidence``. Those words are ANDed (no word
    of the index: nothing, at once) and the best CONFIDENT_CANDIDATES rows by BM25 are
    re-scored exactly as :func:`rank_tier` does. None when no word is required (a long
    query of evenly rare words) or the query has words without spaces: the caller ranks
    the usual way.
    """
    if query.spaceless or not query.groups:
        return None
    index = "small" if tier in SMALL_TIERS else tier
    stats = tier_stats(conn, index, query)
    idf = {g.stem: idf_of(stats, g) for g in query.groups}
    total = sum(idf.values())
    cap = confidence_cap(query)
    if total <= 0 or min_confidence > cap:
        return []
    required = [g for g in query.groups if idf[g.stem] > (1.0 - min_confidence / cap) * total]
    if not required:
        return None
    if any(stats.df.get(g.stem, 0) == 0 for g in required):
        return []  # a required word occurs nowhere in this tier
    required.sort(key=lambda g: stats.df[g.stem])
    near = None
    if index == "l1":
        rare = followed(query, stats.df)
        if all(g in rare for g in required):
            near = near_words(conn, required)  # the rows next to them are candidates too
    cands = _confident_rows(conn, index, (required, stats), idf, near)
    _read_docs(reader, tier, cands)
    cands = [c for c in cands if c.doc is not None]
    coverage_marks(conn, index, query, cands, (stats, None))
    return [r for r in rescored(query, cands, idf) if r.confidence >= min_confidence]


def _confident_rows(
    conn: sqlite3.Connection,
    index: str,
    asked: tuple[list[Group], TierStats],
    idf: dict[str, float],
    near: Near | None,
) -> list[Candidate]:
    """The best CONFIDENT_CANDIDATES rows holding every required group, themselves or (L1,
    ``near``: the rows next to every required group) in their context."""
    required, stats = asked
    if near is not None:
        return _confident_near(conn, index, required, idf, near)
    expr = " AND ".join(group_expr(g) for g in required)
    if stats.df[required[0].stem] > SCORE_BUDGET:  # common words: the newest rows, scored without bm25()
        units = [(group_expr(g), idf[g.stem]) for g in required]
        return _newest_rows(conn, index, expr, units, CONFIDENT_CANDIDATES)
    return _top_rows(conn, index, expr, CONFIDENT_CANDIDATES)


def _confident_near(
    conn: sqlite3.Connection, index: str, required: list[Group], idf: dict[str, float], near: Near
) -> list[Candidate]:
    """The best CONFIDENT_CANDIDATES L1 rows holding every required group themselves or next to them."""
    rows: set[int] | None = None
    for group in required:
        holding = near.held[group.stem] | {r for r, s in near.context.items() if group.stem in s}
        rows = holding if rows is None else rows & holding
    own = {c.rowid: c.score for c in _top_rows(conn, index, match_expression(required, ()), SCORE_BUDGET)}
    return _best({r: own.get(r, 0.0) + near.context_score(r, idf) for r in rows or ()}, CONFIDENT_CANDIDATES)


def _read_docs(reader: DocReader, tier: str, cands: list[Candidate]) -> None:
    if tier in SMALL_TIERS:
        docs = reader.small(tier, [c.rowid for c in cands])
        for cand in cands:
            cand.doc = docs.get(cand.rowid)
    else:
        for cand in cands:
            cand.doc = reader.big(tier, cand.rowid)
