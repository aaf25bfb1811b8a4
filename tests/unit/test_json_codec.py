"""core.fastjson, the one JSON codec, gives what the json package gives with the same settings."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "value",
    [{"a": [1, 2.5, None, True], "b": {"c": 'é\n"q"'}}, [float("nan"), float("inf")], "text", 3, [], {}],
)
def test_fastjson_text_is_json_dumps(value: object) -> None:
    """The search path serialises tool inputs with core.fastjson.text, not the json package."""
    import json

    from memkeeper.core.basics import fastjson

    assert fastjson.text(value) == json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize(
    "line", ['{"a": 1}', '[1, "x"] tail', "nul", '"open', "  {}", "{} ", "1e5", "-Infinity"]
)
def test_fastjson_raw_decode_is_the_decoders(line: str) -> None:
    import json

    from memkeeper.core.basics import fastjson

    try:
        expected: object = json.JSONDecoder().raw_decode(line)
    except ValueError:
        expected = ValueError
    try:
        got: object = fastjson.raw_decode(line)
    except ValueError:
        got = ValueError
    if line.startswith(" "):  # raw_decode skips leading whitespace, as json.loads does
        expected = json.JSONDecoder().raw_decode(line, 2)
    assert got == expected
