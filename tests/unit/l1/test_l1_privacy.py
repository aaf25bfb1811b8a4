"""Privacy: private spans and secrets never reach the store."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.core.capture import l1
from memkeeper.core.redaction.redact import redact, redact_obj, redact_private, redact_secrets
from memkeeper.core.store.paths import StorePaths
from tests.planted import store_text, write_transcript

# --- private spans -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Before\n<private>\nSecret\nData\n</private>\nAfter", "Before\n[PRIVATE]\nAfter"),
        ("a <PRIVATE>x</Private> b", "a [PRIVATE] b"),
        ("a <private/>x</private> b", "a [PRIVATE] b"),
        ("a <private />x</private> b", "a [PRIVATE] b"),
        ("a [private]x[/private] b", "a [PRIVATE] b"),
        ("a [Private]x[/PRIVATE] b", "a [PRIVATE] b"),
        ("the marker [PRIVATE] is not a tag", "the marker [PRIVATE] is not a tag"),
        ("a <!-- private -->x<!-- /private --> b", "a [PRIVATE] b"),
        ("a <!--private-->x<!--/private--> b", "a [PRIVATE] b"),
        ("one <private>1</private> two <private>2</private> three", "one [PRIVATE] two [PRIVATE] three"),
        ("a <private>x <private>y</private> z</private> b", "a [PRIVATE] b"),  # nesting: outer span
        ("a <private></private> b <private>  \n </private> c", "a  b  c"),  # empty: no marker
        ("keep this <private>but the rest\nof the message is hidden", "keep this [PRIVATE]"),
        ("a stray </private> close", "a stray </private> close"),
        ("use `<private>` to hide text", "use `<private>` to hide text"),
        ("no tags here", "no tags here"),
        # in inline code a tag is literal; an unclosed tag fails closed
        ("use `a <private> tag` to hide text", "use `a <private> tag` to hide text"),
        ("`a` <private>secret</private> `b`", "`a` [PRIVATE] `b`"),
        ("say `<private>` then <private>hidden</private> ok", "say `<private>` then [PRIVATE] ok"),
        ("an unclosed `tick <private>hidden", "an unclosed `tick [PRIVATE]"),
        ("prose <private>never closed\nnext line too", "prose [PRIVATE]"),
    ],
)
def test_private_forms(text: str, expected: str) -> None:
    assert redact_private(text) == expected
    assert redact(text) == expected


def test_tags_inside_code_fences_are_literal() -> None:
    text = "```python\nprint('<private>not actually private</private>')\n```\nthen <private>hidden</private>"
    assert redact(text) == "```python\nprint('<private>not actually private</private>')\n```\nthen [PRIVATE]"
    tilde = "~~~\n[private]literal[/private]\n~~~\n"
    assert redact(tilde) == tilde
    unclosed_open_in_fence = "```\n<private>\n```\nafter"
    assert redact(unclosed_open_in_fence) == unclosed_open_in_fence


def test_an_unclosed_fence_is_not_a_fence() -> None:
    assert redact("```\ncode <private>secret</private> more") == "```\ncode [PRIVATE] more"


def test_secrets_inside_fences_are_still_redacted() -> None:
    text = "```\nexport ANTHROPIC_API_KEY=sk-ant-api03-" + "a" * 40 + "\n```"
    assert "aaaaaaaaaa" not in redact(text)


# --- secrets -------------------------------------------------------------------------

SECRETS = {
    "anthropic": "sk-ant-api03-" + "Ab1_-" * 18,
    "openai": "sk-proj-" + "Zx9" * 20,
    "openai_legacy": "sk-" + "A1b2C3d4" * 6,
    "github_pat": "ghp_" + "A1b2C3" * 6,
    "github_oauth": "gho_" + "Q7w8E9" * 6,
    "github_fine": "github_pat_11ABCDEFG0" + "x_Y" * 20,
    "aws_access_key": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-123456789012-abcdefABCDEF",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_secret_shapes(name: str) -> None:
    secret = SECRETS[name]
    out = redact(f"before {secret} after")
    assert secret not in out and "[REDACTED:" in out
    assert out.startswith("before ") and out.endswith(" after")


def test_secret_kinds_are_named() -> None:
    assert redact(SECRETS["anthropic"]) == "[REDACTED:anthropic]"
    assert redact(SECRETS["openai"]) == "[REDACTED:openai]"
    assert redact(SECRETS["github_pat"]) == "[REDACTED:github]"
    assert redact(SECRETS["aws_access_key"]) == "[REDACTED:aws_access_key]"
    assert redact(SECRETS["slack"]) == "[REDACTED:slack]"
    assert redact(SECRETS["jwt"]) == "[REDACTED:jwt]"


def test_private_key_blocks() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nQWERTY\n-----END RSA PRIVATE KEY-----"
    assert redact(f"key:\n{block}\nafter") == "key:\n[REDACTED:private_key]\nafter"
    assert redact("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n(cut)") == "[REDACTED:private_key]"
    public = "-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----"
    assert redact(public) == public


def test_redaction_is_idempotent() -> None:
    text = "password=hunter22 " + SECRETS["anthropic"] + " <private>x</private> [private]y"
    once = redact(text)
    assert redact(once) == once
    joined = "<priv<private></private>ate>SECRETX</private> after"  # an empty span removed forms a tag
    assert redact(joined) == "[PRIVATE] after"


_PIECES = [
    "a",
    " ",
    "<",
    ">",
    "/",
    "[",
    "]",
    "-",
    "!",
    "`",
    "\n",
    "=",
    ":",
    "private",
    "PRIVATE",
    "[PRIVATE]",
    "<private>",
    "</private>",
    "[private]",
    "[/private]",
    "```",
    "password=",
    "x",
]
_PLAIN = ["a", " ", "-", "!", "\n", "=", ":", "private", "PRIVATE", "[PRIVATE]", "x", "<"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_redact_never_fails(text: str) -> None:
    assert isinstance(redact(redact(text)), str)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_PLAIN), max_size=15).map("".join),
    st.lists(st.sampled_from(_PLAIN), max_size=15).map("".join),
    st.lists(st.sampled_from(_PLAIN), max_size=15).map("".join),
    st.booleans(),
)
def test_span_content_never_survives(prefix: str, body: str, suffix: str, closed: bool) -> None:
    text = f"{prefix}<private>{body}SECRETX{body}{'</private>' if closed else ''}{suffix}"
    out = redact(text)
    assert "SECRETX" not in out
    assert out.startswith(prefix)
    assert redact(out) == out


def test_redact_obj_walks_nested_values_not_keys() -> None:
    obj: dict[str, Any] = {
        "password": "x",
        "nested": [{"cmd": "curl -H 'Bearer abcdefghijklmnop123456'"}, 3, None],
        "text": "<private>p</private>",
    }
    out = redact_obj(obj)
    assert out == {
        "password": "x",
        "nested": [{"cmd": "curl -H 'Bearer [REDACTED:bearer]'"}, 3, None],
        "text": "[PRIVATE]",
    }
    assert redact_secrets("nothing") == "nothing"


# --- end to end: a session full of planted secrets -------------------------------------

PLANTED_PRIVATE = ["PRIVATE-ALPHA-7731", "PRIVATE-BRAVO-0419", "PRIVATE-CHARLIE-5123", "PRIVATE-DELTA-8842"]


def _ts(n: int) -> str:
    return f"2026-05-01T10:{n // 60:02d}:{n % 60:02d}.000Z"


def _planted_session(folder: Path, session: str) -> Path:
    s = SECRETS
    records: list[dict[str, Any]] = []

    def user(content: Any, **extra: Any) -> None:
        records.append(
            {
                "type": "user",
                "timestamp": _ts(len(records)),
                "sessionId": session,
                "message": {"role": "user", "content": content},
                **extra,
            }
        )

    def assistant(*blocks: dict[str, Any]) -> None:
        records.append(
            {
                "type": "assistant",
                "timestamp": _ts(len(records)),
                "sessionId": session,
                "message": {"role": "assistant", "model": "m", "content": list(blocks)},
            }
        )

    user(f"my key is {s['anthropic']} and <private>{PLANTED_PRIVATE[0]}</private> ok")
    user(f"[private]{PLANTED_PRIVATE[1]}[/private] and password=hunter2hunter2 and {s['github_pat']}")
    user(f"unclosed <private> {PLANTED_PRIVATE[2]} {s['slack']}")
    user(f"<!-- private -->{PLANTED_PRIVATE[3]}<!-- /private --> {s['jwt']}", isMeta=False)
    padding = "echo " + "x" * 185
    assistant(
        {"type": "text", "text": f"Using {s['openai']} now"},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": f"{padding} {s['anthropic']}"}},
        {
            "type": "tool_use",
            "id": "t2",
            "name": "Edit",
            "input": {
                "file_path": "/p/.env",
                "old_string": f"KEY={s['openai_legacy']}",
                "new_string": f"KEY={s['github_fine']}",
            },
        },
        {
            "type": "tool_use",
            "id": "t3",
            "name": "Write",
            "input": {"file_path": "/p/k", "content": s["aws_access_key"]},
        },
        {
            "type": "tool_use",
            "id": "t4",
            "name": "Grep",
            "input": {"pattern": s["github_oauth"], "path": "/p"},
        },
        {
            "type": "tool_use",
            "id": "t5",
            "name": "WebFetch",
            "input": {"url": f"https://x.test/?token={s['slack']}", "prompt": "read"},
        },
    )
    key_block = (
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBrandomkeymaterial0123456789\n-----END EC PRIVATE KEY-----"
    )
    user(
        [
            {"type": "tool_result", "tool_use_id": "t1", "content": f"{'y' * 150} {s['anthropic']}"},
            {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": key_block}]},
            {
                "type": "tool_result",
                "tool_use_id": "t3",
                "content": f"aws_secret_access_key = {'Q' * 40}",
                "is_error": True,
            },
            {"type": "tool_result", "tool_use_id": "t4", "content": {"token": s["github_pat"]}},
            {"type": "tool_result", "tool_use_id": "t5", "content": "api_key: sekr1tvalue99"},
        ]
    )
    user(f"<command-name>/deploy</command-name><command-args>--token={s['openai']}</command-args>")
    agent = {
        "timestamp": _ts(99),
        "message": {
            "role": "user",
            "content": f"use {s['anthropic']} <private>{PLANTED_PRIVATE[0]}</private>",
        },
    }
    return write_transcript(folder, session, records, "secret1", agent)


def _fragments(secret: str) -> list[str]:
    """The secret and every 12-character piece of its unique tail (a cut secret leaks too)."""
    body = secret.split("_", 1)[-1] if secret.startswith(("ghp_", "gho_")) else secret
    tail = body[8:] if len(body) > 20 else body
    return [secret] + [tail[i : i + 12] for i in range(0, max(1, len(tail) - 11), 6)]


def test_planted_secrets_never_reach_the_store(store: StorePaths, tmp_path: Path) -> None:
    folder = tmp_path / "transcripts"
    folder.mkdir()
    transcript = _planted_session(folder, "5ec12e75-0000-4000-8000-000000000000")
    result = l1.refine_transcript(store, transcript)
    assert result.new_entries >= 15
    assert l1.refine_transcript(store, transcript).new_entries == 0
    old = time.time() - 90 * 86400
    assert result.l1_path is not None
    os.utime(result.l1_path, (old, old))
    l1.compress(store, 30)  # gzip output is scanned too (decompressed)
    everything = store_text(store.root)
    for name, secret in SECRETS.items():
        for piece in _fragments(secret):
            assert piece not in everything, f"{name} leaked: {piece}"
    for planted in PLANTED_PRIVATE:
        assert planted not in everything
    for other in ("hunter2hunter2", "sekr1tvalue99", "randomkeymaterial", "Q" * 20):
        assert other not in everything
    assert "[PRIVATE]" in everything and "[REDACTED:anthropic]" in everything
    texts = [e.get("text") for e in l1.entries_since(store, None) if e["role"] == "user"]
    assert "/deploy --token=[REDACTED:openai]" in texts
