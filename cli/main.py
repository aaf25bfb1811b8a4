"""Entry point of ``memkeeper``: builds the parser from the command modules and dispatches.

``memkeeper [--project DIR] [--json] COMMAND ...``; the shared options ``--project`` and
``--json`` are declared here once and accepted before or after the command. The internal
commands (``job``, ``hook``, ``check``) work but are not listed in ``--help``. A mistyped
command or option gets a one-line error with the closest known name (exit 2). The hot
paths (``check`` and ``hook``) are dispatched before argparse is even imported: they run
on every tool call.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from ..core.store.paths import StorePaths

#: Command modules; each defines ``register(commands)``. Order is the --help order.
COMMAND_MODULES = (
    "memkeeper.cli.store_cmds",
    "memkeeper.cli.config_cmds",
    "memkeeper.cli.job_cmds",
    "memkeeper.cli.l1_cmds",
    "memkeeper.cli.summary_cmds",
    "memkeeper.cli.doctor_cmds",
    "memkeeper.cli.plugin_cmds",
    "memkeeper.cli.search_cmds",
    "memkeeper.cli.forget_cmds",
    "memkeeper.cli.share_cmds",
)

#: Commands the hooks and jobs run; they work but are not listed in --help.
INTERNAL_COMMANDS = frozenset({"job", "hook", "check", "merge-driver"})

#: JS memory-keeper command names kept working as aliases.
ALIASES = {
    "search-memory": "search",
    "generate-l3": "regenerate",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only``, that one command's parser alone (each command's
    options cost argparse a few milliseconds to build, paid on every run)."""
    import argparse

    from .. import __version__
    from .parser import Commands, Parser

    parser = Parser(
        prog="memkeeper",
        description="Long-term memory for Claude Code: the store, its tiers and the plugin.",
    )
    parser.add_argument("--version", action="version", version=f"memkeeper {__version__}")
    _shared_options(parser, default=None)
    from importlib import import_module

    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = Commands(sub, only)
    for name in COMMAND_MODULES:
        import_module(name).register(commands)
    for command in sub.choices.values():
        _shared_options(command, default=argparse.SUPPRESS)
    # Internal commands stay parseable but leave the --help listing.
    sub._choices_actions = [a for a in sub._choices_actions if a.dest not in INTERNAL_COMMANDS]
    return parser


def _shared_options(parser: argparse.ArgumentParser, default: object) -> None:
    """``--project DIR`` and ``--json``, on the main parser and on every command.

    On a command they default to SUPPRESS, so a value given before the command stays.
    """
    known = {s for action in parser._actions for s in action.option_strings}
    if "--project" not in known:
        parser.add_argument(
            "--project",
            metavar="DIR",
            default=default,
            help="project directory (default: $CLAUDE_PROJECT_DIR, else the current directory)",
        )
    if "--json" not in known:
        parser.add_argument(
            "--json", action="store_true", default=default or False, help="print JSON instead of text"
        )


def _fast_path(argv: list[str]) -> tuple[int, bool] | None:
    """Dispatch ``check`` / ``hook EVENT`` / ``mcp`` / a plain ``search`` without argparse: its exit
    code, and whether nothing is left to finish at exit (see :func:`run`); None if not applicable."""
    project: str | None = None
    rest = argv
    if len(rest) >= 2 and rest[0] == "--project":
        project, rest = rest[1], rest[2:]
    if rest == ["check"]:
        from .fast import run_check

        return run_check(project), False
    if len(rest) == 2 and rest[0] == "hook" and not rest[1].startswith("-"):
        from ..plugin.hook import main as hook_main

        return hook_main([rest[1]]), False
    if rest == ["mcp"]:  # Claude Code waits for the server's first answer: no argparse, no Rich
        from ..plugin.mcp_server import serve

        serve(project)
        return 0, False
    if "search" in argv or "search-memory" in argv:  # the plain forms of a search, read without argparse
        return _fast_search(argv)
    return None


