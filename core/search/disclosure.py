"""Progressive disclosure: from a compact hit to its full entry and its neighbours.

``search`` gives short hits with stable ids and token counts; ``show`` returns the whole
entry behind an id; ``timeline`` the entries just before and after it in the same file
(the same session for L1, the same summary for L3). Both read the files directly, so
they work without the index and always show the current text.
"""

from __future__ import annotations

from ..basics.tokens import estimate_tokens
from ..store.paths import StorePaths
from .model import Entry, Hit, NotFound, Timeline, place_of
from .query import snippet
from .sources import Doc, SourceFile, discover, docs_of, file_hash, parse_id, read_source

DEFAULT_WINDOW = 3


#: How much of an id an error message repeats (an id comes from a caller: it may be anything).
ID_ECHO_CHARS = 80


def _said(hit_id: str) -> str:
    """``hit_id`` as an error message repeats it: quoted, and cut if long."""
    if len(hit_id) <= ID_ECHO_CHARS:
        return repr(hit_id)
    return f"{hit_id[:ID_ECHO_CHARS]!r}… ({len(hit_id)} characters)"


def _locate(paths: StorePaths, hit_id: str) -> tuple[list[Doc], int]:
    parsed = parse_id(hit_id)
    if parsed is None:
        raise NotFound(f"not an entry id: {_said(hit_id)} (ids look like l2-3fa2b9c1d0-1234)")
    tier, fhash, loc = parsed
    source: SourceFile | None = None
    for candidate in discover(paths):
        if candidate.tier == tier and file_hash(candidate.rel) == fhash:
            source = candidate
            break
    if source is None:
        raise NotFound(f"no entry {_said(hit_id)}: its file is gone (try searching again)")
    docs = list(docs_of(source, read_source(paths, source)))
    for i, doc in enumerate(docs):
        if doc.loc == loc:
            return docs, i
    raise NotFound(f"no entry {_said(hit_id)} in {source.rel}: the file changed (try searching again)")


def _entry(doc: Doc) -> Entry:
    return Entry(*place_of(doc, doc.line), text=doc.body, tokens=estimate_tokens(doc.body), raw=doc.raw)


def _compact(doc: Doc) -> Hit:
    text, _spans = snippet(doc.body, ())
    return Hit(*place_of(doc, doc.line), snippet=text, tokens=estimate_tokens(doc.body), score=0.0)


def show(paths: StorePaths, hit_id: str) -> Entry:
    """The full entry behind ``hit_id``; NotFound if it no longer exists."""
    docs, i = _locate(paths, hit_id)
    return _entry(docs[i])


def timeline(
    paths: StorePaths, hit_id: str, before: int = DEFAULT_WINDOW, after: int = DEFAULT_WINDOW
) -> Timeline:
    """The entry and up to ``before``/``after`` compact neighbours in the same file."""
    docs, i = _locate(paths, hit_id)
    before = max(0, before)
    after = max(0, after)
    return Timeline(
        anchor=_entry(docs[i]),
        before=tuple(_compact(d) for d in docs[max(0, i - before) : i]),
        after=tuple(_compact(d) for d in docs[i + 1 : i + 1 + after]),
    )
