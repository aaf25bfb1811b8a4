"""``fastjson`` matches the json module, and ``json_lines`` survives damaged lines."""

from __future__ import annotations

import json

import pytest

from memkeeper.core.basics.fastjson import dumps, json_lines, loads


def test_loads_and_dumps_match_the_json_module() -> None:
    doc = {"a": [1, 2.5, None, True], "한국어": "텍스트", "nested": {"x": "y\n"}}
    assert loads(json.dumps(doc)) == doc
    assert loads(json.dumps(doc).encode()) == doc
    assert json.loads(dumps(doc)) == doc


def test_json_lines_keeps_objects_and_skips_what_is_not_one() -> None:
    text = '{"n": 1}\n\n  {"n": 2}  \n{"n": 3, "torn": tr\n[1, 2]\n"text"\nnot json\n{"n": 4}'
    assert [item["n"] for item in json_lines(text)] == [1, 2, 4]


def test_raw_decode_matches_the_json_decoder() -> None:
    from memkeeper.core.basics.fastjson import raw_decode

    text = 'x: \n {"a": [1, "b"]} tail "s" 7'
    decoder = json.JSONDecoder()
    assert raw_decode(text, 2) == decoder.raw_decode(text, 5) == ({"a": [1, "b"]}, 20)
    assert raw_decode(text, text.index('"s"')) == decoder.raw_decode(text, text.index('"s"')) == ("s", 29)
    assert raw_decode(text, 29) == (7, 31)
    for bad in ("", "   ", "tail", '{"a": '):
        with pytest.raises(ValueError):
            raw_decode(bad)
