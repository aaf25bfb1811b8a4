"""Redaction of private spans and secrets before anything reaches the store.

``redact(text)`` is applied to every piece of user, assistant and tool text before it is
written to any tier. Two passes, in this order:

1. **Private spans**: ``<private>…</private>``, ``<private/>…</private>``,
   ``[private]…[/private]`` and ``<!-- private -->…<!-- /private -->`` become
   ``[PRIVATE]`` (an empty span disappears without a marker). The marker itself, exactly
   ``[PRIVATE]``, is not an opening tag, so redacting twice changes nothing. Nesting of one form is
   counted, so only the outermost span matters. An opening tag that is never closed
   hides the rest of the text (the rest of that message, tool input or note): privacy fails
   closed, since a user who typed ``<private>`` meant it. Tags inside a fenced code block
   (````` … `````, ``~~~ … ~~~``) or inside inline code (`` `use <private> here` ``) are
   literal; a fence or a backtick that is never closed is not code, for the same reason.
2. **Secrets**: API keys and tokens by their well-known shapes, private key blocks,
   JWTs and ``password=…``-style assignments become ``[REDACTED:kind]``; for an
   assignment the key name is kept and only the value is replaced.

Both passes start with plain substring tests (run in C on the text and its lower-case
copy), so text without any trigger word never meets a regex. Stdlib only: the hook path
may import this module.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
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


def _may_have_tags(lowered: str) -> bool:
    """Cheap test: could ``lowered`` hold an opening tag? (Closing tags alone are literal.)"""
    return "private" in lowered and ("<private" in lowered or "[private]" in lowered or "<!--" in lowered)


def redact_private(text: str) -> str:
    """Replace private spans by ``[PRIVATE]`` (see the module docstring for the rules)."""
    # Removing an empty span can join the text around it into a new tag
    # ("<priv<private></private>ate>"), so repeat until nothing changes.
    for _ in range(8):
        if not _may_have_tags(text.lower()):
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
        if kind == "inline" or kind.endswith("_close") or _in_inline_code(text, token.start()):
            pos = token.end()  # a quoted tag, a stray closing tag, a tag in `inline code`: literal
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


# An inline code span: a run of backticks, then the same run again on the same line
# (CommonMark pairs them left to right, as finditer does).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)[^\n]+?(?<!`)\1(?!`)")


def _in_inline_code(text: str, at: int) -> bool:
    """True when position ``at`` lies inside an inline code span of its line."""
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    if "`" not in text[line_start:at]:
        return False
    for span in _CODE_SPAN.finditer(text, line_start, line_end if line_end >= 0 else len(text)):
        if span.start() < at < span.end():
            return True
        if span.start() > at:
            break
    return False


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

# Secrets come in two forms:
#
# - **shapes**: tokens a provider marks with a prefix or a fixed form (``sk_live_…``,
#   ``ghp_…``, ``AKIA…``, a key block, a URL with a password), listed as data in
#   :mod:`memkeeper.core.redaction.secret_rules`; where detect-secrets is installed, its plugins'
#   own patterns run too (see :func:`use_maintained_rules`);
# - **assignments**: ``<key> <sep> <value>`` where the key names a secret (``password``,
#   ``DB_PASS``, ``client_secret``, ``api_key``, ``SECRET_KEY``, ``auth_token``…) and the
#   value is a literal. The key is kept and only the value replaced. A value runs to its
#   real end (to the closing quote, or to white space: ``, ; ) }`` inside a password do not
#   end it). A value that is code is left alone: a call, a subscript, an attribute or a
#   plain variable name (``token = line[start:pos]``, ``pwd = os.getcwd()``,
#   ``cache_token = current_token``), a type annotation (``password: str``), a placeholder
#   (``${PASS}``, ``<token>``, ``None``).

from .secret_rules import PLACEHOLDER_WORDS  # noqa: E402 - beside its use

_KEY_ANCHORS = ("pass", "pwd", "secret", "key", "credential", "token")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
# The last segment of a key name (after any ``.``), lower-cased, names a secret when:
_SECRET_KEY = re.compile(
    r"""[_-]pass$ | (?:^|[_-])pwd$
      | pass(?:word|wd|phrase)$
      | secret$ | token$ | credentials?$ | apikey$
      | (?:api|access|secret|private|account|auth|client|signing|encryption|master|license
         |stripe|app|consumer|session|shared|subscription|service|admin|root|sas)[_-]?key$""",
    re.VERBOSE,
)
_UPPER_KEY = re.compile(r"[A-Z0-9_]*_KEY")  # an environment variable such as DD_API_KEY
_QUOTED = re.compile(r"""[bBrRuU]{0,2}(?:"([^"\n]*)"|'([^'\n]*)'|`([^`\n]*)`)""")
_BARE_VALUE = re.compile(r"""[^\s"'`]+""")
_PLACEHOLDER = re.compile(
    r"""^(?:none|null|nil|true|false|undefined|str|string|int|bytes|bool|any|object|optional\b.*
         |[$%{<\[(@].*|\*+|x+|\.\.\.|…|(?:os\.environ|process\.env|getenv|env)\b.*)$""",
    re.IGNORECASE | re.VERBOSE,
)
_IDENTIFIER_CHAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CLOSERS = ",;:)]}"  # what may follow a code value on its line: f(pwd=None):
_SNAKE = re.compile(r"[a-z]+(?:_[a-z0-9]+)*")
_CAMEL = re.compile(r"[A-Za-z][a-z]+(?:[A-Z][a-z0-9]+)*")


