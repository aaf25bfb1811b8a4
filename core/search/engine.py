"""Answering a query: through the index, or by reading every file (the same answer).

Both paths produce the same :class:`Doc` values (see :mod:`.sources`), keep those every
term matches, and rank them with :mod:`.query`; the index only narrows down which docs
to look at. Per tier, at most ``cap`` matches are ranked: when a tier holds more, the
newest ``cap`` (by file name, then position in the file) are the ones ranked, and the
tier says ``more``. ``scan_search`` is the fallback when the index cannot be used
(busy, damaged beyond repair) and the oracle the tests compare the index with; it reads
the newest files first, one at a time, and stops once a tier has more than ``cap``.
Words of one or two characters are looked up as the trigrams they begin (see
``_short_grams``), so they narrow the candidates like longer words do.
"""

from __future__ import annotations

import re
import sqlite3
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..store.boundary import StoreLinkError
from ..store.names import l1_session, name_date
from ..store.paths import StorePaths
from . import ranked as ranked
from . import readahead, schema, terms
from .blocks import Anchor, BlockReader, l1_text
from .exchange import exchanges
from .indexer import (
    IndexBusy,
    Progress,
    open_for_search,
    pinned_generation,
    vocab_cached,
    writer,
)
from .model import Hit, SearchResults, TierResult
from .newest import newest_docs, newest_matches, spans
from .query import (
    SHORT_GRAM_LIMIT,
    Query,
    QueryError,
    day_number,
    fts_expression,
    matches,
    parse_date_arg,
    parse_query,
    prefix_range,
    recency_bonus,
    relevance,
    snippet,
)
from .scoring import by_session, calibrated
from .sources import (
    SMALL_TIERS,
    TIERS,
    TYPES_BY_TIER,
    Doc,
    SourceFile,
    discover,
    docs_of,
    iter_source_docs,
    l1_doc,
    newest_first,
    read_source,
)

DEFAULT_LIMIT = 20
CAP = 200
LOCK_WAIT_SECONDS = 0.25
_BATCH = 256
_FIRST_BATCH = 64
SMALL_GRAM_LIMIT = 100
#: A short word whose trigrams' postings run over more bytes than this is looked for in the
#: newest files instead (at 1 GB: ``a`` has 12 MB of them, ``x`` 1.8 MB, ``db`` 77 KB).
SHORT_GRAM_BYTES = 4_000_000
#: The same for the small index, whose docs are walked newest first from ``docs`` itself: past
#: this, a MATCH of the word's trigrams costs more than reading the newest docs (at 1 GB, ``l``:
#: 340 KB of postings, 18 ms against 4; ``to``: 105 KB, 7 against 6).
SMALL_GRAM_BYTES = 200_000
_TRIGRAMS = {"small": "fts_small", **schema.BIG_FTS}
#: What the small index matched, per MATCH expression (see :func:`_small_matches`), kept for one search.
SmallMatches = dict[str | None, list[tuple[int, str]]]


if TYPE_CHECKING:
    from typing import TypedDict, Unpack

    class FilterOptions(TypedDict, total=False):
        """The options :func:`search` and :func:`scan_search` share, checked by :func:`make_filters`."""

        tiers: Iterable[str] | None  # default: memory, l3 and l2, and l1 when deep
        types: Iterable[str] | None  # default: every type
        since: str | None  # YYYY-MM-DD, inclusive
        until: str | None
        limit: int  # hits per tier (default DEFAULT_LIMIT, at most cap)
        cap: int  # matches ranked per tier (default CAP)


class Filters(NamedTuple):
    tiers: tuple[str, ...]
    types: frozenset[str] | None
    since: str | None
    until: str | None
    limit: int
    cap: int

    def tier_types(self, tier: str) -> bool:
        return self.types is None or bool(self.types & set(TYPES_BY_TIER[tier]))

    def keep(self, doc: Doc) -> bool:
        if self.types is not None and doc.type not in self.types:
            return False
        if self.since or self.until:
            day = (doc.date or "")[:10]
            if len(day) < 10:
                return False
            if self.since and day < self.since:
                return False
            if self.until and day > self.until:
                return False
        return True