def _fast_search(argv: list[str]) -> tuple[int, bool] | None:
    """A plain search line answered without argparse (see :func:`_fast_path`); None for another line."""
    import gc

    collecting = gc.isenabled()
    gc.disable()  # a search is short: the collector would walk every module it loads, freeing nothing
    try:
        from .search_cmds import fast_args

        args = fast_args(argv, ALIASES)
        if args is None:
            return None
        from .output import run_handler

        _finish_interrupted(args)  # type: ignore[arg-type]
        return run_handler(args), True  # type: ignore[arg-type]  # closed and written: nothing left at exit
    finally:
        if collecting:
            gc.enable()


def run() -> None:
    """The ``memkeeper`` process (the console script): :func:`main`, then exit with its code.

    A search answered on the fast path leaves without the interpreter's teardown (freeing
    every module it loaded costs it milliseconds); its output is flushed first.
    """
    code, nothing_left = _dispatch(sys.argv[1:])
    if not nothing_left:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        code = code or 120  # what the interpreter's own flush at exit gives
    import os

    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    return _dispatch(list(sys.argv[1:] if argv is None else argv))[0]


def _dispatch(args_list: list[str]) -> tuple[int, bool]:
    """The command line's exit code, and whether nothing is left to finish at exit."""
    from . import output

    output.json_errors = "--json" in args_list  # (set on every call: main may run more than once)
    fast = _fast_path(args_list)
    if fast is not None:
        return fast
    parser, args = parse_line(args_list)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0, False
    _finish_interrupted(args)
    from .output import run_handler

    return run_handler(args), False


def parse_line(argv: list[str]) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The parser for the command line ``argv`` and what it reads from it (argparse's way;
    a mistake exits 2 with one line)."""
    args_list = list(argv)
    command: str | None = None
    for i, word in enumerate(args_list):
        if i > 0 and args_list[i - 1] == "--project":
            continue  # the value of --project is not the command
        if not word.startswith("-"):
            if word in ALIASES:
                args_list[i] = ALIASES[word]
            command = args_list[i]
            break
    parser = build_parser(command)
    if command is None or not parser._subparsers or command not in _command_names(parser):
        parser = build_parser()  # no command, or an unknown one: the whole line, to list or suggest
    json_first = _json_before_command(args_list)
    from .parser import check_options

    check_options(parser, args_list)
    args = parser.parse_args(args_list)
    if json_first:
        args.json = True
    return parser, args


def _command_names(parser: argparse.ArgumentParser) -> set[str]:
    import argparse

    return {name for a in parser._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices}


def _json_before_command(argv: list[str]) -> bool:
    """True if ``--json`` came before the command (a command's own default would hide it)."""
    for i, word in enumerate(argv):
        if word == "--json":
            return True
        if not word.startswith("-") and not (i > 0 and argv[i - 1] == "--project"):
            return False
    return False


def _finish_interrupted(args: argparse.Namespace) -> None:
    """Before any command but ``doctor``: complete what a kill interrupted (see core.intents).
    Before any command of a shared store: take in what a pull brought (see core.pulled)."""
    if args.command in ("merge-driver", "share"):
        return  # git runs these mid-merge or mid-commit: the store is being changed under them
    from ..core.store import intents
    from .output import paths_from

    try:
        paths = paths_from(args)
    except (OSError, ValueError):
        return  # a refused folder, or a link in the store: the command itself says so
    _take_in_pulled(paths)
    if args.command == "doctor":
        return  # doctor reports it, and repairs it when asked
    if paths.root.is_dir() and intents.pending(paths):
        from ..core.store.lock import LockTimeout
        from ..core.store.paths import guard

        try:
            guard(paths)  # a recovery reads and writes: the whole store is checked for links first
            intents.recover_pending(paths, timeout=5.0)
        except LockTimeout:
            pass  # still running elsewhere: the command's own store operations finish it
        except (OSError, ValueError):
            return  # a link in the store: the command itself says so


def _take_in_pulled(paths: StorePaths) -> None:
    from ..core.log.pulled import take_in
    from ..core.sharing.marks import is_shared

    if not is_shared(paths):
        return
    from ..core.store.lock import LockTimeout

    try:
        take_in(paths)
    except (LockTimeout, OSError, ValueError):
        pass  # busy or refused: the next command takes it in; the command itself says what is wrong


if __name__ == "__main__":
    run()
