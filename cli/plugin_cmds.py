"""Plugin commands: install, uninstall, hook (registered for --help), flush, save.

``memkeeper hook EVENT`` is dispatched by :mod:`memkeeper.cli.main` before argparse is
imported (it runs on every tool call); the parser here only documents it and serves
the rare call with extra arguments.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .parser import Commands

if TYPE_CHECKING:
    from ..plugin.install import Step


def next_steps() -> list[str]:
    """What to do after ``memkeeper install`` (the README's quick start says the same), with the
    defaults a new project gets."""
    from ..core.config.model import BudgetConfig
    from ..core.config.reader import DEFAULT_FLUSH_EVERY
    from ..core.summarizers import MAX_OUTPUT_TOKENS

    budget = BudgetConfig()
    return [
        "Next:",
        "  1. Start `claude` in a project, as usual. Each session starts with the project's memory.",
        f"  2. Work. Every {DEFAULT_FLUSH_EVERY} prompts and tool uses, and when the session ends, memkeeper copies",
        "     it to .claude/memory/sessions/; once enough has happened (at the latest when the session",
        "     ends) it writes 2-4 bullets about it to .claude/memory/memory.md.",
        "  3. Look: `memkeeper status` in the project (or /memkeeper:status in Claude Code), `memkeeper-tui`.",
        "Cost: the bullets come from `claude -p --model haiku`, with no thinking and at most "
        f"{MAX_OUTPUT_TOKENS['flush']:,} tokens an answer,",
        f"  capped at {budget.dailyCalls} calls and {budget.dailyTokens:,} tokens a day per project. "
        "For no model calls at all, put",
        '  {"summarizer": {"backend": "extractive"}} in .claude/memory/config.json.',
    ]


HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "PreCompact",
    "SessionEnd",
)


def register(commands: Commands) -> None:
    scopes: dict[str, Any] = {
        "choices": ("user", "project", "local"),
        "default": "user",
        "help": "Claude Code install scope",
    }
    install = commands.add(
        "install", run_install, "register the memkeeper plugin with Claude Code (local marketplace)"
    )
    install.add_argument("--scope", **scopes)
    install.add_argument(
        "--no-register", action="store_true", help="only write the marketplace; print the claude commands"
    )
    uninstall = commands.add(
        "uninstall", run_uninstall, "remove the memkeeper plugin from Claude Code (memory stays)"
    )
    uninstall.add_argument("--scope", **scopes)
    hook = commands.add(
        "hook",
        run_hook,
        "run one Claude Code hook (reads its JSON on stdin; the plugin calls this)",
        description="Run one Claude Code hook with its JSON on stdin. Always exits 0.",
    )
    hook.add_argument("event", choices=HOOK_EVENTS, help="the hook event")
    flush = commands.add("flush", run_flush, "summarize the new session entries into memory.md now")
    flush.add_argument("--session", metavar="ID", help="the session id (default: every recent session)")
    flush.add_argument("--transcript", metavar="PATH", help="the session's transcript to refine first")
    save = commands.add("save", run_save, "append a note to memory.md now (a dated section of bullets)")
    save.add_argument(
        "text",
        nargs="+",
        help="the note (words are joined); each line becomes a '- [note]: …' bullet unless it is one",
    )


def run_hook(args: argparse.Namespace) -> int:
    from ..plugin.hook import main as hook_main

    return hook_main([args.event])


def _steps_json(steps: list[Step]) -> list[dict[str, object]]:
    return [{"argv": s.argv, "returncode": s.returncode, "output": s.output} for s in steps]


def run_install(args: argparse.Namespace) -> int:
    from ..plugin.install import install
    from .output import EXIT_ERROR, console, literal, print_json

    report = install(scope=args.scope, register=not args.no_register)
    if args.json:
        print_json(
            {
                "marketplace": str(report.marketplace),
                "pluginDir": str(report.plugin_dir),
                "python": report.python,
                "claude": report.claude,
                "registered": report.registered,
                "steps": _steps_json(list(report.steps)),
                "manual": report.manual,
                "nextSteps": next_steps(),
            }
        )
    else:
        out = console()
        out.print(literal(f"Plugin copied to {report.plugin_dir} (Python: {report.python})"))
        for step in report.steps:
            mark = "ok" if step.returncode == 0 else f"failed ({step.returncode})"
            out.print(literal(f"$ {' '.join(step.argv)}  → {mark}"))
            if step.returncode != 0 and step.output:
                out.print(literal("  " + step.output.splitlines()[-1]))
        if report.registered:
            out.print("memkeeper is installed in Claude Code; new sessions load it.")
        elif report.manual:
            reason = "" if report.claude else " (claude is not on PATH)"
            out.print(literal(f"To finish{reason}, run:"))
            for line in report.manual:  # whole commands, never wrapped by us
                out.print(literal(f"  {line}"), soft_wrap=True)
        if report.registered or report.manual:
            out.print(literal("\n".join(next_steps())), soft_wrap=True)
    if report.claude and not report.registered and not args.no_register:
        return EXIT_ERROR
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    from ..plugin.install import uninstall
    from .output import EXIT_NOTHING, console, literal, print_json

    report = uninstall(scope=args.scope)
    # Nothing was there: no copy to delete and Claude Code knew neither the plugin nor its
    # marketplace (a second uninstall): said once, not as two failed commands.
    nothing = not report.removed and all(step.returncode != 0 for step in report.steps)
    code = EXIT_NOTHING if nothing else 0
    if args.json:
        print_json(
            {
                "marketplace": str(report.marketplace),
                "removed": report.removed,
                "installed": not nothing,
                "steps": _steps_json(list(report.steps)),
            }
        )
        return code
    out = console()
    if nothing:
        out.print("memkeeper is not installed in Claude Code: nothing to remove.")
        out.print("Memory stores in your projects (.claude/memory/) are untouched.")
        return code
    for step in report.steps:
        mark = "ok" if step.returncode == 0 else f"failed ({step.returncode})"
        out.print(literal(f"$ {' '.join(step.argv)}  → {mark}"))
        if step.returncode != 0 and step.output:
            out.print(literal("  " + step.output.splitlines()[-1]))
    out.print(
        literal(f"Removed {report.marketplace}" if report.removed else "No marketplace copy to remove.")
    )
    out.print("Memory stores in your projects (.claude/memory/) are kept.")
    return code


def run_flush(args: argparse.Namespace) -> int:
    from ..core.log.flush import flush_pending, refine_sessions
    from .output import EXIT_NOTHING, console, literal, paths_from, print_json

    paths = paths_from(args)
    options: dict[str, str] = {}
    if args.session:
        options["session_id"] = args.session
    if args.transcript:
        options["transcript_path"] = args.transcript
    refine_sessions(paths, options)
    result = flush_pending(paths)
    if args.json:
        print_json(
            {
                "sections": result.sections,
                "skipped": result.skipped,
                "entries": result.entries,
                "generators": result.generators,
                "watermark": result.watermark,
                "more": result.more,
                "waiting": result.waiting,
            }
        )
    elif result.entries == 0:
        console().print("Nothing new to flush.")
    else:
        console().print(
            literal(
                f"Flushed {result.entries} entries: {result.sections} section(s) appended to memory.md, "
                f"{result.skipped} skipped as not worth keeping ({', '.join(sorted(set(result.generators)))})."
            )
        )
    return 0 if result.entries else EXIT_NOTHING


def run_save(args: argparse.Namespace) -> int:
    from ..core.log.flush import append_note
    from .output import EXIT_USAGE, CliError, console, literal, paths_from

    try:
        section = append_note(paths_from(args), " ".join(args.text))
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if args.json:
        from .output import print_json

        print_json({"saved": "memory.md", "section": section.strip()})
        return 0
    console().print(literal(f"Saved to memory.md:{section.rstrip()}"))
    return 0