def _looks_random(value: str) -> bool:
    """A word that reads like a credential rather than a variable name."""
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if value.isdigit():
        return len(value) >= 6
    if len(value) >= 16 and "_" not in value and not _CAMEL.fullmatch(value):
        return True  # one long word that is neither snake_case nor camelCase
    return has_digit and has_alpha and len(value) >= 6 and not _SNAKE.fullmatch(value)


def _is_code(value: str, rest: str, sep: str, spaced: bool, key: str) -> bool:
    """True when the unquoted ``value`` (followed by ``rest`` on its line) is code, not a literal."""
    value = value.rstrip(_CLOSERS)
    if _PLACEHOLDER.match(value):
        return True
    if value.isdigit():
        return len(value) < 6  # token = 123
    chain = _IDENTIFIER_CHAIN.match(value)
    if chain is None:
        return False  # punctuation inside: a literal such as a base64 key or a password
    after = value[chain.end() :]
    if after[:1] in ("(", "["):
        return True  # a call or a subscript
    if after.strip(_CLOSERS):
        return False  # e.g. "abc!def": a literal
    word = chain.group(0)
    if "." in word:
        return True  # an attribute: self._pwd, os.sep, token.ERRORTOKEN
    if _looks_random(word):
        return False
    if sep == ":":
        return bool(rest.strip())  # "password: str)" / "Token: enter it" vs YAML "password: hunter"
    if not spaced and _UPPER_KEY.fullmatch(key) or (not spaced and key.isupper()):
        return False  # DB_PASS=hunter (environment style)
    return True  # token = current_token, f(token=tok)


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


def _candidate_separators(text: str, lowered: str) -> list[int]:
    """Positions of ``:``/``=`` that follow a word containing a key anchor (found with str.find)."""
    if len(lowered) != len(text):  # a few characters change length when lowered
        lowered = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    found: set[int] = set()
    size = len(text)
    for anchor in _KEY_ANCHORS:
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
            at = lowered.find(anchor, pos)
    return sorted(found)


def _key_before(text: str, at: int) -> tuple[str, int] | None:
    """The key name that ends just before the separator at ``at`` (quotes and blanks skipped)."""
    end = at
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    if end > 0 and text[end - 1] in "'\"":
        end -= 1
    start = end
    while start > 0 and text[start - 1] in _KEY_CHARS and end - start < 64:
        start -= 1
    if start == end:
        return None
    return text[start:end], start