def make_filters(deep: bool | None, **options: Unpack[FilterOptions]) -> Filters:
    """Validate the options; QueryError names the bad one."""
    tiers, types = options.get("tiers"), options.get("types")
    limit, cap = options.get("limit", DEFAULT_LIMIT), options.get("cap", CAP)
    if tiers:
        wanted = {t.strip().lower() for t in tiers if t and t.strip()}
        unknown = wanted - set(TIERS)
        if unknown:
            raise QueryError(f"unknown tier {sorted(unknown)[0]!r} (tiers: {', '.join(TIERS)})")
        chosen = tuple(t for t in TIERS if t in wanted)
    else:
        chosen = TIERS if deep else TIERS[:3]  # None (ranked mode's default) is taken as deep by the caller
    type_set: frozenset[str] | None = None
    if types:
        type_set = frozenset(t.strip().lower() for t in types if t and t.strip())
        known = {t for ts in TYPES_BY_TIER.values() for t in ts}
        unknown_types = type_set - known
        if unknown_types:
            raise QueryError(f"unknown type {sorted(unknown_types)[0]!r} (types: {', '.join(sorted(known))})")
    since_day = parse_date_arg(options.get("since"), "since")
    until_day = parse_date_arg(options.get("until"), "until")
    if since_day and until_day and since_day > until_day:
        raise QueryError(f"--since {since_day} is after --until {until_day}")
    if limit < 1:
        raise QueryError("--limit must be at least 1")
    return Filters(chosen, type_set, since_day, until_day, min(limit, cap), cap)


# -- ranking (shared) -------------------------------------------------------------------


def rank(tier: str, docs: list[Doc], query: Query, filters: Filters, more: bool) -> TierResult:
    newest = max((d for d in (day_number(doc.date) for doc in docs) if d is not None), default=None)
    scored: list[tuple[float, int, Doc]] = []
    for doc in docs:
        day = day_number(doc.date)
        score = relevance(doc.body.lower(), query.terms) + recency_bonus(day, newest)
        scored.append((score, day or 0, doc))
    scored.sort(key=lambda s: (-s[0], -s[1], s[2].file, _loc_key(s[2].loc)))
    hits = tuple(_hit(doc, score, query) for score, _day, doc in scored[: filters.limit])
    return TierResult(tier=tier, hits=hits, total=len(docs), more=more)


def _loc_key(loc: str) -> tuple[int, str]:
    return (int(loc), "") if loc.isdigit() else (0, loc)


def _hit(doc: Doc, score: float, query: Query) -> Hit:
    text, spans = snippet(doc.body, query.terms)
    return ranked.hit_of(doc, score, text, spans, 1.0)  # exact mode: every term occurs in the entry


def _wanted(doc: Doc, query: Query, filters: Filters) -> bool:
    return filters.keep(doc) and matches(doc.body.lower(), query.terms)


# -- the full scan ----------------------------------------------------------------------


def _scan_tier(
    paths: StorePaths, newest: Iterable[SourceFile], tier: str, query: Query, filters: Filters
) -> TierResult:
    """The tier's matches, newest file first (``newest``: the tier's files in that order), one
    file at a time, until more than ``cap`` are found.

    The newest ``cap`` matches are the ones ranked (as through the index), so older files
    need not be read once they are known; memory holds one file's matches, at most cap + 1.
    """
    found: list[Doc] = []
    anchor = Anchor(query)
    for source in newest:
        want = filters.cap + 1 - len(found)
        if source.tier == "l1":  # from its last line back: a common word's newest matches are near the end
            lines = _l1_backwards(paths, source, anchor)
            found.extend(islice((doc for doc in lines if _wanted(doc, query, filters)), want))
        else:
            matched: deque[Doc] = deque(maxlen=want)
            matched.extend(doc for doc in iter_source_docs(paths, source) if _wanted(doc, query, filters))
            found.extend(reversed(matched))
        if len(found) > filters.cap:
            break
    more = len(found) > filters.cap
    found = found[: filters.cap]
    found.reverse()  # oldest first
    return rank(tier, found, query, filters, more)


