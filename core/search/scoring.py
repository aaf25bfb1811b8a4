"""Re-scoring ranked candidates: BM25 times a coordination factor and a mild recency bonus.

The coordination factor is the share of the query's words, weighted by rarity, an entry
holds (half for words only its neighbours or its session's title hold). A hit's
``confidence`` is that share times how far it stands out from the next best hit of its
tier (:func:`calibrated`): holding every word of a question is not enough when another
entry holds them as well. :func:`scan_rank` scores the same way without the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from . import answers, schema, timewords, words
from .near import Near, context_marks, followed
from .query import bm25_norm, bm25_term, day_number, recency_bonus
from .question import RankedQuery, group_expr
from .sources import WORD_FIELD_CHARS, Doc
from .tierstats import TierStats, idf_of

if TYPE_CHECKING:
    import sqlite3

#: bm25() weights of the columns hi, lo (see schema.WORD_COLUMNS); an entry's neighbours: near.CONTEXT_WEIGHT.
FIELD_WEIGHTS = (3.0, 1.0)
#: Coordination: the score is multiplied by COORD_BASE + (1 - COORD_BASE) * coverage.
COORD_BASE = 0.3
CONTEXT_CREDIT = 0.5
RECENCY_WEIGHT = 0.1
#: An entry of the days a question names (by its date or its time words, see :mod:`.timewords`)
#: scores this much more.
DATE_BOOST = 1.0
#: An entry that says when (a time word, :func:`.timewords.tells_when`) scores this much more for a
#: question asking when: on LoCoMo, R@10 +0.4 points on the tuning conversations and +0.8 on the
#: one held aside, R@1 +1.7 and +0.8 (flat from 1.0 to 2.0; docs/recall.md).
WHEN_BOOST = 1.0
#: An entry naming someone the question does not, for a question asking who; one holding a
#: number, for a question asking how many (see :mod:`.answers`): this much more. Chosen on the
#: two tuning conversations of LoCoMo (0.5 and 1.0 alike there; docs/recall.md, fourth round).
WHO_BOOST = 1.0
COUNT_BOOST = 1.0
#: How much more an L1 candidate scores for the session it is in (:func:`by_session`): chosen on
#: the two tuning conversations of LoCoMo (R@1 +1.6, R@5 +1.0 points, R@10 unchanged; 0.2 to
#: 1.0 alike), see docs/recall.md, fifth round.
SESSION_WEIGHT = 0.3
#: Calibration (see :func:`calibrated`): a hit that does not stand out keeps STANDOUT_BASE of its
#: coverage; one scoring STANDOUT_FULL times the next best hit, all of it. The "high" tier (>= 0.92)
#: is right about the top hit 83 % of the time on three LoCoMo conversations; 0.7 (was 0.5) since
#: per-prompt recall injects a confident hit's companions with it, chosen on two of them (docs/recall.md,
#: sixth round).
STANDOUT_BASE = 0.7
STANDOUT_FULL = 2.0
#: A one-word query cannot tell much: its best confidence is "suggested", not "high".
ONE_WORD_CONFIDENCE = 0.9


class Candidate:
    __slots__ = ("context", "doc", "own", "rowid", "score")

    def __init__(self, rowid: int, score: float) -> None:
        self.rowid = rowid
        self.score = score
        self.doc: Doc | None = None
        self.own: set[str] = set()  # stems of the groups the entry holds itself
        self.context: set[str] = set()  # ... that only its neighbours hold


class Ranked(NamedTuple):
    doc: Doc
    score: float
    confidence: float
    rowid: int = 0  # the index row (0: ranked without the index)


def coverage_marks(
    conn: sqlite3.Connection,
    index: str,
    query: RankedQuery,
    cands: list[Candidate],
    context: tuple[TierStats, Near | None],
) -> None:
    """Which groups each candidate holds itself (its text, read anyway), and which only its
    context holds: an L1 entry's neighbours (its words rarer than near.CONTEXT_MAX_ROWS: from
    ``near`` when the candidate search followed them all, ``near_words(conn, followed(…))``,
    else asked for the candidates) or its session's title."""
    _own_marks(query, cands)
    if index == "l1":
        stats, near = context
        if near is not None:
            marks = near.context
        else:
            marks = context_marks(conn, [c.rowid for c in cands], followed(query, stats.df))
        for cand in cands:
            cand.context.update(s for s in marks.get(cand.rowid, ()) if s not in cand.own)
        _title_marks(conn, query, cands)


