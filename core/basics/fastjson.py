"""The one JSON codec: the standard library's ``json`` with the settings the store's files use.

:func:`loads`, :func:`raw_decode`, :func:`dumps` (compact, UTF-8 kept) and :func:`text` (json's
default separators) are ``json``'s own functions; :func:`json_lines` reads our append-only
JSONL logs, skipping a torn line. :func:`bulk_parser` is the first index build's line parser
(orjson, measured twice as fast on the store's L1 lines); nothing else uses orjson.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()

#: ``json.loads`` itself; ValueError when the text is not one JSON value (or not UTF-8). (Its
#: value is typed as json's: this module stays free of ``typing``, which the hook path does not
#: load, see docs/hook-path.md.)
loads = json.loads


def raw_decode(text: str, start: int = 0) -> tuple[object, int]:
    """The JSON value at ``text[start:]`` (after whitespace) and where it ends, as
    ``json.JSONDecoder().raw_decode`` gives it; ValueError when there is none."""
    while start < len(text) and text[start] in _WHITESPACE:
        start += 1
    return _DECODER.raw_decode(text, start)


def dumps(obj: object) -> str:
    """``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def text(obj: object) -> str:
    """``json.dumps(obj, ensure_ascii=False)`` (its default separators ``", "`` and ``": "``)."""
    return json.dumps(obj, ensure_ascii=False)


def json_lines(text: str) -> Iterator[dict[str, object]]:
    """The JSON objects of a JSONL text, one per line; a damaged or non-object line is skipped.

    For logs and copies we append to ourselves, where a torn or foreign line must not stop
    the reader (the writers keep whole lines; a reader never fails on one bad line).
    """
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def bulk_parser() -> Callable[[bytes], object]:
    """The parser of a first index build's reader (``orjson.loads``), to read lines with through
    :func:`memkeeper.core.search.sources.l1_entry`: about twice as fast as ``json`` on L1 lines.

    It raises ValueError for every line it refuses (blank, broken, a BOM, invalid UTF-8, NaN, a
    lone surrogate) and l1_entry then asks ``json`` (its parse_line), so the value is the same
    but for one case: orjson gives an integer beyond 64 bits as a float, where ``json`` keeps
    the int. (orjson's import costs 20 ms: never on the search or hook path.)
    """
    from orjson import loads as orjson_loads

    return orjson_loads
