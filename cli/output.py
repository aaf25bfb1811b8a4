"""Shared output of the CLI: exit codes, one-line errors, Rich and JSON printing, the store of a command line.

Rich is imported only when a command prints for a person. When stdout is not a terminal
(a pipe, a file, Claude's Bash tool) lines are never wrapped or cut: Rich takes its width
from the terminal only.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from rich.console import Console

    from ..core.store.paths import StorePaths

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
    import json

    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")


def literal(text: str) -> Any:
    """User text as a Rich renderable that never interprets markup or escape codes."""
    from rich.text import Text

    return Text(strip_control(text))


def strip_control(text: str) -> str:
    """Remove terminal control characters (ESC, NUL, ...) but keep newlines and tabs."""
    return "".join(ch for ch in text if ch in "\n\t" or (ch >= " " and ch != "\x7f"))


#: Set by ``main`` when the command line asks for ``--json``: an error is then also one JSON
#: object on stdout (``{"error": ..., "exitCode": ...}``), as every answer is.
json_errors = False


def error(message: str, code: int = EXIT_ERROR) -> None:
    """The one line of a failure on stderr (and, under ``--json``, the JSON object on stdout)."""
    text = strip_control(message)
    sys.stderr.write(f"memkeeper: error: {text}\n")
    if json_errors:
        print_json({"error": text, "exitCode": code})


def warn(message: str) -> None:
    sys.stderr.write(f"memkeeper: warning: {strip_control(message)}\n")


def run_handler(args: argparse.Namespace) -> int:
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except CliError as exc:
        error(str(exc), exc.code)
        return exc.code
    except KeyboardInterrupt:
        error("interrupted", 130)
        return 130
    except Exception as exc:  # one clear line, not a stack trace
        from ..core.config.model import ConfigError
        from ..core.store.boundary import StoreLinkError
        from ..core.store.lock import LockTimeout
        from ..core.store.paths import StoreRefused

        if isinstance(exc, (ConfigError, StoreRefused, StoreLinkError)):
            error(str(exc), EXIT_USAGE)
            return EXIT_USAGE
        if isinstance(exc, LockTimeout):
            error(f"the store is busy ({exc}); try again")
            return EXIT_ERROR
        if isinstance(exc, OSError):
            error(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
            return EXIT_ERROR
        error(f"{type(exc).__name__}: {exc}")
        return EXIT_ERROR


#: Commands that read the store only through files opened without following a link
#: (``atomic.open_read``): their guard checks the folders they read, listing nothing.
READERS = frozenset({"search"})


def paths_from(args: argparse.Namespace, check: bool = True) -> StorePaths:
    """The store of the project the command line names (``--project``, else the usual rule),
    guarded (no store in /, $HOME, ~/.claude; none holding a link) unless ``check`` is False.

    Checked once per command line: the link check lists the whole store (50,000 session
    files take tens of milliseconds), and a command asks for its store more than once. A
    command of READERS lists nothing (see ``store.guard``).
    """
    from ..core.store.paths import paths_for

    key = (getattr(args, "project", None), check)
    known = getattr(args, "_store_paths", None)
    if known is not None and known[0] == key:
        return known[1]  # type: ignore[no-any-return]
    paths = paths_for(key[0], check=check, listing=getattr(args, "command", None) not in READERS)
    args._store_paths = (key, paths)
    return paths


def parent_store(paths: StorePaths) -> Path | None:
    """The nearest memory store in a folder above the project, if there is one."""
    from pathlib import Path

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