def _value_at(text: str, at: int) -> tuple[int, int, bool] | None:
    """(start, end, quoted) of the value after the separator at ``at``; None for comparisons."""
    sep_end = at + 1
    if text[at : at + 2] in (":=", "=>"):
        sep_end += 1
    elif text[at : at + 2] == "==" or (at > 0 and text[at - 1] in "!<>="):
        return None
    if text[at] == ":" and text[at + 1 : at + 2] == ":":
        return None
    pos = sep_end
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    quoted = _QUOTED.match(text, pos)
    if quoted is not None:
        group = 1 if quoted.group(1) is not None else 2 if quoted.group(2) is not None else 3
        return quoted.start(group), quoted.end(group), True
    bare = _BARE_VALUE.match(text, pos)
    if bare is None:
        return None
    return bare.start(), bare.end(), False


def _redact_assignments(text: str, lowered: str) -> str:
    out: list[str] = []
    copied = 0
    for at in _candidate_separators(text, lowered):
        if at < copied:
            continue
        found = _key_before(text, at)
        if found is None:
            continue
        key, key_start = found
        if not _SECRET_KEY.search(key.rsplit(".", 1)[-1].lower()):
            continue
        if key_start > 0 and text[key_start - 1] == "{":
            continue  # a format field: f"{token:02x}"
        span = _value_at(text, at)
        if span is None:
            continue
        start, end, quoted = span
        value = text[start:end]
        if len(value.strip()) < 3 or value.startswith(("[REDACTED", "[PRIVATE]")):
            continue
        if value.rstrip(_CLOSERS).lower() in PLACEHOLDER_WORDS:
            continue  # "password: password", "passwd='pass'"
        line_end = text.find("\n", end)
        rest = text[end : line_end if line_end >= 0 else len(text)]
        if quoted:
            if _PLACEHOLDER.match(value) or rest[1:].lstrip()[:1] in ("+", "%", ".", "["):
                continue  # a template, or a string that is part of an expression
        else:
            spaced = at > 0 and text[at - 1] in " \t" or text[at + 1 : at + 2] in (" ", "\t")
            if _is_code(value, rest, text[at], spaced, key):
                continue
        out.append(text[copied:start])
        out.append(f"[REDACTED:{_assignment_kind(key)}]")
        copied = end
    if not out:
        return text
    out.append(text[copied:])
    return "".join(out)


_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _left_start(text: str, at: int, left: tuple[int, int, str, str]) -> int | None:
    """Start of the run of ``left``'s characters ending at ``at``, if its size and first fit."""
    fewest, most, chars, first = left
    start = at
    while start > 0 and text[start - 1] in chars and at - start <= most:
        start -= 1
    size = at - start
    if not fewest <= size <= most or text[start] not in first:
        return None
    return start


def _shape_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret shape in ``text``, possibly overlapping."""
    from .secret_rules import HINTS, RULES

    spans: list[tuple[int, int, str]] = []
    due = sorted({index for hint, index in HINTS if hint in text})  # one C-speed test per hint
    for rule in (RULES[index] for index in due):
        pattern = rule.pattern
        has_value = "v" in pattern.groupindex
        for match in pattern.finditer(text):
            start, end = match.span("v") if has_value else match.span()
            begins = match.start()
            if rule.left is not None:
                found = _left_start(text, begins, rule.left)
                if found is None:
                    continue
                start = begins = found
            if rule.boundary and begins > 0 and text[begins - 1] in _WORD:
                continue
            if rule.validate is not None and not rule.validate(text[start:end]):
                continue
            spans.append((start, end, rule.kind))
    for pattern in _maintained_rules():
        for match in pattern.finditer(text):
            group = 1 if pattern.groups else 0
            if match.group(group):
                spans.append((match.start(group), match.end(group), "secret"))
    return spans


def _apply_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each span replaced by ``[REDACTED:kind]``; overlapping spans are merged
    (the first one's kind names the result)."""
    if not spans:
        return text
    spans.sort(key=lambda span: (span[0], -span[1]))
    merged: list[list[Any]] = []
    for start, end, kind in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    out: list[str] = []
    copied = 0
    for start, end, kind in merged:
        out.append(text[copied:start])
        out.append(f"[REDACTED:{kind}]")
        copied = end
    out.append(text[copied:])
    return "".join(out)


