"""The command line's parser: argparse with one-line errors that name the closest command or option.

Kept apart from :mod:`memkeeper.cli.output` so that printing (and the ``search`` fast path,
which parses its few options itself) never imports argparse.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from .output import EXIT_USAGE, error


def _suggest(word: str, choices: list[str]) -> str:
    from difflib import get_close_matches

    close = get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors that name the closest command or option (exit 2)."""

    def error(self, message: str) -> NoReturn:
        import re

        choice = re.search(r"invalid choice: '([^']*)'", message)
        if choice and self._subparsers is not None:
            names = sorted(_commands(self))
            error(
                f"unknown command {choice.group(1)!r}{_suggest(choice.group(1), names)} (see: memkeeper --help)",
                EXIT_USAGE,
            )
            sys.exit(EXIT_USAGE)
        error(f"{message} (see: {self.prog} --help)", EXIT_USAGE)
        sys.exit(EXIT_USAGE)


class Commands:
    """What each command module's ``register`` adds its commands through; the main parser
    adds the shared ``--project`` and ``--json`` to every command afterwards."""

    def __init__(self, sub: argparse._SubParsersAction[Parser], only: str | None = None) -> None:
        self._sub = sub
        self._only = only

    def add(
        self, name: str, handler: Callable[[argparse.Namespace], int], help: str, **options: Any
    ) -> argparse.ArgumentParser:
        """The command ``name``, run by ``handler``, for its module to add arguments to (when the
        parser is built for ``only`` one command, the others' arguments go nowhere)."""
        if self._only is not None and name != self._only:
            return _Unused()  # type: ignore[return-value]
        parser = self._sub.add_parser(name, help=help, **options)
        parser.set_defaults(handler=handler)
        return parser


class _Unused:
    """Takes the arguments of a command this run does not build (any call, on it or on what it gives)."""

    def __getattr__(self, _name: str) -> Callable[..., _Unused]:
        return lambda *_args, **_kwargs: self


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [s for action in parser._actions for s in action.option_strings if s.startswith("--")]


def check_options(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Refuse an unknown ``--option`` before argparse misreads it (``--projct /tmp`` would
    make ``/tmp`` the command), naming the closest option; exit 2."""
    commands = _commands(parser)
    known = set(_options(parser))
    command: argparse.ArgumentParser | None = None
    for i, word in enumerate(argv):
        if word == "--":
            return
        if command is None and not word.startswith("-") and not (i > 0 and argv[i - 1] == "--project"):
            command = commands.get(word)
            if command is not None:
                known |= set(_options(command))
            continue
        name = word.split("=", 1)[0]
        if name.startswith("--") and len(name) > 2 and name not in known:
            if any(k.startswith(name) for k in known):
                continue  # an unambiguous abbreviation argparse accepts
            error(
                f"unknown option {name!r}{_suggest(name, sorted(known))} (see: memkeeper --help)", EXIT_USAGE
            )
            sys.exit(EXIT_USAGE)