def _l1_backwards(paths: StorePaths, source: SourceFile, anchor: Anchor) -> Iterator[Doc]:
    """A session's docs from its last line to its first (each with its line number), as
    :func:`iter_source_docs` gives them forwards; lines the anchor rules out are not parsed."""
    data = read_source(paths, source)
    if not data:
        return
    fallback, session = name_date(source.name), l1_session(source.name)
    end = len(data) - 1 if data.endswith(b"\n") else len(data)  # where the last line ends
    number = data.count(b"\n", 0, end) + 1
    while True:
        start = data.rfind(b"\n", 0, end) + 1
        piece = data[start:end]
        if anchor.may_match(l1_text(piece)):
            doc = l1_doc(source.rel, fallback, session, start, number, piece)
            if doc is not None:
                yield doc
        if start == 0:
            return
        end, number = start - 1, number - 1


def scan_search(
    paths: StorePaths, query: str, *, deep: bool = False, **options: Unpack[FilterOptions]
) -> SearchResults:
    """Search by reading every file: no index involved (the options as :func:`search` takes them)."""
    return _scan(paths, parse_query(query), make_filters(deep, **options), ())


def _scan(paths: StorePaths, parsed: Query, filters: Filters, warnings: tuple[str, ...]) -> SearchResults:
    if not paths.root.is_dir():
        return _empty(parsed, filters, "scan", (*warnings, f"no memory store at {paths.root}"))
    sources = discover(paths)
    results = tuple(
        _scan_tier(paths, reversed([s for s in sources if s.tier == tier]), tier, parsed, filters)
        if filters.tier_types(tier)
        else TierResult(tier, (), 0)
        for tier in filters.tiers
    )
    return SearchResults(parsed.text, parsed.terms, _lined(results, paths.root), "scan", warnings)


def _lined(tiers: Iterable[TierResult], base: Path) -> tuple[TierResult, ...]:
    """The tiers with the lines of their hits counted (once per file, for the hits returned only)."""
    tiers = tuple(tiers)
    lined = iter(ranked.with_lines([hit for tier in tiers for hit in tier.hits], base))
    return tuple(tier._replace(hits=tuple(next(lined) for _hit in tier.hits)) for tier in tiers)


def _empty(
    parsed: Query, filters: Filters, source: str, warnings: tuple[str, ...], exact: bool = True
) -> SearchResults:
    return SearchResults(
        parsed.text,
        parsed.terms,
        tuple(TierResult(t, (), 0) for t in filters.tiers),
        source,
        warnings,
        "exact" if exact else "ranked",
    )


# -- through the index ------------------------------------------------------------------


def _index_big_tier(
    conn: sqlite3.Connection, reader: BlockReader, tier: str, query: Query, filters: Filters, expr: str
) -> TierResult:
    table = schema.BIG_FTS[tier]
    cur = conn.execute(
        f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC",
        (expr,),
    )
    found: list[Doc] = []
    seen: set[tuple[int, str]] = set()
    while len(found) <= filters.cap:
        batch = cur.fetchmany(_BATCH)
        if not batch:
            break
        for (rowid,) in batch:
            src = rowid >> schema.OFFSET_BITS
            for loc, doc in reversed(reader.block(rowid)):  # newest first, like the rowids
                key = (src, loc)
                if key in seen:
                    continue
                seen.add(key)
                if doc is not None and _wanted(doc, query, filters):
                    found.append(doc)
            if len(found) > filters.cap:
                break
    cur.close()
    more = len(found) > filters.cap
    found = found[: filters.cap]
    found.reverse()  # oldest first, as the scan collects them
    # The scan knows lines; the search counts them for the hits it returns (_lined).
    found = [doc._replace(line=None) for doc in found]
    return rank(tier, found, query, filters, more)