def _own_marks(query: RankedQuery, cands: list[Candidate]) -> None:
    """Which groups each candidate holds in its own text (read anyway)."""
    wanted = {g.stem: {words.porter(f) for f in g.forms} for g in query.groups if not g.spaceless}
    # Porter's stemmer changes only a word's ending, never its first letter: words with
    # another first letter than every stem asked for need no stemming
    initials = {t[0] for targets in wanted.values() for t in targets if t}
    for cand in cands:
        if cand.doc is not None:
            text = cand.doc.body[: WORD_FIELD_CHARS * 2]
            stems = {words.porter(w) for w in words.plain_words(text) if w[0] in initials}
            for stem, targets in wanted.items():
                if not stems.isdisjoint(targets):
                    cand.own.add(stem)


def _title_marks(conn: sqlite3.Connection, query: RankedQuery, cands: list[Candidate]) -> None:
    """Words of the query in an entry's session title count as its context (the title is
    the session's own field, ``schema.TITLES``: one row per L1 file, keyed by its source id)."""
    sessions = {c.rowid >> schema.OFFSET_BITS for c in cands}
    if not sessions:
        return
    table = schema.TITLES
    marks = ",".join("?" * len(sessions))
    for group in query.groups:
        if group.spaceless:
            continue
        found = {
            src
            for (src,) in conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid IN ({marks})",
                (group_expr(group), *sessions),
            )
        }
        for cand in cands:
            if cand.rowid >> schema.OFFSET_BITS in found and group.stem not in cand.own:
                cand.context.add(group.stem)


def coverage(query: RankedQuery, idf: dict[str, float], own: set[str], context: set[str]) -> float:
    """The share of the query's words (weighted by rarity) an entry holds; neighbours count half."""
    total = sum(idf.values())
    if total <= 0:
        return 0.0
    got = 0.0
    for group in query.groups:
        if group.stem in own:
            got += idf[group.stem]
        elif group.stem in context:
            got += CONTEXT_CREDIT * idf[group.stem]
    return got / total


def confidence_cap(query: RankedQuery) -> float:
    """The best confidence a hit of ``query`` can have (ONE_WORD_CONFIDENCE for one word)."""
    return ONE_WORD_CONFIDENCE if len(query.groups) == 1 else 1.0


def confidence(query: RankedQuery, cov: float) -> float:
    return round(max(0.0, min(1.0, cov)) * confidence_cap(query), 4)


def rescored(query: RankedQuery, cands: list[Candidate], idf: dict[str, float]) -> list[Ranked]:
    """Coordination (the share of the query held), the mild recency bonus and what the question
    asks for (:func:`asked_for`) on top of BM25."""
    days = [day_number(c.doc.date) if c.doc else None for c in cands]
    newest = max((d for d in days if d is not None), default=None)
    out: list[Ranked] = []
    for cand, day in zip(cands, days, strict=True):
        if cand.doc is None:
            continue
        _spaceless_marks(query, cand)
        cov = coverage(query, idf, cand.own, cand.context)
        recency = recency_bonus(day, newest) / 0.3  # 0..1
        score = cand.score * (COORD_BASE + (1.0 - COORD_BASE) * cov) * (1.0 + RECENCY_WEIGHT * recency)
        score *= asked_for(query, cand.doc)
        out.append(Ranked(cand.doc, score, confidence(query, cov), cand.rowid))
    out.sort(key=lambda r: (-r.score, r.doc.file, r.doc.loc))
    return out


def by_session(items: list[Ranked]) -> list[Ranked]:
    """``items`` (one tier's ranked candidates) re-ordered with their session: each scores
    ``1 + SESSION_WEIGHT * share`` times more, ``share`` being its file's part of the
    candidates' scores over the best file's (1 for the file holding most of what matched).

    A conversation comes back to a topic within a session: the session where the question's
    words gather is where its answer most likely is, even when the answering entry holds
    fewer of them than a stray entry elsewhere."""
    if len(items) < 2:
        return items
    total: dict[str, float] = {}
    for item in items:
        total[item.doc.file] = total.get(item.doc.file, 0.0) + item.score
    best = max(total.values())
    if best <= 0:
        return items
    out = [r._replace(score=r.score * (1.0 + SESSION_WEIGHT * total[r.doc.file] / best)) for r in items]
    out.sort(key=lambda r: (-r.score, r.doc.file, r.doc.loc))
    return out


