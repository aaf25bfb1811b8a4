"""Shared output of the CLI: exit codes, one-line errors, Rich and JSON printing.

Rich is imported only when a command prints for a person.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from rich.console import Console

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

        _console = Console(highlight=False, soft_wrap=False)
    return _console


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