def _index_small_tier(
    conn: sqlite3.Connection,
    tier: str,
    query: Query,
    filters: Filters,
    expr: str | None,
    matched: SmallMatches,
) -> TierResult:
    """The tier's newest ``cap`` matches, ranked. Walked lazily by :func:`newest.newest_matches`
    where it can; else ``matched`` keeps what the small index's match gave (per expression)
    for the other small tier."""
    found: list[Doc] = []
    ids = newest_docs(conn, tier) if expr is None else newest_matches(conn, tier, expr)
    if ids is None:
        known = matched.get(expr)
        if known is None:
            known = matched[expr] = _small_matches(conn, expr)
        ids = iter([rowid for rowid, of_tier in known if of_tier == tier])
    for doc in _small_rows(conn, ids):
        if doc.tier == tier and _wanted(doc, query, filters):
            found.append(doc)
            if len(found) > filters.cap:
                break
    more = len(found) > filters.cap
    found = found[: filters.cap]
    found.reverse()
    return rank(tier, found, query, filters, more)


def _small_matches(conn: sqlite3.Connection, expr: str | None) -> list[tuple[int, str]]:
    """(rowid, tier) of the small tiers' docs (memory, L3) ``expr`` matches (all with None), newest
    first (the scan's order, reversed) within each tier: one walk of the index for both tiers.

    The order is taken on rowids alone, so a caller that stops after ``cap`` matches does not
    sort or read the whole tier's text.
    """
    order = "ORDER BY s.rel DESC, d.rowid DESC"
    if expr is None:
        return conn.execute(
            f"SELECT d.rowid, d.tier FROM docs d JOIN sources s ON s.id = d.src {order}"
        ).fetchall()
    # CROSS JOIN: walk the index's matches, then look each doc up by rowid
    return conn.execute(
        "SELECT d.rowid, d.tier FROM (SELECT rowid AS r FROM fts_small WHERE fts_small MATCH ?) m"
        f" CROSS JOIN docs d ON d.rowid = m.r CROSS JOIN sources s ON s.id = d.src {order}",
        (expr,),
    ).fetchall()


