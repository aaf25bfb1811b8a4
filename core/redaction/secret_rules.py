"""The secret shapes :mod:`memkeeper.core.redaction.redact` redacts, as data.

Each rule has a kind, hints and a pattern. ``hints`` are plain substrings, one of which a
text must contain for the pattern to be tried at all (tested in C, so most text never
meets a regex). When the pattern has a group named ``v``, only that group is replaced
(``https://user:[REDACTED:url_password]@host``), otherwise the whole match; a group named
Rules with ``left`` are found from their middle and extended to the left.

The shapes follow the providers' documented token formats, as collected by the
maintained rule sets of detect-secrets (its plugins) and gitleaks (its default rules);
:mod:`memkeeper.core.redaction.redact` also applies detect-secrets' own plugin patterns where the
package is installed (jobs and CLI, never hooks). Stdlib only: the hook path may import
this module.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


#: A rule: kind, hints, pattern, and checks on a match. Patterns start with a literal where
#: they can (the regex engine then jumps between occurrences of it); the word boundary a
#: token needs on its left is checked on the match instead (``boundary``).
class Rule:
    __slots__ = ("_compiled", "_flags", "_source", "boundary", "hints", "kind", "left", "validate")

    def __init__(
        self,
        kind: str,
        hints: tuple[str, ...],
        pattern: str,
        boundary: bool = True,
        flags: int = 0,
        validate: Callable[[str], bool] | None = None,
        left: tuple[int, int, str, str] | None = None,
    ) -> None:
        self.kind = kind
        self.hints = hints
        self._source = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None
        self.boundary = boundary
        self.validate = validate
        #: (fewest, most, characters, first characters): the token starts with a run of
        #: ``characters`` just left of the match (a token found from its middle).
        self.left = left

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled on first use: most processes need few of them)."""
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled


def _basic_credentials(value: str) -> bool:
    """True when ``value`` decodes (base64) to ``user:password``, as a Basic header holds."""
    import base64
    import binascii

    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and all(32 <= byte < 127 for byte in decoded)


def _mixed_case(value: str) -> bool:
    """True when the part of ``value`` after its last colon holds both cases (a random token)."""
    part = value.rpartition(":")[2]
    return part.lower() != part and part.upper() != part


def _not_placeholder(value: str) -> bool:
    return value.lower().strip("'\"") not in PLACEHOLDER_WORDS and not value.startswith(("$", "{", "<", "%"))


#: Values that stand for a secret without being one (``https://user:password@host``).
PLACEHOLDER_WORDS = frozenset(
    ("pass", "password", "passwd", "pwd", "secret", "token", "changeme", "example", "xxx", "xxxx", "redacted")
)

_TOKEN_END = r"(?![A-Za-z0-9_])"
_DIGITS = "0123456789"
_TOKEN_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
_URL_CHARS = r"[^\s/@'\"`<>]"

RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        ("-----BEGIN",),
        r"-----BEGIN[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----"
        r"(?:.*?-----END[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----|.*\Z)",
        boundary=False,
        flags=re.DOTALL,
    ),
    Rule("anthropic", ("sk-ant-",), r"sk-ant-[A-Za-z0-9_-]{8,}"),
    Rule(
        "openai",
        ("sk-",),
        r"sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{8,}|[A-Za-z0-9]{20,}" + _TOKEN_END + ")",
    ),
    Rule("stripe", ("k_live_", "k_test_"), r"[rs]k_(?:live|test)_[A-Za-z0-9]{10,}"),
    Rule("github", ("gh",), r"gh[pousr]_[A-Za-z0-9_]{20,}"),
    Rule("github", ("github_pat_",), r"github_pat_[A-Za-z0-9_]{20,}"),
    Rule(
        "gitlab", ("gl",), r"gl(?:pat|rt|dt|ptt|cbt|ft|imt|agent|oas|soat|rtr|ffct|sapat)-[A-Za-z0-9_-]{20,}"
    ),
    Rule("gitlab", ("GR1348941",), r"GR1348941[A-Za-z0-9_-]{20,}"),
    Rule(
        "aws_access_key",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}" + _TOKEN_END,
    ),
    Rule("slack", ("xox",), r"xox[abposre]-[A-Za-z0-9-]{8,}"),
    Rule("slack", ("xapp-",), r"xapp-\d-[A-Za-z0-9-]{20,}"),
    Rule(
        "slack_webhook",
        ("hooks.slack.com",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]+/(?P<v>[A-Za-z0-9_]{16,})",
        boundary=False,
    ),
    Rule(
        "discord_webhook", ("/api/webhooks/",), r"/api/webhooks/\d+/(?P<v>[A-Za-z0-9_-]{20,})", boundary=False
    ),
    # M/N/O + 23-25 characters, a dot, 6, a dot, 27 or more: found from its middle dot.
    Rule(
        "discord",
        (".",),
        r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}" + _TOKEN_END,
        left=(24, 26, _TOKEN_CHARS, "MNO"),
    ),
    Rule("google_api_key", ("AIza",), r"AIza[0-9A-Za-z_-]{35}"),
    Rule("google_oauth", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_-]{20,}", boundary=False),
    Rule("google_oauth", ("ya29.",), r"ya29\.[A-Za-z0-9_-]{20,}"),
    Rule("sendgrid", ("SG.",), r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
    Rule("twilio", ("SK",), r"SK[0-9a-fA-F]{32}" + _TOKEN_END),
    Rule("mailchimp", ("-us",), r"[0-9a-f]{32}-us[0-9]{1,2}" + _TOKEN_END),
    Rule("npm", ("npm_",), r"npm_[A-Za-z0-9]{36}" + _TOKEN_END),
    Rule("pypi", ("pypi-AgE",), r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    Rule("huggingface", ("hf_",), r"hf_[A-Za-z0-9]{30,}" + _TOKEN_END),
    Rule("digitalocean", ("_v1_",), r"do[opr]_v1_[a-f0-9]{64}"),
    # The bot's id, a colon and 35 characters of base64url (Bot API, "Authorizing your bot"):
    # found from its colon, the id (digits, no leading zero) to its left. Random, so it mixes cases.
    Rule(
        "telegram",
        (":",),
        r":[A-Za-z0-9_-]{34,35}(?![A-Za-z0-9_-])",
        left=(5, 16, _DIGITS, "123456789"),
        boundary=False,
        validate=_mixed_case,
    ),
    # Mailgun's private API key: "key-" and 32 hexadecimal digits.
    Rule("mailgun", ("key-",), r"key-[0-9a-f]{32}" + _TOKEN_END),
    Rule("jwt", ("eyJ",), r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    Rule("shopify", ("shp",), r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    Rule("square", ("EAAA",), r"EAAA[A-Za-z0-9_-]{60}"),
    Rule("square", ("sq0",), r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}"),
    Rule("artifactory", ("AKC",), r"AKC[a-zA-Z0-9]{10,}"),
    Rule("atlassian", ("ATATT", "ATCTT"), r"AT[AC]TT[A-Za-z0-9_=-]{100,}"),
    Rule("linear", ("lin_",), r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),
    Rule("vault", ("hvs.", "hvb.", "hvr."), r"hv[sbr]\.[A-Za-z0-9_-]{24,}"),
    Rule("newrelic", ("NRAK-", "NRJS-", "NRII-"), r"NR(?:AK|JS|II)-[A-Za-z0-9]{19,32}"),
    Rule("grafana", ("glsa_",), r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    Rule("grafana", ("glc_",), r"glc_[A-Za-z0-9+/]{32,}={0,2}"),
    Rule("age", ("AGE-SECRET-KEY-1",), r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    Rule("postman", ("PMAK-",), r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    Rule(
        "azure_storage",
        ("AccountKey=", "SharedAccessKey="),
        r"(?:Account|SharedAccess)Key=(?P<v>[A-Za-z0-9+/]{20,}={0,2})",
        boundary=False,
    ),
    Rule("docker_auth", ('"auth"',), r'"auth"\s*:\s*"(?P<v>[A-Za-z0-9+/]{12,}={0,2})"', boundary=False),
    Rule(
        "url_password",
        ("://",),
        r"://" + _URL_CHARS.replace("]", ":]") + r"*:(?P<v>" + _URL_CHARS + r"+)@(?=[A-Za-z0-9\[])",
        boundary=False,
        validate=_not_placeholder,
    ),
    Rule(
        "basic_auth",
        ("asic ", "ASIC "),
        r"(?:[Bb]asic|BASIC)[ \t]+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
        boundary=False,
        validate=_basic_credentials,
    ),
    Rule(
        "bearer",
        ("earer", "EARER"),
        r"(?:[Bb]earer|BEARER)[ \t]+(?P<v>[A-Za-z0-9._~+/=-]{16,})",
        boundary=False,
    ),
    Rule(
        "bearer",
        ("uthorization",),
        r"[Aa]uthorization[\"']?:[ \t]*[\"']?token[ \t]+(?P<v>[A-Za-z0-9._~+/=-]{16,})",
        boundary=False,
    ),
    Rule(
        "mysql_password",
        ("-p",),
        r"(?:mysql|mysqldump|mysqladmin|mariadb)[^\n|;&]*?[ \t]-p(?P<v>[^\s'\"-]\S*|'[^'\n]+'|\"[^\"\n]+\")",
    ),
    Rule("password", ("sshpass",), r"sshpass[ \t]+-p[ \t]*(?P<v>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"]+)"),
    Rule(
        "cli_password",
        ("-u",),
        r"-(?:u|-user)[ \t=]+['\"]?[^\s:'\"]+:(?P<v>[^\s'\"]+)",
        validate=_not_placeholder,
    ),
    Rule(
        "cli_secret",
        ("--",),
        r"--(?:password|passwd|token|secret|api-key|apikey|access-token|auth-token|client-secret)[ \t]+"
        r"(?P<v>'[^'\n]{3,}'|\"[^\"\n]{3,}\"|[^\s'\"$<{-][^\s]{2,})",
        validate=_not_placeholder,
    ),
)

#: (hint, index of its rule in RULES), for one pass of substring tests over a text.
HINTS: tuple[tuple[str, int], ...] = tuple(
    (hint, index) for index, rule in enumerate(RULES) for hint in rule.hints
)
