"""Ranked search: any text, a question or keywords, gives the entries that best answer it.

The default of ``search``. The query's words (stop words left out) are ORed, each with the
forms Porter's stemmer keeps apart (``decision`` → also ``decide``), plus each pair of
adjacent words as a phrase (a bonus where they stand together). Each tier's word index
(see :mod:`.schema`) ranks its rows by BM25 with field weights (what a person or Claude
wrote above tool output, an entry's neighbours below both) and returns the top
``CANDIDATES`` through ``ORDER BY … LIMIT``: no Python loop over the store. Words found
in almost every entry are left out of the candidate search (they narrow nothing and cost
the most) unless nothing else is left.

The candidates are then re-scored: a coordination factor (the share of the query's words,
weighted by rarity, the entry holds, half for words only its neighbours hold) and the
mild recency bonus. That share is also the hit's ``confidence``.

Words in scripts written without spaces (Korean, Japanese, Chinese) also go through the
trigram channel (the exact engine, as substrings): its hits are fused with the word
channel's by reciprocal rank. A query none of whose words occur anywhere answers no hits,
with close words from the index vocabulary as suggestions.
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
import unicodedata
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import NamedTuple

from memkeeper.core.names import l1_session, name_date
from memkeeper.core.search import schema, terms, words
from memkeeper.core.search.indexer import vocab_cached
from memkeeper.core.search.model import Hit, place_of
from memkeeper.core.search.query import BM25_B, BM25_K1, SNIPPET_CHARS, day_number, recency_bonus
from memkeeper.core.search.query import merge_spans as _merge
from memkeeper.core.search.query import quoted as _quoted
from memkeeper.core.search.sources import (
    SMALL_TIERS,
    WORD_FIELD_CHARS,
    Doc,
    SourceFile,
    l1_doc,
    line_of_offset,
    read_source,
    section_doc,
)
from memkeeper.core.search.terms import varint
from memkeeper.core.store import StorePaths
from memkeeper.core.tokens import estimate_tokens

#: bm25() weights of the columns hi, lo, ctx (see schema.WORD_COLUMNS).
FIELD_WEIGHTS = (3.0, 1.0, 0.6)
#: Rows ranked by SQLite per tier before re-scoring (more when filters may drop some).
CANDIDATES = 60
FILTERED_CANDIDATES = 400
#: The candidate search scores every row its words match (about 2 µs each): the rarest words
#: are asked for while their rows add up to at most SCORE_BUDGET; the others only re-score.
SCORE_BUDGET = 4000
#: When every word is that common, the newest NEWEST_BUDGET rows holding the two rarest are
#: ranked (walking common words newest first costs about 9 µs a row at 1 GB).
NEWEST_BUDGET = 1000
DF_COUNT_CAP = 5000
#: Coordination: the score is multiplied by COORD_BASE + (1 - COORD_BASE) * coverage.
COORD_BASE = 0.3
CONTEXT_CREDIT = 0.5
CONTEXT_MAX_ROWS = 3000
RECENCY_WEIGHT = 0.1
RRF_K = 60
#: Rows of a word walked at most to tell which of the newest rows hold it in ``hi``.
PRESENCE_ROWS = 5000
#: A path-like token's words standing together (``core/flush.py``) outrank the same words apart.
PHRASE_BOOST = 2.0
_PATHLIKE = re.compile(r"[^\W_][/._:-]+[^\W_]")
#: A one-word query cannot tell much: its best confidence is "suggested", not "high".
ONE_WORD_CONFIDENCE = 0.9
MAX_SUGGESTIONS = 3
#: Close-word suggestions read the index pages of the terms with the word's first letter, or
#: its first two (three) when those span more than SUGGEST_PAGES pages; never more than SUGGEST_MAX_PAGES.
SUGGEST_PAGES = 8
SUGGEST_MAX_PAGES = 64
SUGGEST_PREFIX = 3
#: Hashes and hex ids (``9f3a0c``, ``eceaed``) are no word to suggest.
#: Endings tried to turn a stem back into a word that stems to it.
_ENDINGS = ("", "e", "ed", "ing", "s", "es", "ion", "ation", "y", "al", "er", "ment", "ly", "ity", "ness")
_HEXLIKE = re.compile(r"(?=[a-f]*\d)[0-9a-f]+|[a-f]{6,}")
_READ = 4096


class Group(NamedTuple):
    """One query word: its forms (ORed in the index), its stem, and whether it has no spaces to split on."""

    word: str
    forms: tuple[str, ...]
    stem: str
    spaceless: bool


class RankedQuery(NamedTuple):
    text: str
    groups: tuple[Group, ...]
    pairs: tuple[tuple[str, str], ...]
    #: The words of each path-like token (``core/flush.py``, ``zephyr-7731``): asked for as a phrase.
    phrases: tuple[tuple[str, ...], ...] = ()

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(g.word for g in self.groups)

    @property
    def spaceless(self) -> tuple[str, ...]:
        return tuple(g.word for g in self.groups if g.spaceless)


def _fold(word: str) -> str:
    """Latin letters without their accents (as the index's ``remove_diacritics``); other scripts as they are."""
    if word.isascii():
        return word
    folded = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return folded if folded.isascii() else word


def _is_spaceless(word: str) -> bool:
    return any(
        "\u1100" <= c <= "\u11ff"  # Hangul Jamo
        or "\u2e80" <= c <= "\u9fff"  # CJK, kana
        or "\uac00" <= c <= "\ud7af"  # Hangul syllables
        or "\uf900" <= c <= "\ufaff"
        for c in word
    )


def parse_ranked(text: str) -> RankedQuery:
    """The query's words (each once, stop words left out unless nothing else is left)."""
    raw = [_fold(w) for w in words.plain_words(text)]
    groups: list[Group] = []
    seen: set[str] = set()
    for word in raw:
        stem = words.stem(word)
        if not stem or stem in seen:
            continue
        seen.add(stem)
        forms = (word, *words.variants(word))
        groups.append(Group(word, forms, stem, _is_spaceless(word)))
    if not groups:  # only stop words: rank by them rather than answer nothing
        for word in dict.fromkeys(raw):
            groups.append(Group(word, (word,), words.porter(word), _is_spaceless(word)))
    pairs: list[tuple[str, str]] = []
    kept = [w for w in raw if words.stem(w)]
    for a, b in zip(kept, kept[1:], strict=False):
        if a != b and (a, b) not in pairs:
            pairs.append((a, b))
    phrases = [
        tuple(w) for w in (words.plain_words(t) for t in text.split() if _PATHLIKE.search(t)) if len(w) > 1
    ]
    return RankedQuery(
        text, tuple(groups[: words.MAX_QUERY_WORDS]), tuple(pairs[:8]), tuple(dict.fromkeys(phrases))[:4]
    )


def _group_expr(group: Group) -> str:
    if len(group.forms) == 1:
        return _quoted(group.forms[0])
    return "(" + " OR ".join(_quoted(f) for f in group.forms) + ")"


class _TierStats(NamedTuple):
    rows: int
    df: dict[str, int]  # stem -> rows holding it (0: nowhere)


def _rows(conn: sqlite3.Connection, table: str) -> int:
    """Rows of a word index, from FTS5's averages record (no scan)."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if not row or not row[0]:
        return 0
    value, _ = varint(bytes(row[0]), 0)
    return value


def _stats(conn: sqlite3.Connection, index: str, query: RankedQuery) -> _TierStats:
    table = schema.WORDS[index]
    rows = _rows(conn, table)
    df = {
        g.stem: vocab_cached(conn, ("df", table, g.forms), partial(_doc_count, conn, table, g, rows))
        for g in query.groups
    }
    return _TierStats(rows, df)


def _doc_count(conn: sqlite3.Connection, table: str, group: Group, rows: int) -> int:
    """Rows holding the group's words: counted up to DF_COUNT_CAP, estimated beyond.

    fts5vocab would walk every row of a common word (100 ms and more at 1 GB); this walks
    at most DF_COUNT_CAP rowids, newest first, and extrapolates from the share of the
    rowid range they span (rowids grow with the files, so the share is about the rows').
    """
    expr = _group_expr(group)
    cap = conn.execute(
        f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (expr, DF_COUNT_CAP),
    ).fetchone()
    if cap is None:
        found = conn.execute(
            f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ?)", (expr,)
        ).fetchone()
        return int(found[0])
    low = conn.execute(f"SELECT min(id) FROM {table}_docsize").fetchone()[0]  # one each: both are
    high = conn.execute(f"SELECT max(id) FROM {table}_docsize").fetchone()[0]  # one b-tree seek
    span = max(1, int(high) - int(cap[0]))
    estimate = DF_COUNT_CAP * (int(high) - int(low)) / span
    return int(min(max(rows, DF_COUNT_CAP), max(DF_COUNT_CAP, estimate)))


def _idf(stats: _TierStats, group: Group) -> float:
    df = stats.df.get(group.stem, 0)
    rows = max(stats.rows, df, 1)
    return math.log(1.0 + (rows - df + 0.5) / (df + 0.5))


def _candidate_groups(stats: _TierStats, query: RankedQuery) -> tuple[list[Group], bool]:
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


def match_expression(groups: Sequence[Group], pairs: Sequence[tuple[str, str]]) -> str:
    """An FTS5 expression: the groups ORed, plus the adjacent pairs of their words as phrases."""
    parts = [_group_expr(g) for g in groups]
    wanted = {g.word for g in groups}
    parts.extend(_quoted(f"{a} {b}") for a, b in pairs if a in wanted or b in wanted)
    return " OR ".join(parts)


class Candidate:
    __slots__ = ("context", "doc", "own", "rowid", "score")

    def __init__(self, rowid: int, score: float) -> None:
        self.rowid = rowid
        self.score = score
        self.doc: Doc | None = None
        self.own: set[str] = set()  # stems of the groups the entry holds itself
        self.context: set[str] = set()  # ... that only its neighbours hold


def _top_rows(conn: sqlite3.Connection, index: str, expr: str, limit: int) -> list[Candidate]:
    """The best ``limit`` rows by SQLite's BM25 (for rare words: it walks every row of each word)."""
    table = schema.WORDS[index]
    rank = f"bm25({table}, {', '.join(str(w) for w in FIELD_WEIGHTS)})"
    sql = f"SELECT rowid, {rank} FROM {table} WHERE {table} MATCH ? ORDER BY {rank} LIMIT ?"
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
    ids = [
        rowid
        for (rowid,) in conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT {NEWEST_BUDGET}",
            (expr,),
        )
    ]
    if not ids:
        return []
    lengths = _lengths(conn, table, ids)
    avg = max(1.0, _average_length(conn, table))
    norms = {r: BM25_K1 * (1.0 - BM25_B + BM25_B * lengths.get(r, avg) / avg) for r in ids}
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
        boosted = idf * (BM25_K1 + 1.0)
        for rowid in ids:
            tfw = high_weight if rowid in held else low_weight
            scores[rowid] += boosted * tfw / (tfw + norms[rowid])
    best = sorted(ids, key=lambda r: (-scores[r], -r))[:limit]
    return [Candidate(rowid, scores[rowid]) for rowid in best]


def _phrase_rows(
    conn: sqlite3.Connection, index: str, query: RankedQuery, stats: _TierStats, limit: int
) -> list[Candidate]:
    """Rows holding a path-like token of the query (``core/flush.py``) as a phrase, newest first, ranked
    above the rows that only hold its words somewhere (scored PHRASE_BOOST times higher)."""
    out: list[Candidate] = []
    by_word = {g.word: g for g in query.groups}
    for phrase in query.phrases:
        groups = [by_word[w] for w in phrase if w in by_word]
        if not groups or any(stats.df.get(g.stem, 0) == 0 for g in groups):
            continue  # a word the tier does not hold: the phrase cannot be there
        seen = {c.rowid for c in out}
        text = _quoted(" ".join(phrase))
        for cand in _newest_rows(conn, index, text, [(text, sum(_idf(stats, g) for g in groups))], limit):
            if cand.rowid not in seen:
                cand.score *= PHRASE_BOOST
                out.append(cand)
    out.sort(key=lambda c: -c.score)
    return out[:limit]


def _lengths(conn: sqlite3.Connection, table: str, ids: Sequence[int]) -> dict[int, float]:
    """Tokens in each row (all columns), from FTS5's ``docsize`` table."""
    out: dict[int, float] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for rowid, blob in conn.execute(f"SELECT id, sz FROM {table}_docsize WHERE id IN ({marks})", chunk):
            data = blob or b""
            out[rowid] = float(sum(data) if max(data, default=0) < 0x80 else _varint_sum(data))
    return out


def _average_length(conn: sqlite3.Connection, table: str) -> float:
    """Mean tokens per row (all columns), from FTS5's averages record."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if not row or not row[0]:
        return 0.0
    data = bytes(row[0])
    rows, pos = varint(data, 0)
    return _varint_sum(data[pos:]) / max(1, rows)


def _varint_sum(data: bytes) -> int:
    """The sum of the varints ``data`` holds (one byte each, mostly)."""
    if max(data, default=0) < 0x80:
        return sum(data)
    pos, total = 0, 0
    while pos < len(data):
        value, pos = varint(data, pos)
        total += value
    return total


def _coverage_marks(
    conn: sqlite3.Connection, index: str, query: RankedQuery, cands: list[Candidate], stats: _TierStats
) -> None:
    """Which groups each candidate holds itself (its text, read anyway), and which only its neighbours hold.

    Neighbours are asked of the index for the words rarer than CONTEXT_MAX_ROWS only: one
    query per word walks its rows, cheap for a rare word, and a common word found only
    next to an entry says little about it.
    """
    table = schema.WORDS[index]
    _own_marks(query, cands)
    for group in query.groups:
        if group.spaceless or not 0 < stats.df.get(group.stem, 0) <= CONTEXT_MAX_ROWS:
            continue
        lacking = {c.rowid: c for c in cands if group.stem not in c.own}
        if not lacking:
            continue
        marks = ",".join("?" * len(lacking))
        rows = conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid IN ({marks})",
            (f"ctx : {_group_expr(group)}", *lacking),
        ).fetchall()
        for (rowid,) in rows:
            lacking[rowid].context.add(group.stem)
    if index == "l1":
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
                (_group_expr(group), *sessions),
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


def confidence(query: RankedQuery, cov: float) -> float:
    cap = ONE_WORD_CONFIDENCE if len(query.groups) == 1 else 1.0
    return round(max(0.0, min(1.0, cov)) * cap, 4)


# -- reading the docs of the candidates ---------------------------------------------------


class DocReader:
    """The doc behind a word-index rowid: a ``docs`` row, or a section or L1 line read from its file."""

    def __init__(self, paths: StorePaths, conn: sqlite3.Connection) -> None:
        self.paths = paths
        self.conn = conn
        self.sources: dict[int, tuple[str, str, str] | None] = {}
        self.fds: dict[int, int] = {}
        self.whole: dict[int, bytes] = {}

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()

    def small(self, tier: str, rowids: Sequence[int]) -> dict[int, Doc]:
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        rows = self.conn.execute(
            "SELECT d.rowid, d.tier, d.type, s.rel, d.loc, d.line, d.date, d.title, d.body, d.session"
            f" FROM docs d JOIN sources s ON s.id = d.src WHERE d.rowid IN ({marks}) AND d.tier = ?",
            (*rowids, tier),
        ).fetchall()
        return {row[0]: Doc(*row[1:]) for row in rows}

    def big(self, tier: str, rowid: int) -> Doc | None:
        src = rowid >> schema.OFFSET_BITS
        offset = rowid & schema.OFFSET_MASK
        known = self._source(src)
        if known is None or known[1] != tier:
            return None  # a dead row of a removed or rewritten file
        rel, _tier, kind = known
        piece = self._piece(src, rel, kind, offset, tier == "l1")
        if piece is None:
            return None
        name = rel.rsplit("/", 1)[-1]
        if tier == "l1":
            return l1_doc(rel, name_date(name), l1_session(name), offset, None, piece)
        return section_doc("l2", "section", rel, offset, 0, piece, name_date(name))

    def _source(self, src: int) -> tuple[str, str, str] | None:
        if src not in self.sources:
            row = self.conn.execute("SELECT rel, tier, kind FROM sources WHERE id=?", (src,)).fetchone()
            self.sources[src] = (row[0], row[1], row[2]) if row else None
        return self.sources[src]

    def _whole(self, src: int, rel: str, tier: str, kind: str) -> bytes:
        """A compressed source, read whole once (it cannot be read at an offset)."""
        data = self.whole.get(src)
        if data is None:
            data = self.whole[src] = read_source(self.paths, SourceFile(rel, tier, kind, 0, 0))
        return data

    def _open(self, src: int, rel: str) -> int | None:
        """A plain source's descriptor, opened once (None when the file is gone)."""
        fd = self.fds.get(src)
        if fd is None:
            try:
                fd = self.fds[src] = os.open(self.paths.root / rel, os.O_RDONLY)
            except OSError:
                return None
        return fd

    def _piece(self, src: int, rel: str, kind: str, offset: int, line: bool) -> bytes | None:
        sep = b"\n" if line else b"\n## "
        if kind == "l1gz":
            data = self._whole(src, rel, "l1", kind)
            end = data.find(sep, offset + (0 if line else 1))
            return data[offset : len(data) if end < 0 else end]
        fd = self._open(src, rel)
        if fd is None:
            return None
        buf = b""
        while True:
            more = os.pread(fd, max(_READ, len(buf)), offset + len(buf))
            buf += more
            end = buf.find(sep, 0 if line else 1)
            if end >= 0:
                return buf[:end]
            if not more:
                return buf


# -- one tier ---------------------------------------------------------------------------


class Ranked(NamedTuple):
    doc: Doc
    score: float
    confidence: float


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
    stats = _stats(conn, index, query)
    known = any(stats.df.get(g.stem, 0) for g in query.groups)
    groups, both = _candidate_groups(stats, query)
    if not groups:
        return [], known
    limit = FILTERED_CANDIDATES if filtered else CANDIDATES
    expr = " AND ".join(_group_expr(g) for g in groups) if both else match_expression(groups, query.pairs)
    if both or (len(groups) == 1 and stats.df[groups[0].stem] > SCORE_BUDGET):
        cands = _phrase_rows(conn, index, query, stats, limit)
        seen = {c.rowid for c in cands}
        units = [(_group_expr(g), _idf(stats, g)) for g in groups]
        more = _newest_rows(conn, index, expr, units, limit) if len(cands) < limit else []
        cands += [c for c in more if c.rowid not in seen][: limit - len(cands)]
    else:
        cands = _top_rows(conn, index, expr, limit)
    _read_docs(reader, tier, cands)
    cands = [c for c in cands if c.doc is not None and keep(c.doc)]
    _coverage_marks(conn, index, query, cands, stats)
    return _rescored(query, cands, {g.stem: _idf(stats, g) for g in query.groups}), known


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
    stats = _stats(conn, index, query)
    idf = {g.stem: _idf(stats, g) for g in query.groups}
    total = sum(idf.values())
    cap = ONE_WORD_CONFIDENCE if len(query.groups) == 1 else 1.0
    if total <= 0 or min_confidence > cap:
        return []
    required = [g for g in query.groups if idf[g.stem] > (1.0 - min_confidence / cap) * total]
    if not required:
        return None
    if any(stats.df.get(g.stem, 0) == 0 for g in required):
        return []  # a required word occurs nowhere in this tier
    required.sort(key=lambda g: stats.df[g.stem])
    expr = " AND ".join(_group_expr(g) for g in required)
    if stats.df[required[0].stem] > SCORE_BUDGET:  # common words: the newest rows, scored without bm25()
        units = [(_group_expr(g), idf[g.stem]) for g in required]
        cands = _newest_rows(conn, index, expr, units, CONFIDENT_CANDIDATES)
    else:
        cands = _top_rows(conn, index, expr, CONFIDENT_CANDIDATES)
    _read_docs(reader, tier, cands)
    cands = [c for c in cands if c.doc is not None]
    _coverage_marks(conn, index, query, cands, stats)
    return [r for r in _rescored(query, cands, idf) if r.confidence >= min_confidence]


def _read_docs(reader: DocReader, tier: str, cands: list[Candidate]) -> None:
    if tier in SMALL_TIERS:
        docs = reader.small(tier, [c.rowid for c in cands])
        for cand in cands:
            cand.doc = docs.get(cand.rowid)
    else:
        for cand in cands:
            cand.doc = reader.big(tier, cand.rowid)


def _rescored(query: RankedQuery, cands: list[Candidate], idf: dict[str, float]) -> list[Ranked]:
    """Coordination (the share of the query held) and the mild recency bonus on top of BM25."""
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
        out.append(Ranked(cand.doc, score, confidence(query, cov)))
    out.sort(key=lambda r: (-r.score, r.doc.file, r.doc.loc))
    return out


def _spaceless_marks(query: RankedQuery, cand: Candidate) -> None:
    if cand.doc is None:
        return
    lowered = cand.doc.body.lower()
    for group in query.groups:
        if group.spaceless and group.word in lowered:
            cand.own.add(group.stem)


# -- hits -------------------------------------------------------------------------------


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
    return prefix + flat[start:end] + suffix, _merge(inside)


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


# -- honest empty answers -----------------------------------------------------------------


def suggestions(reader: DocReader, query: RankedQuery, indexes: Sequence[str]) -> list[str]:
    """Words of the index close to the query's words (edit distance ≤ 2), most frequent first.

    The candidates are the index's terms that begin with the word's first letter (its first
    two, or three, when the shorter prefix's terms span more than SUGGEST_PAGES pages), read from the
    index's pages (:mod:`.terms`): a no-hit query costs a few milliseconds, not a walk of
    every posting of those terms.
    """
    conn = reader.conn
    found: dict[str, tuple[int, int]] = {}
    for group in query.groups:
        stem = group.stem
        if len(stem) < 3 or group.spaceless:
            continue
        cap = 2 if len(stem) >= 5 else 1
        for index in indexes:
            for term, size in _close_terms(conn, schema.WORDS[index], stem, cap).items():
                dist = words.edit_distance(term, stem, cap + 1)
                old = found.get(term)
                if dist <= cap and (old is None or (dist, -size) < old):
                    found[term] = (dist, -size)
    shown: list[str] = []
    for term in sorted(found, key=lambda t: found[t]):
        word = _readable(reader, term, indexes)
        if word is not None and word not in shown:
            shown.append(word)
            if len(shown) == MAX_SUGGESTIONS:
                break
    return shown


def _close_terms(conn: sqlite3.Connection, table: str, stem: str, cap: int) -> dict[str, int]:
    """Terms of ``table`` that may be within ``cap`` edits of ``stem`` and look like words."""
    low = stem[0]
    while len(low) < SUGGEST_PREFIX and len(terms.pages(conn, table, low, _next(low))) > SUGGEST_PAGES:
        low = stem[: len(low) + 1]  # too many terms begin so: one more letter in common
    found = terms.between(conn, table, low, _next(low), SUGGEST_MAX_PAGES)
    return {
        t: size
        for t, size in found.items()
        if t != stem and abs(len(t) - len(stem)) <= cap and not _HEXLIKE.fullmatch(t)
    }


def _next(prefix: str) -> str:
    """The first string after every string beginning with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _readable(reader: DocReader, stem: str, indexes: Sequence[str]) -> str | None:
    """A word of the store whose Porter stem is ``stem`` (the index keeps stems; a person reads words);
    None when no entry holds it any more.

    The index is asked with a word that stems to ``stem`` (a query is stemmed again, and
    Porter's stem of a stem is not always itself: ``exceed`` → ``excee``).
    """
    asked = next((w for w in (stem + end for end in _ENDINGS) if words.porter(w) == stem), None)
    if asked is None:
        return stem  # no form of it to ask for: shown as the index holds it
    for index in indexes:
        table = schema.WORDS[index]
        row = reader.conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT 1", ("{hi lo} : " + _quoted(asked),)
        ).fetchone()
        if row is None:
            continue
        if index == "small":
            found = reader.conn.execute("SELECT body FROM docs WHERE rowid = ?", (row[0],)).fetchone()
            body = found[0] if found else ""
        else:
            doc = reader.big(index, row[0])
            body = doc.body if doc else ""
        for word in words.plain_words(body):
            if words.porter(word) == stem:
                return word
        return stem
    return None


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
    stats = _TierStats(len(docs), df)
    idf = {g.stem: _idf(stats, g) for g in query.groups}
    avg = max(1.0, total_len / max(1, len(docs)))
    newest = max(
        (d for d in (day_number(doc.date) for doc, _tf, _n in counted) if d is not None), default=None
    )
    out: list[Ranked] = []
    for doc, tf, length in counted:
        weight = (
            FIELD_WEIGHTS[0] if doc.type in ("user", "assistant") or doc.tier != "l1" else FIELD_WEIGHTS[1]
        )
        norm = 1.2 * (0.25 + 0.75 * length / avg)
        bm25 = sum(idf[s] * n * 2.2 / (n + norm) for s, n in tf.items()) * weight
        cov = coverage(query, idf, set(tf), set())
        recency = recency_bonus(day_number(doc.date), newest) / 0.3
        score = bm25 * (COORD_BASE + (1.0 - COORD_BASE) * cov) * (1.0 + RECENCY_WEIGHT * recency)
        out.append(Ranked(doc, score, confidence(query, cov)))
    out.sort(key=lambda r: (-r.score, r.doc.file, r.doc.loc))
    return out