def asked_for(query: RankedQuery, doc: Doc) -> float:
    """How much more an entry scores for holding what the question asks for beyond its words:
    the days it names, a time when it asks when, a name when it asks who, a number when it
    asks how many (1.0: nothing of these)."""
    factor = 1.0
    if (query.window is not None or query.month is not None) and timewords.in_window(
        query.window, query.month, doc.date, doc.body
    ):
        factor *= 1.0 + DATE_BOOST
    if query.when and timewords.tells_when(doc.body):
        factor *= 1.0 + WHEN_BOOST
    if query.who and answers.names_someone(doc.body, query.text):
        factor *= 1.0 + WHO_BOOST
    if query.how_many and answers.tells_count(doc.body):
        factor *= 1.0 + COUNT_BOOST
    return factor


def calibrated(items: list[Ranked], own: Sequence[float] | None = None) -> list[Ranked]:
    """``items`` (one tier's hits, best first) with confidences that mean something: each
    hit's coverage times STANDOUT_BASE + (1 - STANDOUT_BASE) * min(1, log(m) / log(STANDOUT_FULL)),
    where ``m`` is how many times the next best hit's score the hit scores (none below the
    best stands out: m < 1). On the tuning conversations the top hit was right 37 % of the
    time when m < 1.3 whatever its coverage, 85 % when m >= 2.5. ``own``: the scores to
    compare instead of the items' (their scores before :func:`by_session`: a hit stands out
    by its own words, whatever else its session holds)."""
    from math import log

    scores = [item.score for item in items] if own is None else list(own)
    out: list[Ranked] = []
    for i, item in enumerate(items):
        other = (scores[1] if len(items) > 1 else 0.0) if i == 0 else scores[0]
        ratio = scores[i] / other if other > 0 else STANDOUT_FULL
        standout = min(1.0, max(0.0, log(ratio) / log(STANDOUT_FULL))) if ratio > 0 else 0.0
        share = STANDOUT_BASE + (1.0 - STANDOUT_BASE) * standout
        out.append(item._replace(confidence=round(item.confidence * share, 4)))
    return out


def _spaceless_marks(query: RankedQuery, cand: Candidate) -> None:
    if cand.doc is None:
        return
    lowered = cand.doc.body.lower()
    for group in query.groups:
        if group.spaceless and group.word in lowered:
            cand.own.add(group.stem)


# -- without the index ------------------------------------------------------------------------


def scan_rank(docs: Sequence[Doc], query: RankedQuery) -> list[Ranked]:
    """BM25 over ``docs`` in Python (the fallback when the index cannot be used), the same re-scoring."""
    forms = {g.stem: {words.porter(f) for f in g.forms} for g in query.groups}
    counted: list[tuple[Doc, dict[str, int], int]] = []
    df: dict[str, int] = {g.stem: 0 for g in query.groups}
    total_len = 0
    for doc in docs:
        stems = [words.porter(w) for w in words.plain_words(doc.body)]
        lowered = doc.body.lower()
        tf: dict[str, int] = {}
        for group in query.groups:
            n = (
                lowered.count(group.word)
                if group.spaceless
                else sum(stems.count(s) for s in forms[group.stem])
            )
            if n:
                tf[group.stem] = n
                df[group.stem] += 1
        total_len += len(stems)
        if tf:
            counted.append((doc, tf, len(stems)))
    stats = TierStats(len(docs), df)
    idf = {g.stem: idf_of(stats, g) for g in query.groups}
    avg = max(1.0, total_len / max(1, len(docs)))
    newest = max(
        (d for d in (day_number(doc.date) for doc, _tf, _n in counted) if d is not None), default=None
    )
    out: list[Ranked] = []
    for doc, tf, length in counted:
        weight = (
            FIELD_WEIGHTS[0] if doc.type in ("user", "assistant") or doc.tier != "l1" else FIELD_WEIGHTS[1]
        )
        norm = bm25_norm(length, avg)
        bm25 = sum(
            bm25_term(idf[s], n * weight, norm) for s, n in tf.items()
        )  # weights as SQLite applies them
        cov = coverage(query, idf, set(tf), set())
        recency = recency_bonus(day_number(doc.date), newest) / 0.3
        score = bm25 * (COORD_BASE + (1.0 - COORD_BASE) * cov) * (1.0 + RECENCY_WEIGHT * recency)
        score *= asked_for(query, doc)
        out.append(Ranked(doc, score, confidence(query, cov)))
    out.sort(key=lambda r: (-r.score, r.doc.file, r.doc.loc))
    return out
