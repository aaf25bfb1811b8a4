"""Property tests (hypothesis): the carryover tail, the transcript parser, the privacy filter.

Legacy migration's conservation property lives in ``tests/unit/store/test_fdn_migrate.py``.
``RELIABILITY_FUZZ_EXAMPLES`` raises the example counts (the full bench run sets it).
"""

from __future__ import annotations

import io
import json
import math
import os
import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memkeeper.core.basics.tokens import extract_tail_by_tokens
from memkeeper.core.capture.transcript import ParseStats, events_from_record, iter_lines
from memkeeper.core.redaction.redact import redact

EXAMPLES = int(os.environ.get("RELIABILITY_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- the tail


def naive_tail(content: str, target: int) -> str:
    """The spec read literally: the longest run of last lines whose summed cost fits."""
    lines = content.split("\n")

    def cost(part: list[str]) -> int:
        return sum(math.ceil(len((line + "\n").encode("utf-8")) / 4) for line in part)

    best = len(lines)
    for start in range(len(lines) - 1, -1, -1):
        if cost(lines[start:]) > target:
            break
        best = start
    return "\n".join(lines[best:])


lines_text = st.lists(
    st.one_of(st.text(max_size=40), st.sampled_from(["", "## 2026-01-01_1200", "한국어 줄", "x" * 200])),
    max_size=60,
).map("\n".join)


@FUZZ
@given(content=lines_text, target=st.integers(min_value=0, max_value=400))
def test_tail_matches_the_naive_reference(content: str, target: int) -> None:
    tail = extract_tail_by_tokens(content, target)
    assert tail == naive_tail(content, target)
    assert content.endswith(tail)
    assert tail == content or tail == "" or content[: len(content) - len(tail)].endswith("\n")


# --------------------------------------------------------------------------- transcript parser


record = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system", "summary", "tool_use", "progress", "weird"])},
    optional={
        "message": st.fixed_dictionaries(
            {},
            optional={
                "role": st.sampled_from(["user", "assistant"]),
                "content": st.one_of(
                    st.text(max_size=30),
                    st.lists(
                        st.fixed_dictionaries(
                            {
                                "type": st.sampled_from(
                                    ["text", "tool_use", "tool_result", "thinking", "image"]
                                )
                            },
                            optional={
                                "text": st.one_of(st.text(max_size=20), st.integers()),
                                "name": st.text(max_size=8),
                                "input": st.one_of(
                                    st.dictionaries(st.text(max_size=5), st.text(max_size=10), max_size=3),
                                    st.none(),
                                ),
                                "id": st.text(max_size=8),
                                "tool_use_id": st.text(max_size=8),
                                "content": st.one_of(
                                    st.text(max_size=20),
                                    st.none(),
                                    st.lists(
                                        st.dictionaries(st.text(max_size=4), st.text(max_size=5), max_size=2),
                                        max_size=2,
                                    ),
                                ),
                                "is_error": st.booleans(),
                            },
                        ),
                        max_size=4,
                    ),
                    st.none(),
                    st.integers(),
                ),
            },
        ),
        "timestamp": st.one_of(st.text(max_size=25), st.none(), st.integers()),
        "sessionId": st.one_of(st.text(max_size=10), st.none()),
        "isSidechain": st.booleans(),
        "isMeta": st.booleans(),
        "agentId": st.text(max_size=6),
        "subtype": st.sampled_from(["compact_boundary", "other"]),
        "summary": st.text(max_size=20),
        "isCompactSummary": st.booleans(),
    },
)

garbage = st.one_of(
    st.binary(max_size=60).filter(lambda b: b"\n" not in b),
    st.sampled_from(
        [b"{", b"[1,2]", b'"just a string"', b"null", b'{"type": "user", "message": {"content": "cut']
    ),
)


def _is_object_line(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw.decode("utf-8", "replace")), dict)
    except (ValueError, RecursionError):
        return False


