"""Shared output of the CLI: exit codes, one-line errors, Rich and JSON printing, the parser.

Rich is imported only when a command prints for a person. When stdout is not a terminal
(a pipe, a file, Claude's Bash tool) lines are never wrapped or cut: Rich takes its width
from the terminal only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from rich.console import Console

    from memkeeper.core.store import StorePaths

EXIT_OK = 0
EXIT_ERROR = 1  # something went wrong; nothing was lost
EXIT_USAGE = 2  # the command line or a config value is wrong
EXIT_NOTHING = 3  # a valid request that found nothing to do (no results, nothing to rotate)


class CliError(Exception):
    """A failure to report as one line ``memkeeper: error: …`` with an exit code."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


_console: Console | None = None


def console() -> Console:
    global _console
    if _console is None:
        from rich.console import Console

        if sys.stdout.isatty():
            _console = Console(highlight=False, soft_wrap=False)
        else:  # full lines for pipes: no wrapping, no truncation, no colour
            _console = Console(highlight=False, soft_wrap=True, width=PIPE_WIDTH, no_color=True)
    return _console


#: The width Rich lays tables out in when the output is not a terminal (no line is cut).
PIPE_WIDTH = 100_000


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")


def literal(text: str) -> Any:
    """User text as a Rich renderable that never interprets markup or escape codes."""
    from rich.text import Text

    return Text(strip_control(text))


def strip_control(text: str) -> str:
    """Remove terminal control characters (ESC, NUL, ...) but keep newlines and tabs."""
    return "".join(ch for ch in text if ch in "\n\t" or (ch >= " " and ch != "\x7f"))


def error(message: str) -> None:
    sys.stderr.write(f"memkeeper: error: {strip_control(message)}\n")


def warn(message: str) -> None:
    sys.stderr.write(f"memkeeper: warning: {strip_control(message)}\n")


def run_handler(args: argparse.Namespace) -> int:
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except CliError as exc:
        error(str(exc))
        return exc.code
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    except Exception as exc:  # one clear line, not a stack trace
        from memkeeper.core.config import ConfigError
        from memkeeper.core.lock import LockTimeout
        from memkeeper.core.store import StoreRefused

        if isinstance(exc, (ConfigError, StoreRefused)):
            error(str(exc))
            return EXIT_USAGE
        if isinstance(exc, LockTimeout):
            error(f"the store is busy ({exc}); try again")
            return EXIT_ERROR
        if isinstance(exc, OSError):
            error(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
            return EXIT_ERROR
        error(f"{type(exc).__name__}: {exc}")
        return EXIT_ERROR


# --- the parser: did-you-mean, one reading of --project ---------------------------------


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
                f"unknown command {choice.group(1)!r}{_suggest(choice.group(1), names)} (see: memkeeper --help)"
            )
            sys.exit(EXIT_USAGE)
        error(f"{message} (see: {self.prog} --help)")
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
            error(f"unknown option {name!r}{_suggest(name, sorted(known))} (see: memkeeper --help)")
            sys.exit(EXIT_USAGE)


def paths_from(args: argparse.Namespace, check: bool = True) -> StorePaths:
    """The store of the project the command line names (``--project``, else the usual rule),
    guarded (no store in /, $HOME, ~/.claude; none holding a link) unless ``check`` is False.

    Checked once per command line: the link check lists the whole store (50,000 session
    files take tens of milliseconds), and a command asks for its store more than once.
    """
    from memkeeper.core.store import paths_for

    key = (getattr(args, "project", None), check)
    known = getattr(args, "_store_paths", None)
    if known is not None and known[0] == key:
        return known[1]  # type: ignore[no-any-return]
    paths = paths_for(key[0], check=check)
    args._store_paths = (key, paths)
    return paths


def parent_store(paths: StorePaths) -> Path | None:
    """The nearest memory store in a folder above the project, if there is one."""
    home = Path.home().resolve()
    folder = paths.project.resolve().parent
    while folder != folder.parent and folder != home:
        if (folder / ".claude" / "memory").is_dir():
            return folder
        folder = folder.parent
    return None


def no_store_message(paths: StorePaths) -> str:
    """``no memory store in DIR`` and, when there is one above, where it is."""
    above = parent_store(paths)
    hint = f"; there is one in {above} (run there, or pass --project {above})" if above else ""
    return f"no memory store in {paths.project} (expected {paths.root}){hint}"


def sentence(text: str) -> str:
    """``text`` with its first letter in upper case (the rest untouched: paths keep their case)."""
    return text[:1].upper() + text[1:]
