"""Entry point of ``memkeeper``: builds the parser from the command modules and dispatches.

``memkeeper [--project DIR] COMMAND ...``. The hot paths (``check`` and ``hook``) are
dispatched before argparse is even imported: they run on every tool call.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # importing typing would cost the hook path ~3 ms
if TYPE_CHECKING:
    import argparse

#: Command modules; each defines ``register(subparsers)``. Order is the --help order.
COMMAND_MODULES = (
    "memkeeper.cli.store_cmds",
    "memkeeper.cli.job_cmds",
    "memkeeper.cli.l1_cmds",
    "memkeeper.cli.summary_cmds",
    "memkeeper.cli.doctor_cmds",
    "memkeeper.cli.plugin_cmds",
    "memkeeper.cli.search_cmds",
    "memkeeper.cli.forget_cmds",
)

#: JS memory-keeper command names kept working as aliases.
ALIASES = {
    "search-memory": "search",
    "generate-l3": "regenerate",
}


def build_parser() -> argparse.ArgumentParser:
    import argparse

    from memkeeper import __version__

    parser = argparse.ArgumentParser(
        prog="memkeeper",
        description="Long-term memory for Claude Code: the store, its tiers and the plugin.",
    )
    parser.add_argument("--version", action="version", version=f"memkeeper {__version__}")
    parser.add_argument(
        "--project",
        metavar="DIR",
        help="project directory (default: $CLAUDE_PROJECT_DIR, else the current directory)",
    )
    from importlib import import_module

    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        import_module(name).register(sub)
    return parser


def _fast_path(argv: list[str]) -> int | None:
    """Dispatch ``check`` / ``hook EVENT`` without argparse; None if not applicable."""
    project: str | None = None
    rest = argv
    if len(rest) >= 2 and rest[0] == "--project":
        project, rest = rest[1], rest[2:]
    if rest == ["check"]:
        from memkeeper.cli.fast import run_check

        return run_check(project)
    if len(rest) == 2 and rest[0] == "hook" and not rest[1].startswith("-"):
        from memkeeper.plugin.hook import main as hook_main

        return hook_main([rest[1]])
    return None


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    fast = _fast_path(args_list)
    if fast is not None:
        return fast
    for i, word in enumerate(args_list):
        if i > 0 and args_list[i - 1] == "--project":
            continue  # the value of --project is not the command
        if not word.startswith("-"):
            if word in ALIASES:
                args_list[i] = ALIASES[word]
            break
    parser = build_parser()
    args = parser.parse_args(args_list)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    _finish_interrupted(args)
    from memkeeper.cli.output import run_handler

    return run_handler(args)


def _finish_interrupted(args: argparse.Namespace) -> None:
    """Before any command but ``doctor``: complete what a kill interrupted (see core.intents)."""
    if args.command == "doctor":
        return  # doctor reports it, and repairs it when asked
    from memkeeper.core import intents
    from memkeeper.core.store import paths_for

    paths = paths_for(getattr(args, "project", None))
    if paths.root.is_dir() and intents.pending(paths):
        from memkeeper.core.lock import LockTimeout

        try:
            intents.recover_pending(paths, timeout=5.0)
        except LockTimeout:
            pass  # still running elsewhere: the command's own store operations finish it


if __name__ == "__main__":
    sys.exit(main())
