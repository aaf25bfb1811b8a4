"""The first build's reader: orjson's parser gives the same entries and rows as parse_line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memkeeper.core.basics.fastjson import bulk_parser
from memkeeper.core.search import cutting
from memkeeper.core.search.sources import discover, iter_sections, l1_entry
from memkeeper.core.store.paths import StorePaths
from tests.l1_data import ODD_LINES, store_with_memory, write_l1
from tests.l1_data import l1_entry as make_entry

BULK = bulk_parser()

LINES = [
    *ODD_LINES,
    # integers beyond 64 bits: orjson makes them floats, json keeps them
    b'{"role": "tool", "n": 123456789012345678901234567890}',
    b'{"role": "tool", "input": {"offset": 18446744073709551616, "limit": -9223372036854775809}}',
    b'{"role": "tool", "input": {"offset": 18446744073709551615, "limit": -9223372036854775808}}',
    b'{"ts": 99999999999999999999999, "text": "a big number where no body shows it"}',
    b'{"text": "1e+19 is written here", "n": 1e19}',
    b'{"text": "nan", "n": NaN, "m": -Infinity}',
    b'{"text": "big", "n": 1e400}',
    b'{"text": "lone \\ud800 surrogate"}',
    b'{"text": "pair \\ud83d\\ude00 and \\u0000"}',
    b'{"n": [0.1, 5e-324, 1.7976931348623157e308, 2.2250738585072014e-308, -0.0, 1E2, 1e16]}',
    b'{"text": "a", "text": "b", "other": "c"}',
    b'{"text": "tab\tinside"}',
]


@pytest.mark.parametrize("raw", LINES)
def test_a_line_reads_the_same_through_the_bulk_parser(raw: bytes) -> None:
    assert _same(l1_entry(raw, BULK), l1_entry(raw))


def _same(fast: tuple[object, str], slow: tuple[object, str]) -> bool:
    """The same body, the same kind of value and the same text fields (a bookkeeping key's
    number beyond 64 bits may come as a float: see sources.l1_entry)."""
    (a, a_body), (b, b_body) = fast, slow
    if a_body != b_body or type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and _texts(a) == _texts(b)
    return json.dumps(a, default=repr) == json.dumps(b, default=repr)


def _texts(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if isinstance(v, (str, bool)) or v is None}


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
)


@pytest.mark.slow  # over 10 s on two busy cores: left out of the quick subset
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.sampled_from(["role", "ts", "text", "output", "input", "n", "result"]), _VALUES),
    st.booleans(),
)
def test_any_json_object_reads_the_same_through_the_bulk_parser(
    value: dict[str, Any], ascii_only: bool
) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    assert _same(l1_entry(raw, BULK), l1_entry(raw))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.from_regex(r"\A-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,3})?\Z", fullmatch=True),
)
def test_number_literals_read_the_same_through_the_bulk_parser(literal: str) -> None:
    raw = b'{"text": "x", "n": %s, "in": {"m": [%s]}}' % (literal.encode(), literal.encode())
    assert _same(l1_entry(raw, BULK), l1_entry(raw))


def _store(tmp_path: Path) -> StorePaths:
    paths = store_with_memory(tmp_path / "proj", "# Memory\n")
    long = "The quick rotateMemory() walk over the archive writer " * 40  # blocks of 8 KB fill up
    entries = [
        make_entry(i % 60, "user" if i % 7 == 0 else "assistant", text=f"{long} {i}") for i in range(60)
    ]
    entries.append({"role": "tool", "name": "Read", "input": {"offset": 2**70, "path": "a e+b"}})
    write_l1(paths, "2026-11-20_100000_aaaa1111.l1.jsonl", entries)
    sessions = paths.sessions
    # an open tail (a last line without its newline, whole) and a tail still being written
    (sessions / "2026-11-21_100000_bbbb2222.l1.jsonl").write_bytes(
        b'{"role": "user", "text": "first"}\n{"role": "assistant", "text": "whole, no newline"}'
    )
    (sessions / "2026-11-22_100000_cccc3333.l1.jsonl").write_bytes(
        b'{"role": "user", "text": "first"}\n\n[1]\n{"role": "assistant", "text": "being wri'
    )
    return paths


def test_a_file_is_cut_the_same_through_the_bulk_parser(tmp_path: Path) -> None:
    paths = _store(tmp_path)
    sources = [s for s in discover(paths) if s.tier == "l1"]
    assert len(sources) == 3
    for source in sources:
        slow = cutting.prepare(paths, source, None)
        fast = cutting.prepare(paths, source, None, BULK)
        for slot in cutting.Work.__slots__:
            assert getattr(fast, slot) == getattr(slow, slot), (source.rel, slot)
    first = cutting.prepare(paths, sources[0], None)
    assert len(first.blocks) > 1 and len(first.words) == 61 and first.docs == 61
    open_tail = cutting.prepare(paths, sources[1], None, BULK)
    assert (open_tail.next_line, open_tail.open_tail, open_tail.docs) == (2, 1, 2)
    cut = cutting.prepare(paths, sources[2], None, BULK)
    assert (cut.next_line, cut.open_tail, cut.docs) == (4, 0, 1)
    assert cut.end == len(b'{"role": "user", "text": "first"}\n\n[1]\n')


def _sections_line_by_line(data: bytes) -> list[tuple[int, int, bytes]]:
    """The sections as they were cut before: each line looked at in turn."""
    out: list[tuple[int, int, bytes]] = []
    start, start_line, pos, line_no, n = 0, 1, 0, 1, len(data)
    while pos <= n:
        nl = data.find(b"\n", pos)
        if data.startswith(b"## ", pos) and pos > start:
            if data[start:pos].strip():
                out.append((start, start_line, data[start:pos]))
            start, start_line = pos, line_no
        if nl < 0:
            break
        pos, line_no = nl + 1, line_no + 1
    if data[start:].strip():
        out.append((start, start_line, data[start:]))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(["## ", "## 2026-01-02 x", "#", " ", "\n", "\r\n", "text", "##", "검색"]), max_size=40
    )
)
def test_sections_are_cut_as_line_by_line(pieces: list[str]) -> None:
    data = "".join(pieces).encode()
    assert list(iter_sections(data)) == _sections_line_by_line(data)
