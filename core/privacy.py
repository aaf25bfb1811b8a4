"""Redaction of private spans and secrets before anything reaches the store.

``redact(text)`` is applied to every piece of user, assistant and tool text before it is
written to any tier. Two passes, in this order:

1. **Private spans**: ``<private>…</private>``, ``<private/>…</private>``,
   ``[private]…[/private]`` and ``<!-- private -->…<!-- /private -->`` become
   ``[PRIVATE]`` (an empty span disappears without a marker). The marker itself, exactly
   ``[PRIVATE]``, is not an opening tag, so redacting twice changes nothing. Nesting of one form is
   counted, so only the outermost span matters. An opening tag that is never closed
   hides the rest of the text: privacy fails closed. Tags inside a fenced code block
   (````` … `````, ``~~~ … ~~~``) and a bare tag quoted as inline code (`` `<private>` ``)
   are literal; a fence that is never closed is not a fence, for the same reason.
2. **Secrets**: API keys and tokens by their well-known shapes, private key blocks,
   JWTs and ``password=…``-style assignments become ``[REDACTED:kind]``; for an
   assignment the key name is kept and only the value is replaced.

Both passes start with plain substring tests (run in C on the text and its lower-case
copy), so text without any trigger word never meets a regex. Stdlib only: the hook path
may import this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

PRIVATE_MARKER = "[PRIVATE]"

# --- private spans -------------------------------------------------------------------


# One tokenizer for everything the span scanner cares about. Alternatives are tried in
# order at each position, so a fence line wins over the tags it may contain.
_TOKENS = re.compile(
    r"""
    (?P<fence>^[ \t]{0,3}(?P<fence_mark>`{3,}|~{3,})[^\n]*)
  | (?P<inline>`[ \t]*(?:<\s*/?\s*private\s*/?\s*>|\[/?private\]|<!--\s*/?\s*private\s*-->)[ \t]*`)
  | (?P<xml_open><private\s*/?\s*>)
  | (?P<xml_close><\s*/\s*private\s*>)
  | (?P<bracket_open>(?-i:(?!\[PRIVATE\]))\[private\])  # our own marker is never a tag
  | (?P<bracket_close>\[/private\])
  | (?P<comment_open><!--\s*private\s*-->)
  | (?P<comment_close><!--\s*/\s*private\s*-->)
    """,
    re.IGNORECASE | re.MULTILINE | re.VERBOSE,
)

_FORMS = ("xml", "bracket", "comment")


@lru_cache(maxsize=32)
def _fence_closer(char: str, length: int) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]{{0,3}}{re.escape(char)}{{{length},}}[ \t]*$", re.MULTILINE)


def _closing_fence(text: str, start: int, mark: str) -> re.Match[str] | None:
    return _fence_closer(mark[0], len(mark)).search(text, start)


def redact_private(text: str) -> str:
    """Replace private spans by ``[PRIVATE]`` (see the module docstring for the rules)."""
    # Removing an empty span can join the text around it into a new tag
    # ("<priv<private></private>ate>"), so repeat until nothing changes.
    for _ in range(8):
        if "private" not in text.lower():
            return text
        redacted = _redact_private_once(text)
        if redacted == text:
            return text
        text = redacted
    return text


def _redact_private_once(text: str) -> str:
    out: list[str] = []
    keep_from = 0  # start of the text not yet copied to ``out``
    pos = 0
    while True:
        token = _TOKENS.search(text, pos)
        if token is None:
            break
        kind = token.lastgroup or ""
        if kind == "fence_mark":  # lastgroup names the innermost group; normalise
            kind = "fence"
        if token.group("fence") is not None:
            end_of_line = token.end()
            closing = _closing_fence(text, end_of_line + 1, token.group("fence_mark"))
            if closing is None:
                pos = end_of_line  # an unclosed fence is not a fence: keep scanning
            else:
                pos = closing.end()
            continue
        if kind == "inline" or kind.endswith("_close"):
            pos = token.end()  # a quoted tag, or a stray closing tag: literal
            continue
        form = kind.split("_", 1)[0]
        span_end, body_end = _find_close(text, token.end(), form)
        out.append(text[keep_from : token.start()])
        if span_end is None:
            out.append(PRIVATE_MARKER)  # unclosed: hide the rest of the text
            return "".join(out)
        if text[token.end() : body_end].strip():
            out.append(PRIVATE_MARKER)
        keep_from = pos = span_end
    if keep_from == 0:
        return text
    out.append(text[keep_from:])
    return "".join(out)


def _find_close(text: str, pos: int, form: str) -> tuple[int | None, int]:
    """End of the span opened just before ``pos`` (counting nested opens of ``form``)."""
    depth = 1
    while True:
        token = _TOKENS.search(text, pos)
        if token is None:
            return None, len(text)
        kind = token.lastgroup or ""
        pos = token.end()
        if kind == f"{form}_open":
            depth += 1
        elif kind == f"{form}_close":
            depth -= 1
            if depth == 0:
                return token.end(), token.start()


# --- secrets -------------------------------------------------------------------------

# Cheap first look (plain substring tests run in C): a text that contains none of these
# needs no secret scan at all. Token shapes are case-sensitive; assignment keys are not.
_SHAPE_HINTS = (
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "xox",
    "-----BEGIN",
    "eyJ",
    "earer",
    "EARER",
)
_ASSIGN_HINTS = ("pass", "pwd", "secret", "token", "key", "credential")

_SHAPES = re.compile(
    r"""
    (?P<private_key>-----BEGIN[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----
        (?:.*?-----END[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----|.*\Z))
  | (?P<anthropic>\bsk-ant-[A-Za-z0-9_-]{8,})
  | (?P<openai>\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{8,}|\bsk-[A-Za-z0-9]{20,})
  | (?P<github>\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,})
  | (?P<aws_access_key>\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b)
  | (?P<slack>\bxox[abprs]-[A-Za-z0-9-]{8,})
  | (?P<jwt>\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})
  | (?P<bearer_head>\b(?:[Bb]earer|BEARER)[ \t]+)(?P<bearer>[A-Za-z0-9._~+/=-]{16,})
    """,
    re.DOTALL | re.VERBOSE,
)

# ``<key>=<value>`` where the key ends with a secret-ish word. The scan is anchored on the
# separators (``:`` and ``=`` are found in C) and looks back for the word, which is many
# times faster than a case-insensitive alternation tried at every position.
_KEY_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "api_key",
    "api-key",
    "apikey",
    "access_key",
    "access-key",
    "accesskey",
    "private_key",
    "private-key",
    "privatekey",
    "credential",
    "credentials",
    "token",
)
_SEPARATOR = re.compile(r"[:=]")
_VALUE = re.compile(r""""[^"\n]*"|'[^'\n]*'|[^\s"',;)}\]]+""")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")

# Values after ``password=`` that are code or placeholders, not secrets.
_NOT_A_VALUE = re.compile(
    r"""^(?:none|null|nil|true|false|undefined|str|string|int|bytes|bool|optional\b.*
         |\$.*|\{.*|<.*|\[redacted.*|\[private\]?|\*+|x+|\.\.\.|…|os\.environ.*|process\.env.*|getenv.*
         |env\(.*|self\..*|[A-Za-z_][A-Za-z0-9_]*\(.*)$""",
    re.IGNORECASE | re.VERBOSE,
)


def _assignment_kind(key: str) -> str:
    lowered = key.lower()
    if "aws" in lowered or ("secret" in lowered and "access" in lowered):
        return "aws_secret_key"
    if "pass" in lowered or "pwd" in lowered:
        return "password"
    if "token" in lowered:
        return "token"
    if "api" in lowered and "key" in lowered:
        return "api_key"
    if "private" in lowered:
        return "private_key"
    return "secret"


def _replace_shape(match: re.Match[str]) -> str:
    if match.group("bearer") is not None:
        return f"{match.group('bearer_head')}[REDACTED:bearer]"
    return f"[REDACTED:{match.lastgroup or 'secret'}]"


_ANCHORS = ("pass", "pwd", "secret", "key", "credential", "token")


def _candidate_separators(text: str) -> list[int]:
    """Positions of ``:``/``=`` that follow a word containing a key anchor (found with str.find)."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters change length when lowered: scan them all
        return [sep.start() for sep in _SEPARATOR.finditer(text)]
    found: set[int] = set()
    size = len(text)
    for anchor in _ANCHORS:
        at = lowered.find(anchor)
        while at != -1:
            pos = at + len(anchor)
            while pos < size and text[pos] in _KEY_CHARS:
                pos += 1
            if pos < size and text[pos] in "'\"":
                pos += 1
            while pos < size and text[pos] in " \t":
                pos += 1
            if pos < size and text[pos] in ":=":
                found.add(pos)
            at = lowered.find(anchor, at + 1)
    return sorted(found)


def _redact_assignments(text: str) -> str:
    out: list[str] = []
    copied = 0
    for at in _candidate_separators(text):
        if at < copied:
            continue
        before = text[max(0, at - 48) : at].rstrip(" \t")
        if before.endswith(("'", '"')):
            before = before[:-1]
        lowered = before.lower()
        if not lowered.endswith(_KEY_WORDS):
            continue
        word = next(w for w in _KEY_WORDS if lowered.endswith(w))
        key_end = at - (len(text[max(0, at - 48) : at]) - len(before))
        key_start = key_end - len(word)
        while key_start > 0 and text[key_start - 1] in _KEY_CHARS:
            key_start -= 1
        value_at = at + 1
        if text[at : at + 2] in (":=", "=>"):
            value_at += 1
        while value_at < len(text) and text[value_at] in " \t":
            value_at += 1
        value = _VALUE.match(text, value_at)
        if value is None:
            continue
        bare = value.group(0).strip("\"'")
        if len(bare) < 3 or _NOT_A_VALUE.match(bare):
            continue
        key = text[key_start:key_end]
        quote = value.group(0)[0] if value.group(0)[:1] in "\"'" and len(value.group(0)) > 1 else ""
        out.append(text[copied : value.start()])
        out.append(f"{quote}[REDACTED:{_assignment_kind(key)}]{quote}")
        copied = value.end()
    if not out:
        return text
    out.append(text[copied:])
    return "".join(out)


def redact_secrets(text: str, lowered: str | None = None) -> str:
    """Replace well-known secret shapes by ``[REDACTED:kind]`` (assignments keep their key)."""
    if any(hint in text for hint in _SHAPE_HINTS):
        text = _SHAPES.sub(_replace_shape, text)
        lowered = None
    if lowered is None:
        lowered = text.lower()
    if any(hint in lowered for hint in _ASSIGN_HINTS):
        text = _redact_assignments(text)
    return text


# --- public API ----------------------------------------------------------------------


def redact(text: str) -> str:
    """Private spans to ``[PRIVATE]``, then secrets to ``[REDACTED:kind]``."""
    if not text:
        return text
    lowered = text.lower()
    if "private" in lowered:
        redacted = redact_private(text)
        if redacted is not text:
            text, lowered = redacted, redacted.lower()
    return redact_secrets(text, lowered)


def redact_obj(obj: Any, redact_fn: Callable[[str], str] = redact) -> Any:
    """A copy of ``obj`` with every string (values, not keys) of nested dicts/lists redacted."""
    if isinstance(obj, str):
        return redact_fn(obj)
    if isinstance(obj, dict):
        return {key: redact_obj(value, redact_fn) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact_obj(value, redact_fn) for value in obj]
    return obj
