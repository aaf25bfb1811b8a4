"""L1 commands: ``final``, ``refine-all``, ``dedupe-l1``, ``compress``, ``sessions``.

Thin argument parsing over :mod:`memkeeper.core.capture.l1`; the transcript of "this project" is
found in Claude Code's folder for exactly this directory, never by a substring match.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .parser import Commands


def register(commands: Commands) -> None:
    final = commands.add("final", run_final, "copy the current session into its L1 file now")
    final.add_argument(
        "--transcript", metavar="PATH", help="transcript to refine (default: newest of this project)"
    )
    final.add_argument("--session", metavar="ID", help="session id (default: read from the transcript)")
    commands.add(
        "refine-all", run_refine_all, "refine every transcript of this project Claude Code still keeps"
    )
    dedupe = commands.add(
        "dedupe-l1", run_dedupe, "move L1 files contained in another file of the same session to trash"
    )
    dedupe.add_argument("--dry-run", action="store_true", help="only show what would be moved")
    compress = commands.add(
        "compress", run_compress, "gzip L1 files older than retentionDays (they stay searchable)"
    )
    compress.add_argument("--days", type=int, metavar="N", help="age in days (default: memory.retentionDays)")
    commands.add("sessions", run_sessions, "list the L1 session files with message and tool counts")


def _short(path: Path | None, root: Path) -> str:
    if path is None:
        return "-"
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def run_final(args: argparse.Namespace) -> int:
    from ..core.capture import l1, transcript
    from .output import EXIT_NOTHING, CliError, paths_from, print_json

    paths = paths_from(args)
    path: Path | None = Path(args.transcript).expanduser() if args.transcript else None
    if path is None and args.session:
        path = transcript.find_transcript(args.session, paths.project)
        if path is None:
            raise CliError(
                f"no transcript for session {args.session} under {transcript.claude_projects_root()}",
                EXIT_NOTHING,
            )
    if path is None:
        path = transcript.newest_transcript(paths.project)
        if path is None:
            folder = transcript.claude_projects_root() / transcript.encode_project_dir(paths.project)
            raise CliError(f"no transcript of this project in {folder}", EXIT_NOTHING)
    if not path.is_file():
        raise CliError(f"transcript not found: {path}", EXIT_NOTHING)
    result = l1.refine_transcript(paths, path, args.session)
    if args.json:
        print_json(result.as_dict())
        return 0
    _print_result(result, paths.root)
    return 0


def _print_result(result: Any, root: Path) -> None:
    from .output import console, literal

    line = (
        f"L1: {_short(result.l1_path, root)}  +{result.new_entries} entries"
        f" (total {result.total_entries}) from {result.transcript.name}"
    )
    if result.broken_lines:
        line += f", {result.broken_lines} unreadable line(s) skipped"
    console().print(literal(line), soft_wrap=True)


def run_refine_all(args: argparse.Namespace) -> int:
    from ..core.capture import l1, transcript
    from .output import EXIT_NOTHING, paths_from, print_json, warn

    paths = paths_from(args)
    results = []
    failures: list[str] = []
    for path in transcript.list_transcripts(paths.project):
        try:
            results.append(l1.refine_transcript(paths, path))
        except OSError as exc:
            failures.append(f"{path.name}: {exc.strerror or exc}")
    if args.json:
        print_json({"results": [result.as_dict() for result in results], "errors": failures})
    else:
        for result in results:
            _print_result(result, paths.root)
        for failure in failures:
            warn(failure)
        if not results and not failures:
            print("[MEMORY_KEEPER] No transcripts for this project")
    return 0 if results or failures else EXIT_NOTHING


def run_dedupe(args: argparse.Namespace) -> int:
    from ..core.capture import l1
    from .output import paths_from, print_json

    paths = paths_from(args)
    result = l1.dedupe_l1(paths, dry_run=args.dry_run)
    if args.json:
        print_json({"removed": result.removed, "kept": result.kept, "dryRun": args.dry_run})
        return 0
    verb = "would move" if args.dry_run else "moved"
    for name in result.removed:
        print(f"{verb} to trash: {name}")
    print(f"[MEMORY_KEEPER] {len(result.removed)} duplicate L1 file(s) {verb} to trash")
    return 0


def run_compress(args: argparse.Namespace) -> int:
    from ..core.capture import l1
    from ..core.config.model import load_config_or_default
    from .output import EXIT_USAGE, CliError, paths_from, print_json, warn

    paths = paths_from(args)
    days = args.days
    if days is None:
        config, warnings = load_config_or_default(paths)
        for message in warnings:
            warn(message)
        days = config.memory.retentionDays
    if days < 0:
        raise CliError("--days must be 0 or more", EXIT_USAGE)
    done = l1.compress(paths, days)
    if args.json:
        print_json({"compressed": done, "days": days})
        return 0
    for name in done:
        print(f"compressed: {name}")
    print(f"[MEMORY_KEEPER] {len(done)} L1 file(s) older than {days} days compressed")
    return 0


def run_sessions(args: argparse.Namespace) -> int:
    from ..core.capture import l1
    from ..core.capture.titles import session_titles, title_key
    from .output import EXIT_NOTHING, console, literal, paths_from, print_json

    paths = paths_from(args)
    files = l1.list_l1(paths)
    titles = session_titles(paths)
    if args.json:
        print_json([{**info.as_dict(), "title": titles.get(title_key(info.name))} for info in files])
        return 0 if files else EXIT_NOTHING
    if not files:
        print("[MEMORY_KEEPER] No L1 sessions")
        return EXIT_NOTHING
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    # The file (what `forget session` takes) comes last and is never cut: piped, the last
    # field of a line is the whole name.
    for column in ("started", "session", "messages", "tools", "size", "title", "file"):
        numeric = column in ("messages", "tools", "size")
        table.add_column(column, justify="right" if numeric else "left", no_wrap=column != "title")
    for info in files:
        table.add_row(
            (info.started or "-")[:16].replace("T", " "),
            literal((info.session_id or "-")[:8] + (" (js)" if info.legacy else "")),
            str(info.messages),
            str(info.tools),
            _human(info.size) + (" gz" if info.compressed else ""),
            literal(titles.get(title_key(info.name)) or "-"),
            literal(info.name),
        )
    console().print(table)
    return 0


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB"):
        if value < 1024 or unit == "MB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