@FUZZ
@given(
    lines=st.lists(
        st.one_of(record.map(lambda r: ("ok", json.dumps(r).encode())), garbage.map(lambda g: ("bad", g))),
        max_size=30,
    ),
    tail=st.binary(max_size=30),
)
def test_transcript_parser_never_raises_and_counts_broken_lines(
    lines: list[tuple[str, bytes]], tail: bytes
) -> None:
    data = b"".join(raw + b"\n" for _kind, raw in lines)
    tail = tail.replace(b"\n", b"")
    stats = ParseStats()
    records = []
    for end, rec in iter_lines(io.BytesIO(data + tail), 0, stats):
        assert 0 < end <= len(data) + len(tail)
        records.append(rec)
        for event in events_from_record(rec, end):  # never raises on any shape
            assert isinstance(event.kind, str)
    whole = [raw for _kind, raw in lines if raw.strip()]
    broken = [raw for raw in whole if not _is_object_line(raw.strip())]
    tail_broken = int(bool(tail.strip()) and not _is_object_line(tail.strip()))
    assert stats.broken_lines == len(broken)
    assert len(records) == len(whole) - len(broken) + (1 if tail.strip() and not tail_broken else 0)
    assert stats.partial_tail == bool(tail_broken)
    assert stats.end_offset <= len(data) + len(tail)


# --------------------------------------------------------------------------- privacy filter


ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
token = st.text(alphabet=ALNUM, min_size=24, max_size=40)

secret = st.one_of(
    token.map(lambda t: f"sk-ant-api03-{t}"),
    token.map(lambda t: f"ghp_{t}"),
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", min_size=16, max_size=16).map(lambda t: f"AKIA{t}"),
    token.map(lambda t: f"xoxb-{t}"),
    st.tuples(token, token, token).map(lambda p: f"eyJ{p[0]}.{p[1]}.{p[2]}"),
    token.map(lambda t: f"password={t}"),
    token.map(lambda t: f'api_key: "{t}"'),
    token.map(lambda t: f"Authorization: Bearer {t}"),
    token.map(lambda t: f"-----BEGIN RSA PRIVATE KEY-----\n{t}\n-----END RSA PRIVATE KEY-----"),
)
private_span = st.tuples(
    st.sampled_from(
        [("<private>", "</private>"), ("[private]", "[/private]"), ("<!-- private -->", "<!-- /private -->")]
    ),
    st.text(alphabet=ALNUM + " ", min_size=8, max_size=30),
).map(lambda p: (p[0][0] + "PRIV" + p[1] + p[0][1], "PRIV" + p[1]))

filler = st.text(
    alphabet="abcdefghijklmnoqrsuvwxyz .,:;!?()\n한국어日本", max_size=40
)  # no 'p' or 't': no trigger words
separator = st.sampled_from([" ", "\n", "\t", " (", "; "])


def _secret_value(planted: str) -> str:
    """The part of a planted secret that must not survive (the key name may)."""
    for prefix in ("password=", "api_key: ", "Authorization: Bearer "):
        if planted.startswith(prefix):
            return planted[len(prefix) :].strip('"')
    if planted.startswith("-----BEGIN"):
        return planted.split("\n")[1]
    return planted


@FUZZ
@given(parts=st.lists(st.tuples(filler, separator, secret), min_size=1, max_size=5), end=filler)
def test_planted_secrets_never_survive(parts: list[tuple[str, str, str]], end: str) -> None:
    text = "".join(f"{pad}{sep}{planted}\n" for pad, sep, planted in parts) + end
    out = redact(text)
    for _pad, _sep, planted in parts:
        assert _secret_value(planted) not in out
    assert redact(out) == out  # idempotent


@FUZZ
@given(parts=st.lists(st.tuples(filler, private_span), min_size=1, max_size=4), end=filler)
def test_private_spans_never_survive(parts: list[tuple[str, tuple[str, str]]], end: str) -> None:
    text = "".join(pad + span for pad, (span, _body) in parts) + end
    out = redact(text)
    for _pad, (_span, body) in parts:
        assert body not in out
    assert redact(out) == out


@FUZZ
@given(text=st.text(max_size=200))
def test_redaction_is_idempotent_on_any_text(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@FUZZ
@given(text=filler)
def test_text_without_secrets_is_unchanged(text: str) -> None:
    assume(not re.search(r"private|sk-|eyJ|bearer|pass|secret|token|key", text, re.IGNORECASE))
    assert redact(text) == text