_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]|\[PRIVATE\]")


def _redact_shapes(text: str) -> str:
    spans = _shape_spans(text)
    if spans and ("[REDACTED:" in text or PRIVATE_MARKER in text):
        # a marker from an earlier pass is never redacted again: redacting is idempotent
        markers = [m.span() for m in _MARKER.finditer(text)]
        spans = [s for s in spans if not any(s[0] < end and start < s[1] for start, end in markers)]
    return _apply_spans(text, spans)


# --- detect-secrets' plugins: a maintained rule set, where installed ---------------------

#: detect-secrets plugins whose patterns are precise token shapes and cheap to run. Left
#: out, by measurement on the Python standard library (``bench/bench_secrets.py``): the
#: entropy, keyword and IP plugins (they flag ordinary code; our assignment pass does the
#: keyword job), and AWS, Artifactory, Cloudant, Discord, IBM, Mailchimp, Slack, SoftLayer,
#: Stripe and Telegram (patterns that start with a look-behind, a keyword or a character
#: class: 0.02-0.4 s per MB each, against under 0.005 for a pattern with a literal start;
#: our own rules cover those tokens).
_MAINTAINED_PLUGINS = (
    "azure_storage_key.AzureStorageKeyDetector",
    "github_token.GitHubTokenDetector",
    "gitlab_token.GitLabTokenDetector",
    "jwt.JwtTokenDetector",
    "npm.NpmDetector",
    "openai.OpenAIDetector",
    "pypi_token.PypiTokenDetector",
    "sendgrid.SendGridDetector",
    "square_oauth.SquareOAuthDetector",
    "twilio.TwilioKeyDetector",
)
_maintained: list[re.Pattern[str]] | None = None
_use_maintained: bool | None = None


def use_maintained_rules(enabled: bool | None) -> None:
    """Turn detect-secrets' patterns on or off for this process. By default (None) they run
    in background jobs only (``MEMKEEPER_IN_JOB=1``): importing detect-secrets costs ~0.3 s,
    which a hook must never pay; the CLI and the TUI turn them on."""
    global _use_maintained
    _use_maintained = enabled


def _maintained_rules() -> list[re.Pattern[str]]:
    global _maintained
    enabled = _use_maintained
    if enabled is None:
        import os

        enabled = os.environ.get("MEMKEEPER_IN_JOB") == "1"
    if not enabled:
        return []
    if _maintained is None:
        _maintained = _load_maintained()
    return _maintained


def _load_maintained() -> list[re.Pattern[str]]:
    from importlib import import_module

    patterns: list[re.Pattern[str]] = []
    for spec in _MAINTAINED_PLUGINS:
        module, _, name = spec.partition(".")
        try:
            plugin = getattr(import_module(f"detect_secrets.plugins.{module}"), name)
        except Exception:  # not installed, or a plugin renamed: our own rules still apply
            continue
        for pattern in getattr(plugin, "denylist", ()):
            if isinstance(pattern, re.Pattern) and isinstance(pattern.pattern, str):
                patterns.append(pattern)
    return patterns


def redact_secrets(text: str, lowered: str | None = None) -> str:
    """Replace secret shapes and secret assignments by ``[REDACTED:kind]`` (keys are kept)."""
    text = _redact_shapes(text)
    lowered = text.lower()
    if any(anchor in lowered for anchor in _KEY_ANCHORS):
        text = _redact_assignments(text, lowered)
    return text


# --- public API ----------------------------------------------------------------------


def redact(text: str) -> str:
    """Private spans to ``[PRIVATE]``, then secrets to ``[REDACTED:kind]``."""
    if not text:
        return text
    lowered = text.lower()
    if _may_have_tags(lowered):
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
