"""``memkeeper job KIND``: run one background job in this process (what start_job spawns)."""

from __future__ import annotations

import argparse
import json

from .parser import Commands


def register(commands: Commands) -> None:
    parser = commands.add("job", run, "run a background job now (internal; hooks start these)")
    parser.add_argument("kind", help="job kind, e.g. summary, flush, l1")
    parser.add_argument("--options", default="{}", help="JSON options for the job")


def run(args: argparse.Namespace) -> int:
    from ..core.store.jobs import run_job
    from .output import EXIT_USAGE, CliError, paths_from

    try:
        options = json.loads(args.options)
    except ValueError:
        raise CliError("--options is not valid JSON", EXIT_USAGE) from None
    try:
        run_job(paths_from(args), args.kind, options)
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    return 0
