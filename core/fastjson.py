"""JSON for the hook path without ``import json`` (which imports ``re``: ~4 ms a process).

CPython's C accelerator ``_json`` holds the real scanner and encoder; the ``json``
package only wraps them (and compiles a few regexes while doing so). :func:`loads` and
:func:`dumps` call ``_json`` directly with the same settings ``json`` uses by default,
so the results are identical; without ``_json`` (another Python) they fall back to the
``json`` module. The hook path (counters, hook settings) and the search path (the lines of
L1 sessions, summaries) read and write through it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (hook path)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

_WHITESPACE = " \t\n\r"

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None  # type: ignore[assignment]


class _DecodeContext:
    """The attributes ``_json.make_scanner`` reads from a ``json.JSONDecoder``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


#: One scanner for every call: ``_json``'s scanner keeps no state between calls (json.loads
#: shares one the same way).
_SCAN = None if _json is None else _json.make_scanner(_DecodeContext)  # type: ignore[arg-type]


def _default(obj: Any) -> Any:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def loads(text: str | bytes) -> Any:
    """Like ``json.loads`` for str/bytes (UTF-8); ValueError when it is not one JSON value."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    body = text.strip(_WHITESPACE)
    value, end = raw_decode(body, 0)
    if end != len(body):
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


def raw_decode(text: str, start: int = 0) -> tuple[Any, int]:
    """The JSON value at ``text[start:]`` (after whitespace) and where it ends, as
    ``json.JSONDecoder().raw_decode`` gives it; ValueError when there is none."""
    while start < len(text) and text[start] in _WHITESPACE:
        start += 1
    if _SCAN is None:  # pragma: no cover
        import json

        return json.JSONDecoder().raw_decode(text, start)
    try:
        value, end = _SCAN(text, start)
    except StopIteration as stop:
        raise ValueError(f"not valid JSON at character {stop.value}") from None
    return value, end


def dumps(obj: Any) -> str:
    """Like ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    encode = _json.make_encoder(None, _default, _json.encode_basestring, None, ":", ",", False, False, True)
    return "".join(encode(obj, 0))


def text(obj: Any) -> str:
    """Like ``json.dumps(obj, ensure_ascii=False)`` (its default separators ``", "`` and ``": "``)."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(obj, ensure_ascii=False)
    encode = _json.make_encoder({}, _default, _json.encode_basestring, None, ": ", ", ", False, False, True)
    return "".join(encode(obj, 0))


def json_lines(text: str) -> Iterator[dict[str, Any]]:
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
