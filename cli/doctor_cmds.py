"""``memkeeper doctor [--repair] [--json]``: check the store and repair what can be repaired.

Exit 0 when the store is healthy or every problem was repaired, 1 when problems remain.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .parser import Commands

if TYPE_CHECKING:
    from ..core.doctor import Finding
    from ..core.store.paths import StorePaths


def register(commands: Commands) -> None:
    parser = commands.add(
        "doctor",
        run,
        "check the memory store (index, locks, temp files, summaries, sessions, permissions)",
    )
    parser.add_argument(
        "--repair", action="store_true", help="fix what can be fixed; everything replaced is backed up first"
    )


def run(args: argparse.Namespace) -> int:
    from ..core.doctor import diagnose, problems_left, repair
    from ..plugin.install import check_installed
    from .output import EXIT_ERROR, EXIT_OK, console, literal, paths_from, print_json

    paths = paths_from(args, check=False)  # doctor reports links instead of refusing
    findings = repair(paths) if args.repair else diagnose(paths)
    plugin = check_installed()
    left = problems_left(findings)
    code = EXIT_OK if not left else EXIT_ERROR
    if args.json:
        print_json(
            {
                "store": str(paths.root),
                "exists": paths.exists(),
                "healthy": not left,
                "repairRan": bool(args.repair),
                "findings": [f.to_dict() for f in findings],
                "plugin": plugin.to_dict(),
            }
        )
        return code
    out = console()
    # whether the plugin Claude Code will run finds memkeeper: the store's health does not depend on it
    out.print(
        literal(f"Plugin: {plugin.message}."), style=None if plugin.finds_memkeeper else "red", soft_wrap=True
    )
    if not paths.exists():
        from .output import no_store_message
        from .output import sentence as _sentence

        out.print(literal(f"{_sentence(no_store_message(paths))}: nothing to check."), soft_wrap=True)
        return EXIT_OK
    if not findings:
        out.print(literal(f"The memory store at {paths.root} is healthy."), soft_wrap=True)
        return EXIT_OK
    _print_findings(out, findings, args.repair)
    _print_summary(out, paths, findings, left, args.repair)
    return code


def _print_findings(out: Any, findings: list[Finding], repairing: bool) -> None:
    from .output import literal

    for finding in findings:
        if finding.repaired:
            mark = "repaired"
        elif repairing and not finding.fixable:
            mark = "needs you"
        else:
            mark = finding.severity
        where = f" ({finding.path})" if finding.path and finding.path not in finding.message else ""
        out.print(literal(f"{mark:>9}: {finding.message}{where}"), soft_wrap=True)


def _print_summary(
    out: Any, paths: StorePaths, findings: list[Finding], left: list[Finding], repairing: bool
) -> None:
    from ..core.basics.wording import counted
    from .output import literal

    repaired = [f for f in findings if f.repaired]
    notes = [f for f in findings if f.severity == "note" and not f.repaired]
    if repairing:
        if repaired:
            folder = paths.backups
            out.print(
                literal(f"Repaired {len(repaired)} problem(s); anything replaced was backed up in {folder}."),
                soft_wrap=True,
            )
        if left:
            out.print(literal(f"{len(left)} problem(s) remain that doctor cannot repair."), soft_wrap=True)
    elif not left:
        tidy = [f for f in notes if f.fixable]
        text = f"The memory store at {paths.root} is healthy"
        if tidy:
            text += f"; {counted(len(tidy), 'note')}: `memkeeper doctor --repair` tidies them"
        out.print(literal(text + "."), soft_wrap=True)
    else:
        fixable = [f for f in left if f.fixable]
        out.print(
            literal(
                f"Found {len(left)} problem(s)."
                + (f" Run `memkeeper doctor --repair` to fix {len(fixable)} of them." if fixable else "")
            ),
            soft_wrap=True,
        )
