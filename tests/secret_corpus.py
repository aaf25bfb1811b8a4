"""A corpus of fake credentials: every kind bare and in its usual context.

The kinds are data (``tests/fixtures/secret_kinds.toml``); values are generated
deterministically from them (a ``random.Random`` seeded by the kind and the variant), in the
shape each provider documents, so nothing here is a real secret and the corpus is the same on
every run. ``secret`` is the part that must not survive redaction
(for a URL or a header: the password or token only, not the user or host).

Used by ``bench/bench_secrets.py`` (recall per kind, ours against detect-secrets) and by
the end-to-end test that plants every kind in every write path.
"""

from __future__ import annotations

import base64
import random
import re
import string
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ALNUM = string.ascii_letters + string.digits
UPPER_NUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
ALPHABETS = {
    "ALNUM": ALNUM,
    "UPPER_NUM": UPPER_NUM,
    "DIGITS": string.digits,
    "HEX": HEX,
    "HEX_UPPER": HEX.upper(),
    "B64": B64,
    "URLSAFE": URLSAFE,
    "BECH32": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    "DJANGO": ALNUM + "!@#%^&*(-_=+)",
}
KINDS_FILE = Path(__file__).resolve().parent / "fixtures" / "secret_kinds.toml"
PLACEHOLDER = re.compile(r"\{(\w+)(?::([^}]*))?\}")


@dataclass(frozen=True)
class Sample:
    kind: str
    variant: str  # "bare" or "context"
    text: str
    secret: str


def _password(rng: random.Random, size: int = 16) -> str:
    """A password with the punctuation that used to cut values short."""
    body = [rng.choice(ALNUM) for _ in range(size)]
    for mark in ",;)}":
        body.insert(rng.randrange(2, len(body)), mark)
    return "".join(body)


def _plain_password(rng: random.Random, size: int = 14) -> str:
    return "".join(rng.choice(ALNUM) for _ in range(size)) + rng.choice("!#%^*") + rng.choice(string.digits)


def _private_key(rng: random.Random, header: str) -> str:
    lines = ["".join(rng.choice(B64) for _ in range(64)) for _ in range(6)]
    return f"-----BEGIN {header}-----\n" + "\n".join(lines) + f"\n-----END {header}-----"


def _jwt(rng: random.Random) -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    claims = f'{{"sub":"{rng.randrange(10**6)}","name":"user{rng.randrange(999)}","iat":1700000000}}'
    body = base64.urlsafe_b64encode(claims.encode()).rstrip(b"=").decode()
    sig = "".join(rng.choice(URLSAFE) for _ in range(43))
    return f"{head}.{body}.{sig}"


def _docker_auth(rng: random.Random) -> str:
    return base64.b64encode(f"deploy:{_plain_password(rng)}".encode()).decode()


def _basic(rng: random.Random) -> str:
    return base64.b64encode(f"admin:{_plain_password(rng)}".encode()).decode()


#: ``{name}`` or ``{name:argument}`` in a value: a generator of its own.
GENERATORS: dict[str, Callable[[random.Random, str], str]] = {
    "password": lambda rng, _arg: _password(rng),
    "plain_password": lambda rng, _arg: _plain_password(rng),
    "private_key": _private_key,
    "jwt": lambda rng, _arg: _jwt(rng),
    "basic": lambda rng, _arg: _basic(rng),
    "docker_auth": lambda rng, _arg: _docker_auth(rng),
}

#: What must vanish, when not the whole value.
SECRET_PARTS: dict[str, Callable[[str], str]] = {
    "url_password": lambda url: url.split("://", 1)[1].rsplit("@", 1)[0].split(":", 1)[1],
    "last_segment": lambda url: url.rsplit("/", 1)[1],
}


@dataclass(frozen=True)
class Kind:
    name: str
    value: str  # the credential as a provider hands it out (a template: see the kinds file)
    bare: str  # the credential standing alone (as pasted)
    context: str  # the credential in its usual surroundings
    secret: str = ""  # a key of SECRET_PARTS: what must vanish ("" for the whole value)

    def make(self, rng: random.Random) -> str:
        """A value, its parts drawn in order from ``rng``."""

        def part(match: re.Match[str]) -> str:
            name, argument = match[1], match[2] or ""
            if name in ALPHABETS:
                return "".join(rng.choice(ALPHABETS[name]) for _ in range(int(argument)))
            return GENERATORS[name](rng, argument)

        return PLACEHOLDER.sub(part, self.value)

    def sample(self, variant: str) -> Sample:
        value = self.make(random.Random(f"{self.name}/{variant}"))
        template = self.bare if variant == "bare" else self.context
        text = template.replace("{v}", value).replace("{rest}", value.split("://", 1)[-1])
        return Sample(self.name, variant, text, SECRET_PARTS[self.secret](value) if self.secret else value)


def load_kinds() -> tuple[Kind, ...]:
    table = tomllib.loads(KINDS_FILE.read_text("utf-8"))
    return tuple(
        Kind(name, spec["value"], spec.get("bare", "{v}"), spec["context"], spec.get("secret", ""))
        for name, spec in table.items()
    )


KINDS = load_kinds()


def samples() -> list[Sample]:
    """Every kind, bare and in context, with a value of its own for each (deterministic)."""
    return [kind.sample(variant) for kind in KINDS for variant in ("bare", "context")]
