"""No POSIX-only construct outside the platform module (core/basics/platform.py).

The source of core, cli, plugin and tui is read as code (comments and docstrings left out,
other strings kept: ``"/bin/sh"`` in an argv is code), and every construct that exists on
POSIX only, or asks which system this is, must be in core/basics/platform.py or on the short
allow-list below, each entry with its reason.
"""

from __future__ import annotations

import io
import re
import token
import tokenize
from pathlib import Path

import pytest

import memkeeper.cli
import memkeeper.core
import memkeeper.plugin
import memkeeper.tui

#: Each package's folder, by the name the allow-list uses.
PACKAGES = {
    package.__name__.rpartition(".")[2]: Path(str(package.__file__)).resolve().parent
    for package in (memkeeper.core, memkeeper.cli, memkeeper.plugin, memkeeper.tui)
}
PLATFORM_MODULE = "core/basics/platform.py"

#: name -> what finds it in code.
CONSTRUCTS = {
    "posix-only module": re.compile(r"\b(?:import|from)\s+(?:fcntl|termios|pwd|grp|resource|msvcrt)\b"),
    "os.fork": re.compile(r"\bos\.fork\b"),
    "pread": re.compile(r"\bpread\b"),
    "killpg": re.compile(r"\bkillpg\b"),
    "setsid": re.compile(r"\bsetsid\b"),
    "fchmod": re.compile(r"\bfchmod\b"),
    "O_NOFOLLOW": re.compile(r"\bO_NOFOLLOW\b"),
    "SIGALRM": re.compile(r"\bSIGALRM\b"),
    "SIGHUP": re.compile(r"\bSIGHUP\b"),
    "SIGKILL": re.compile(r"\bSIGKILL\b"),
    "AF_UNIX": re.compile(r"\bAF_UNIX\b"),
    "os.name": re.compile(r"\bos\.name\b"),
    "sys.platform": re.compile(r"\bsys\.platform\b"),
    "/proc/": re.compile(r"/proc/"),
    "/bin/sh": re.compile(r"/bin/sh\b"),
    "shell=True": re.compile(r"\bshell\s*=\s*True\b"),
}

#: (file, construct) -> why it may stay there for now.
ALLOWED = {
    ("core/recall/wire.py", "AF_UNIX"): "the recall channel's family: a Unix socket where the system has one",
    ("core/recall/ask.py", "AF_UNIX"): "the recall channel's family: a Unix socket where the system has one",
}


def code_of(source: str) -> str:
    """``source`` with its comments and docstrings (a string that is a whole statement) blanked."""
    lines = [list(line) for line in source.splitlines(keepends=True)]
    previous = token.NEWLINE
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        docstring = tok.type == token.STRING and previous in (token.NEWLINE, token.INDENT, token.DEDENT)
        if tok.type not in (token.NL, token.COMMENT):
            previous = tok.type
        if tok.type == token.COMMENT or docstring:
            (row, col), (end_row, end_col) = tok.start, tok.end
            for at in range(row, end_row + 1):
                line = lines[at - 1]
                first, last = (col if at == row else 0), (end_col if at == end_row else len(line))
                line[first:last] = " " * (last - first)
    return "".join("".join(line) for line in lines)


def found_in(rel: str) -> set[str]:
    package, _, rest = rel.partition("/")
    code = code_of((PACKAGES[package] / rest).read_text("utf-8"))
    return {name for name, pattern in CONSTRUCTS.items() if pattern.search(code)}


def sources() -> list[str]:
    return sorted(
        f"{name}/{path.relative_to(folder).as_posix()}"
        for name, folder in PACKAGES.items()
        for path in folder.rglob("*.py")
    )


def test_the_source_is_read_as_code() -> None:
    sample = '"""os.fork in a docstring"""\nx = 1  # os.name in a comment\nargv = ["/bin/sh", "-c"]\n'
    assert code_of(sample).count("/bin/sh") == 1 and "os.fork" not in code_of(sample)
    assert "os.name" not in code_of(sample)
    assert found_in(PLATFORM_MODULE) >= {"os.name", "O_NOFOLLOW", "SIGKILL", "SIGHUP", "posix-only module"}
    assert len(sources()) > 100


@pytest.mark.parametrize("rel", sources())
def test_no_posix_only_construct_outside_the_platform_module(rel: str) -> None:
    if rel == PLATFORM_MODULE:
        return
    unexpected = sorted(name for name in found_in(rel) if (rel, name) not in ALLOWED)
    assert not unexpected, f"{rel}: {', '.join(unexpected)}: ask memkeeper.core.basics.platform instead"


def test_every_allowance_is_still_needed() -> None:
    stale = [entry for entry in ALLOWED if entry[1] not in found_in(entry[0])]
    assert not stale, f"no longer found, drop from ALLOWED: {stale}"