def _small_rows(conn: sqlite3.Connection, ids: Iterator[int]) -> Iterator[Doc]:
    """The docs of ``ids``, in that order, read a batch at a time (a caller may stop early:
    the first batch is small, as a common word's newest matches are mostly what it keeps)."""
    columns = "d.tier, d.type, s.rel, d.loc, d.line, d.date, d.title, d.body, d.session"
    size = _FIRST_BATCH
    while chunk := list(islice(ids, size)):
        size = _BATCH
        rows = {
            row[0]: Doc(*row[1:])
            for row in conn.execute(
                f"SELECT d.rowid, {columns} FROM docs d JOIN sources s ON s.id = d.src"
                f" WHERE d.rowid IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        }
        yield from (rows[rowid] for rowid in chunk if rowid in rows)


def _short_grams(conn: sqlite3.Connection, index: str, term: str) -> list[str] | None:
    """The trigrams of an index (``small``, ``l2``, ``l1``) that begin with a one- or two-character term.

    Every text is indexed with a tail (schema.BLOCK_TAIL), so one holding the term holds
    one of these. None when there are too many for the lookup to be worth it: in the
    small index, walking the docs in order beats sorting the matches of a common word.
    """
    limit = SMALL_GRAM_LIMIT if index == "small" else SHORT_GRAM_LIMIT
    low, high = prefix_range(term)

    def walk() -> list[str] | None:
        # read from the index's term pages: fts5vocab would walk every posting of each trigram
        table = _TRIGRAMS[index]
        most = SMALL_GRAM_BYTES if index == "small" else SHORT_GRAM_BYTES
        if terms.postings_bytes(terms.pages(conn, table, low, high + "\x00")) > most:
            return None  # in nearly every text: the newest files hold the newest matches
        found = terms.between(conn, table, low, high + "\x00")
        return None if len(found) > limit else sorted(found)

    return vocab_cached(conn, ("grams", index, term), walk)


def _expression(conn: sqlite3.Connection, index: str, query: Query) -> str | None | bool:
    """The MATCH expression for an index (``small``, ``l2``, ``l1``); False when nothing in it
    can match, None when it cannot narrow the query (its short words are everywhere)."""
    short: list[list[str]] = []
    for term in query.short_terms:
        grams = _short_grams(conn, index, term)
        if grams == []:
            return False
        if grams is not None:
            short.append(grams)
    return fts_expression(query, short)


def _index_search(
    paths: StorePaths,
    conn: sqlite3.Connection,
    query: Query,
    filters: Filters,
    small_matched: SmallMatches | None = None,
) -> tuple[TierResult, ...]:
    reader = BlockReader(paths, conn, query)
    small: str | None | bool = None
    small_known = False
    small_matched = {} if small_matched is None else small_matched
    out: list[TierResult] = []
    try:
        for tier in filters.tiers:
            if not filters.tier_types(tier):
                out.append(TierResult(tier, (), 0))
                continue
            if tier in SMALL_TIERS:
                if not small_known:  # one index for both small tiers
                    small, small_known = _expression(conn, "small", query), True
                if small is False:
                    out.append(TierResult(tier, (), 0))
                else:  # None: the tier is walked whole (a few MB, in the database)
                    expr_small = small if isinstance(small, str) else None
                    out.append(_index_small_tier(conn, tier, query, filters, expr_small, small_matched))
                continue
            expr = _expression(conn, tier, query)
            if expr is False:
                out.append(TierResult(tier, (), 0))
            elif isinstance(expr, str):
                out.append(_index_big_tier(conn, reader, tier, query, filters, expr))
            else:  # only words found nearly everywhere: the newest files hold the newest matches
                out.append(_scan_tier(paths, newest_first(paths, tier), tier, query, filters))
    finally:
        reader.close()
    return tuple(out)


def search(
    paths: StorePaths,
    query: str,
    *,
    deep: bool | None = None,
    refresh: bool = True,
    lock_wait: float = LOCK_WAIT_SECONDS,
    exact: bool = False,
    progress: Progress | None = None,
    mmap_bytes: int = 0,
    **options: Unpack[FilterOptions],
) -> SearchResults:
    """Search the store: ranked by default, every word as a substring with ``exact`` (or a query
    that is one ``"quoted phrase"``).

    Ranked mode reads every tier unless ``deep`` is False or ``tiers`` says otherwise;
    exact mode reads memory, L3 and L2, and L1 with ``deep``. Raises QueryError for an
    unusable query or option. Never raises for the index: a missing store gives no hits
    and a warning; a busy or broken index, an answer from reading the files.
    ``progress(bytes done, bytes total, file)`` follows the indexing a search does first
    (a first build); while another process builds, ``indexer.build_progress`` tells how far.
    ``mmap_bytes``: see :func:`indexer.open_for_search` (a one-shot command's choice).
    """
    exact = exact or is_one_phrase(query)
    parsed = parse_query(query)
    filters = make_filters(deep if exact or deep is not None else True, **options)
    if not paths.root.is_dir():
        return _empty(parsed, filters, "index", (f"no memory store at {paths.root}",), exact)
    try:
        # What changed is indexed first under the single-writer lock; while another process
        # writes, the index is read as last committed (WAL), so searches never queue behind it.
        with open_for_search(
            paths,
            filters.tiers,
            refresh=refresh,
            lock_wait=lock_wait,
            progress=progress,
            mmap_bytes=mmap_bytes,
        ) as (conn, notes):
            if exact:
                tiers_out = _lined(_index_search(paths, conn, parsed, filters), paths.root)
                return SearchResults(parsed.text, parsed.terms, tiers_out, "index", tuple(notes))
            return _ranked_search(paths, conn, parsed, filters, tuple(notes))
    except IndexBusy as exc:
        return _fallback(paths, parsed, filters, f"{exc}: answered by reading the files", exact)
    except (sqlite3.Error, schema.CorruptIndex) as exc:
        warning = f"search index unavailable ({exc}): answered by reading the files"
        if isinstance(exc, sqlite3.DatabaseError) and schema.is_corruption(exc):
            try:
                with writer(paths, 0.5):
                    warning = schema.move_aside(paths.search_db) + " on the next search"
            except IndexBusy:
                pass
        return _fallback(paths, parsed, filters, warning, exact)
    except StoreLinkError:
        raise  # a link met where the search reads: refused, as a store holding one is
    except OSError as exc:
        warning = f"search index unavailable ({exc}): answered by reading the files"
        return _fallback(paths, parsed, filters, warning, exact)


def is_one_phrase(query: str) -> bool:
    """Whether the query is one ``"quoted phrase"`` and nothing else: asked for as it stands (exact
    mode). Quotes inside a question (``What did she take away from "Becoming Nicole"?``) are words."""
    text = query.strip()
    return len(text) > 2 and text[0] == '"' and text[-1] == '"' and '"' not in text[1:-1]


def _fallback(paths: StorePaths, parsed: Query, filters: Filters, warning: str, exact: bool) -> SearchResults:
    if exact:
        return _scan(paths, parsed, filters, (warning,))
    return _ranked_scan(paths, parsed, filters, (warning,))


# -- ranked ---------------------------------------------------------------------------------


def _ranked_search(
    paths: StorePaths, conn: sqlite3.Connection, parsed: Query, filters: Filters, notes: tuple[str, ...]
) -> SearchResults:
    query = ranked.parse_ranked(parsed.text)
    reader = ranked.DocReader(paths, conn)
    filtered = filters.types is not None or bool(filters.since or filters.until)
    out: list[TierResult] = []
    known = False
    small_matched: SmallMatches = {}  # the trigram channel's, shared by memory and L3
    try:
        for tier in filters.tiers:
            if not filters.tier_types(tier):
                out.append(TierResult(tier, (), 0))
                continue
            items, tier_known = ranked.rank_tier(conn, reader, tier, query, filters.keep, filtered)
            known = known or tier_known
            hits = _tier_hits(conn, reader, tier, query, items, filters.limit)
            if query.spaceless:
                hits = _fuse_substrings(paths, conn, tier, query, filters, hits, small_matched)
            out.append(TierResult(tier, tuple(hits), len(items), more=len(items) > len(hits)))
        suggested: tuple[str, ...] = ()
        if not any(t.hits for t in out) and not known:
            indexes = sorted({"small" if t in SMALL_TIERS else t for t in filters.tiers})
            from .suggest import suggestions  # for an empty answer only

            suggested = tuple(suggestions(reader, query, indexes))
    finally:
        reader.close()
    return SearchResults(
        parsed.text, query.terms, _lined(out, paths.root), "index", notes, "ranked", suggested
    )


def _tier_hits(
    conn: sqlite3.Connection,
    reader: ranked.DocReader,
    tier: str,
    query: ranked.RankedQuery,
    items: list[ranked.Ranked],
    limit: int,
) -> list[Hit]:
    """A tier's best ``limit`` hits, their confidences calibrated; in L1 each hit is an exchange
    (the turns around it come with it, see :mod:`.exchange`), ranked with its session
    (:func:`.scoring.by_session`)."""
    if tier == "l1" and not query.spaceless:
        found = exchanges(conn, reader, [(item.rowid, item) for item in by_session(items)], limit)
        own = {item.rowid: item.score for item in items}
        best = calibrated([x.item for x in found], [own[x.rowid] for x in found])
        return [ranked.make_hit(item, query, x.docs) for item, x in zip(best, found, strict=True)]
    return [ranked.make_hit(item, query) for item in calibrated(items[: max(2, limit)])[:limit]]


def _fuse_substrings(
    paths: StorePaths,
    conn: sqlite3.Connection,
    tier: str,
    query: ranked.RankedQuery,
    filters: Filters,
    hits: list[Hit],
    small_matched: SmallMatches,
) -> list[Hit]:
    """The word channel's hits fused (reciprocal rank) with the trigram channel's for the spaceless words."""
    sub_query = Query(query.text, query.spaceless)
    # the newest matches the fusion can use: a few times the hits shown, not the exact mode's CAP
    one = filters._replace(tiers=(tier,), cap=min(filters.cap, max(ranked.CANDIDATES, 3 * filters.limit)))
    found = _index_search(paths, conn, sub_query, one, small_matched)[0].hits
    share = len(query.spaceless) / max(1, len(query.groups))
    conf = ranked.confidence(query, share)
    substring = [
        h._replace(confidence=max(conf, h.confidence if h.id in {x.id for x in hits} else 0.0)) for h in found
    ]
    scores: dict[str, float] = {}
    best: dict[str, Hit] = {}
    for channel in (hits, substring):
        for rank_, hit in enumerate(channel):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (ranked.RRF_K + rank_ + 1)
            if hit.id not in best or hit.confidence > best[hit.id].confidence:
                best[hit.id] = hit
    order = sorted(scores, key=lambda k: -scores[k])[: filters.limit]
    return [best[k]._replace(score=round(scores[k] * 1000, 4)) for k in order]


def _ranked_scan(
    paths: StorePaths, parsed: Query, filters: Filters, warnings: tuple[str, ...]
) -> SearchResults:
    """Ranked mode without the index: every doc read, scored in Python by the same coverage and tf."""
    query = ranked.parse_ranked(parsed.text)
    if not paths.root.is_dir():
        return _empty(parsed, filters, "scan", (*warnings, f"no memory store at {paths.root}"), False)
    sources = discover(paths)
    out: list[TierResult] = []
    for tier in filters.tiers:
        docs = (
            [d for s in sources if s.tier == tier for d in iter_source_docs(paths, s) if filters.keep(d)]
            if filters.tier_types(tier)
            else []
        )
        items = ranked.scan_rank(docs, query)
        hits = tuple(
            ranked.make_hit(item, query)
            for item in calibrated(items[: max(2, filters.limit)])[: filters.limit]
        )
        out.append(TierResult(tier, hits, len(items), more=len(items) > len(hits)))
    return SearchResults(parsed.text, query.terms, _lined(out, paths.root), "scan", warnings, "ranked")


#: What every keystroke may read anywhere in the index, asked of the OS in :func:`warm_up`: each
#: scored row's length (BM25), the term pages of every index, and the small tiers whole (~100 MB
#: at 1 GB; the big tiers' postings, 1.8 GB, are read as the words typed need them).
READ_AHEAD = (
    *(f"{table}_docsize" for table in schema.WORDS.values()),
    *(f"{table}_idx" for table in (*schema.WORDS.values(), "fts_small", *schema.BIG_FTS.values())),
    "sources",
    "docs_src",
    "docs",
    "fts_small_data",
    "words_small_data",
    f"{schema.TITLES}_docsize",
    f"{schema.TITLES}_idx",
)


#: The newest files of each big tier asked of the OS by the warm-up: a word nearly everywhere
#: (exact mode's one-letter keys) is looked for in the newest 1–2 sessions and 1–5 archives.
NEWEST_FILES = {"l1": 2, "l2": 8}


def _newest_files(conn: sqlite3.Connection) -> list[str]:
    """The big tiers' newest indexed files (by name: by date), NEWEST_FILES of each."""
    return [
        rel
        for tier, count in NEWEST_FILES.items()
        for (rel,) in conn.execute(
            "SELECT rel FROM sources WHERE tier=? ORDER BY rel DESC LIMIT ?", (tier, count)
        )
    ]


def warm_up(paths: StorePaths, deep: bool) -> None:
    """What an interactive search's first keystrokes need, read once (nothing is written): the
    index opened and its pages in the OS cache (a throwaway search), the small tiers' spans
    that exact mode and words without spaces walk (:func:`newest.spans`), and the tables every
    keystroke reads anywhere in the index and the newest files asked of the OS (:mod:`.readahead`:
    a cold cache would make each key wait for them page by page)."""
    search(paths, "memkeeper", deep=deep, limit=1, refresh=False)
    conn = schema.connect_readonly(paths.search_db, LOCK_WAIT_SECONDS)
    if conn is None:
        return
    try:
        spans(conn, "l3")
        readahead.prefetch_tables(conn, paths.search_db, READ_AHEAD)
        readahead.files((paths.root / rel, 0) for rel in _newest_files(conn))
    except (sqlite3.Error, OSError):
        pass  # the search itself will say what is wrong
    finally:
        conn.close()


def search_readonly(
    paths: StorePaths,
    query: str,
    *,
    tiers: Iterable[str] | None = None,
    limit: int = DEFAULT_LIMIT,
    timeout: float = 0.05,
) -> SearchResults | None:
    """The default (ranked) search on the index as it stands: opened read-only, never refreshed or repaired.

    For callers that must never wait or write (the per-prompt recall of the hook): None
    when the index is absent, locked for more than ``timeout`` seconds, of another
    schema or corrupt, instead of the full scan :func:`search` falls back on.
    """
    try:
        parsed = parse_query(query)
        filters = make_filters(True, tiers=tiers, limit=limit)
    except QueryError:
        return None
    conn = schema.connect_readonly(paths.search_db, timeout)
    if conn is None:
        return None
    try:
        return _ranked_search(paths, conn, parsed, filters, ())
    except (sqlite3.Error, OSError):
        return None
    finally:
        conn.close()


def search_confident(
    paths: StorePaths,
    query: str,
    min_confidence: float,
    *,
    limit: int = 6,
    timeout: float = 0.05,
    conn: sqlite3.Connection | None = None,
    floor: float | None = None,
) -> list[Hit] | None:
    """The ranked hits at or above ``min_confidence`` only, best first, on the index as it stands;
    with ``floor``, a tier holding such a hit also gives its next best hits down to ``floor``
    (per-prompt recall's companions: the answer is often a confident lookup's second hit).

    :func:`search_readonly`'s guarantees (read-only, never refreshed, None when the index
    cannot be read within ``timeout``), for per-prompt recall: each tier re-scores only the
    rows that hold the words a confident hit needs (:func:`ranked.rank_confident`). A
    caller that asks often passes its own :func:`schema.connect_readonly` connection
    (left open). A big tier's hit carries no line number (counting it reads its file up to
    the hit; per-prompt recall names a hit by its id).
    """
    parsed = ranked.parse_ranked(query)
    bar = min_confidence if floor is None else min(floor, min_confidence)
    own = conn is None
    conn = schema.connect_readonly(paths.search_db, timeout) if conn is None else conn
    if conn is None:
        return None
    reader = ranked.DocReader(paths, conn)
    hits: list[Hit] = []
    try:
        with pinned_generation(conn):
            if _names_unknown(conn, query, parsed):
                return []  # the prompt names someone or something this memory never met
            for tier in TIERS:
                items = ranked.rank_confident(conn, reader, tier, parsed, min_confidence)
                if items is None:
                    items = ranked.rank_tier(conn, reader, tier, parsed, lambda _doc: True, False)[0]
                found = _tier_hits(conn, reader, tier, parsed, items, limit)
                if any(h.confidence >= min_confidence for h in found):
                    hits.extend(h for h in found if h.confidence >= bar)
        hits.sort(key=lambda h: (-h.confidence, -h.score))
        return hits[:limit]  # (no line: recall names hits by id)
    except (sqlite3.Error, OSError):
        return None
    finally:
        reader.close()
        if own:
            conn.close()


def _names_unknown(conn: sqlite3.Connection, text: str, query: ranked.RankedQuery) -> bool:
    """Whether the prompt names (a word capitalised inside a sentence: "Rosalind", "Kubernetes")
    something no index holds: then it is not about this memory, however many of its other words
    are (per-prompt recall in an unrelated project)."""
    from .tierstats import tier_stats

    named = {w.lower() for w in _NAME_RE.findall(text)}
    groups = [g for g in query.groups if g.word in named and not g.spaceless]
    if not groups:
        return False
    wanted = query._replace(groups=tuple(groups))
    stats = [tier_stats(conn, index, wanted) for index in schema.WORDS]
    return any(all(s.df.get(g.stem, 0) == 0 for s in stats) for g in groups)


#: A capitalised word that does not begin a sentence (nor follow a quote or a bracket).
_NAME_RE = re.compile(r"(?<=[^\s.!?:;\"'(\[])\s+([A-Z][a-z]+)")


def iter_all_docs(paths: StorePaths) -> Iterator[Doc]:
    """Every doc of the store in tier and file order (for timelines and tests)."""
    for source in discover(paths):
        yield from docs_of(source, read_source(paths, source))
