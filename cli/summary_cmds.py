"""Summary commands: ``regenerate`` (alias ``generate-l3``) and ``summaries``.

``memkeeper regenerate [ARCHIVE…|--pending|--all] [--backend NAME]`` generates L3
summaries now, in this process, with a progress bar (``--json`` for a report);
it is safe to run while another run or the background job is working (an archive
being generated elsewhere is reported as busy). ``memkeeper summaries`` lists the
pending and failed summaries with their errors, and today's model budget.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .parser import Commands

if TYPE_CHECKING:
    from ..core.store.paths import StorePaths

BACKEND_CHOICES = ("auto", "claude", "anthropic", "command", "extractive")


def register(commands: Commands) -> None:
    regen = commands.add(
        "regenerate",
        run_regenerate,
        "generate L3 summaries now (pending by default)",
        description="Generate the L3 summaries of archives now. Default: the pending and failed ones.",
    )
    regen.add_argument("archives", nargs="*", metavar="ARCHIVE", help="archive file names (memory_….md)")
    which = regen.add_mutually_exclusive_group()
    which.add_argument("--pending", action="store_true", help="the pending and failed summaries (default)")
    which.add_argument("--all", action="store_true", help="every archive, regenerating existing summaries")
    regen.add_argument("--backend", choices=BACKEND_CHOICES, help="summarizer backend (default: from config)")
    commands.add("summaries", run_summaries, "list pending and failed L3 summaries and the model budget")


def _store(args: argparse.Namespace) -> StorePaths:
    from .output import EXIT_NOTHING, CliError, no_store_message, paths_from

    paths = paths_from(args)
    if not paths.exists():
        raise CliError(no_store_message(paths), EXIT_NOTHING)
    return paths


def run_regenerate(args: argparse.Namespace) -> int:
    from ..core.config.model import load_config
    from ..core.summaries.summary import SummaryJobReport, run_summary_job
    from .output import EXIT_ERROR, EXIT_NOTHING, EXIT_OK, EXIT_USAGE, CliError, print_json

    if args.archives and (args.pending or args.all):
        raise CliError("give archive names or --pending or --all, not both", EXIT_USAGE)
    paths = _store(args)
    load_config(paths)  # a bad config is one clear line (exit 2) before any work
    options: dict[str, Any] = {}
    if args.archives:
        options["archives"] = list(args.archives)
    elif args.all:
        options["all"] = True
    else:
        options["pending"] = True
        options["retryFailed"] = True  # a person asking retries what the background job gave up on
    if args.backend:
        options["backend"] = args.backend

    if args.json:
        report = run_summary_job(paths, options)
    else:
        report = _with_progress(paths, options)
    if args.json:
        print_json({"outcomes": [o.to_json() for o in report.outcomes]})
    else:
        _print_report(report)
    if not report.outcomes:
        return EXIT_NOTHING
    assert isinstance(report, SummaryJobReport)
    return EXIT_ERROR if report.failed else EXIT_OK


def _with_progress(paths: StorePaths, options: dict[str, Any]) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..core.summaries.summary import run_summary_job
    from .output import console, strip_control

    with Progress(
        TextColumn("[bold]Summaries[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),
        console=console(),
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None)

        def progress(done: int, total: int, archive: str) -> None:
            bar.update(task, completed=done, total=total, description=strip_control(archive))

        return run_summary_job(paths, options, progress=progress)


def _print_report(report: Any) -> None:
    from rich.text import Text

    from .output import console, strip_control

    out = console()
    if not report.outcomes:
        out.print("No summaries to generate: nothing is pending.")
        return
    marks = {
        "generated": ("✓", "green"),
        "adopted": ("✓", "green"),
        "skipped": ("·", "dim"),
        "busy": ("…", "yellow"),
        "failed": ("✗", "red"),
    }
    for outcome in report.outcomes:
        mark, style = marks.get(outcome.outcome, ("?", ""))
        line = Text(f"{mark} ", style=style)
        line.append(strip_control(outcome.file))
        detail = outcome.outcome
        if outcome.generator:
            detail += f" ({outcome.generator})"
        if outcome.outcome == "adopted":
            detail += ": an existing summary file was kept"
        line.append(f"  {detail}", style=style)
        if outcome.error and outcome.outcome != "skipped":
            error = outcome.error.removeprefix(f"{outcome.file}: ")  # the line already names the file
            line.append(f": {strip_control(error)}")
        out.print(line)
        for note in outcome.notes:
            out.print(Text(f"    note: {strip_control(note)}", style="dim"))
    failed = len(report.failed)
    done = sum(1 for o in report.outcomes if o.outcome in ("generated", "adopted"))
    out.print(f"{done} generated, {failed} failed, {len(report.outcomes) - done - failed} skipped.")


def run_summaries(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ..core.config.model import load_config_or_default
    from ..core.store.index_entries import summary_generated
    from ..core.store.memory_index import read_index, safe_entries
    from ..core.store.memory_index_model import pending_summaries
    from ..core.summarizers import budget_status
    from .output import EXIT_OK, console, literal, print_json

    paths = _store(args)
    config, warnings = load_config_or_default(paths)
    pending = pending_summaries(paths)
    budget = budget_status(paths, config)
    entries, _ = safe_entries(read_index(paths))
    generated = sum(1 for e in entries if summary_generated(e))
    if args.json:
        print_json(
            {
                "archives": len(entries),
                "generated": generated,
                "pending": [p.__dict__ for p in pending],
                "budget": budget,
                "warnings": warnings,
            }
        )
        return EXIT_OK
    out = console()
    out.print(f"{len(entries)} archives: {generated} summarized, {len(pending)} pending or failed.")
    if pending:
        table = Table(show_edge=False, pad_edge=False)
        for column in ("archive", "state", "tries", "error"):
            table.add_column(column)
        for p in pending:
            style = {"failed": "red", "missing": "yellow"}.get(p.state, "")
            table.add_row(
                literal(p.file), literal(p.state), str(p.attempts), literal(p.error or ""), style=style
            )
        out.print(table)
        out.print("Run `memkeeper regenerate` to retry them.")
    line = (
        f"Model budget today ({budget['day']} UTC): {budget['calls']}/{budget['dailyCalls']} calls, "
        f"{budget['tokens']:,}/{budget['dailyTokens']:,} tokens"
    )
    out.print(literal(line))
    if budget["exceeded"]:
        out.print(
            literal("Budget reached: summaries use the extractive backend until tomorrow."), style="yellow"
        )
    for warning in warnings:
        out.print(literal(f"warning: {warning}"), style="yellow")
    return EXIT_OK
