"""Store commands: status, check, rotate, migrate-legacy, reset, memory-set/get/list, demo.

Thin handlers over :mod:`memkeeper.core`; each imports what it needs when it runs so
that building the parser stays cheap. ``check`` is registered here for ``--help`` but
normally never reaches argparse: :mod:`memkeeper.cli.fast` runs it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .output import paths_from
from .parser import Commands

if TYPE_CHECKING:
    from ..core.store.paths import StorePaths

BAR_WIDTH = 30


def register(commands: Commands) -> None:
    commands.add("status", run_status, "memory.md size against the threshold, archives, summaries, sessions")
    commands.add("check", run_check, "count one tool use and rotate memory.md if due (the PostToolUse hook)")
    rotate = commands.add("rotate", run_rotate, "rotate memory.md into an archive if due")
    rotate.add_argument("--force", action="store_true", help="rotate even below the threshold")
    migrate = commands.add(
        "migrate-legacy",
        run_migrate,
        "split an oversized legacy memory.md into dated archives (nothing is lost)",
    )
    migrate.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    commands.add("reset", run_reset, "reset the tool-use counter to 0")
    memory_set = commands.add(
        "memory-set", run_memory_set, "write project.md, architecture.md or conventions.md"
    )
    memory_set.add_argument("name", help="project, architecture or conventions")
    memory_set.add_argument("text", nargs="+", help="the new content")
    memory_get = commands.add(
        "memory-get", run_memory_get, "show project.md / architecture.md / conventions.md"
    )
    memory_get.add_argument("name", nargs="?", help="project, architecture or conventions (default: all)")
    commands.add("memory-list", run_memory_list, "list the memory files and their sizes")
    demo = commands.add("demo", run_demo, "create a realistic demo store and print its project directory")
    demo.add_argument("dir", nargs="?", help="project directory to create it in (default: a new temp dir)")
    demo.add_argument("--seed", type=int, default=0, help="variation of the generated content")


def run_demo(args: argparse.Namespace) -> int:
    import shlex
    import sys
    import tempfile
    from pathlib import Path

    from ..core.demo import create_demo_store
    from .output import EXIT_USAGE, CliError

    target = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="memkeeper-demo-"))
    try:
        paths = create_demo_store(target, seed=args.seed)
    except FileExistsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if args.json:
        from .output import print_json

        print_json({"project": str(paths.project), "store": str(paths.root)})
        return 0
    print(paths.project)  # alone on stdout, for `$(memkeeper demo)`; how to use it goes to stderr
    quoted = shlex.quote(str(paths.project))
    sys.stderr.write(
        "A demo project with a memory store. Pass it as the project to look at it, e.g.:\n"
        f"  memkeeper --project {quoted} status\n"
        f"  memkeeper-tui {quoted}\n"
    )
    return 0


def run_check(args: argparse.Namespace) -> int:
    from .fast import run_check as fast_check

    return fast_check(args.project)


def run_rotate(args: argparse.Namespace) -> int:
    from ..core.config.model import load_config
    from ..core.log import rotation
    from ..core.store.jobs import start_job
    from .output import EXIT_NOTHING, print_json

    paths = paths_from(args)
    cfg = load_config(paths).config
    try:
        result = rotation.rotate(paths, cfg.threshold_tokens, cfg.carryover_tokens, force=args.force)
    except rotation.RotationRefused as exc:
        from .output import CliError

        raise CliError(str(exc), EXIT_NOTHING) from None
    if result is None:
        tokens = rotation.memory_tokens(paths)
        if args.json:
            print_json({"rotated": False, "tokens": tokens, "thresholdTokens": cfg.threshold_tokens})
        elif tokens == 0:
            print("[MEMORY_KEEPER] Nothing to rotate: memory.md is empty or missing")
        else:
            print(
                f"[MEMORY_KEEPER] Nothing to rotate: memory.md is {tokens:,} tokens, "
                f"under the threshold of {cfg.threshold_tokens:,} (use --force to rotate anyway)"
            )
        return EXIT_NOTHING
    if args.json:
        print_json({"rotated": True, "message": result.trigger_line})
    else:
        print(result.trigger_line)
    start_job(paths, "summary")
    return 0


def run_reset(args: argparse.Namespace) -> int:
    from ..core.log import counters

    counters.reset(paths_from(args))
    if args.json:
        from .output import print_json

        print_json({"reset": True})
        return 0
    print("[MEMORY_KEEPER] Counter reset.")
    return 0


def _summary_rows(
    paths: StorePaths,
) -> tuple[list[dict[str, Any]], dict[str, int], list[str], dict[str, Any]]:
    from ..core.log.flush_positions import last_flush
    from ..core.store.memory_index_model import load_index

    index = load_index(paths)
    counts = {"generated": 0, "pending": 0, "failed": 0}
    rows: list[dict[str, Any]] = []
    for entry in index.rotatedFiles:
        counts[entry.state] += 1
        rows.append(
            {
                "file": entry.file,
                "rotatedAt": entry.rotatedAt,
                "tokens": entry.tokens,
                "bytes": entry.bytes,
                "dateRange": entry.dateRange.model_dump() if entry.dateRange else None,
                "summary": entry.state,
                "error": entry.summaryError,
                "attempts": entry.summaryAttempts,
                "exists": paths.root.joinpath(entry.file).is_file(),
            }
        )
    extra = {
        "lastRotation": index.stats.lastRotation,
        "lastFlushAt": last_flush(paths, {"lastFlushAt": index.lastFlushAt}),
        "lastMemoryUpdateTs": index.lastMemoryUpdateTs,
        "recoveredFrom": (index.model_extra or {}).get("recoveredFrom"),
    }
    return rows, counts, index.refused, extra


def _session_count(paths: StorePaths) -> int:
    from ..core.store.names import is_l1

    try:
        return sum(1 for p in paths.sessions.iterdir() if is_l1(p.name))
    except OSError:
        return 0


def collect_status(paths: StorePaths) -> dict[str, Any]:
    """Everything ``memkeeper status`` shows, as plain data (also its ``--json``)."""
    from ..core.config.model import load_config_or_default
    from ..core.log import rotation
    from ..core.log.progress import read_counters
    from ..core.store.memory_index import list_archives

    config, warnings = load_config_or_default(paths)
    exists = paths.exists()
    memory_bytes = paths.memory.stat().st_size if paths.memory.is_file() else 0
    tokens = rotation.memory_tokens(paths)
    threshold = config.threshold_tokens
    archives_on_disk = list_archives(paths)
    rows, counts, refused, extra = (
        _summary_rows(paths) if exists else ([], {"generated": 0, "pending": 0, "failed": 0}, [], {})
    )
    indexed = {row["file"] for row in rows}
    for name in archives_on_disk:
        if name not in indexed:
            warnings.append(f"archive {name} is not in memory-index.json (run: memkeeper doctor)")
    for row in rows:
        if not row["exists"]:
            warnings.append(f"memory-index.json lists {row['file']}, which is missing")
    warnings.extend(refused)
    if extra.get("recoveredFrom"):
        warnings.append(
            f"memory-index.json was rebuilt from disk; the unreadable copy is {extra['recoveredFrom']}"
        )
    tool_uses = int(read_counters(paths).get("toolUses") or 0) if exists else 0
    from ..core.summarizers import budget_status

    budget = budget_status(paths, config) if exists else None
    from ..core.summarizers.health import backend_report

    backend = backend_report(paths, config)
    from ..core.config.reader import hook_settings
    from ..core.context.keeping import not_kept_reasons
    from ..core.log.progress import capture_progress
    from ..plugin.install import check_installed

    hooks = hook_settings(paths)
    progress = capture_progress(paths, hooks.flush_every, hooks.memory_enabled) if exists else None

    return {
        "notKept": not_kept_reasons(paths) if exists else [],
        "plugin": check_installed().to_dict(),
        "backend": backend,
        "project": str(paths.project),
        "store": str(paths.root),
        "exists": exists,
        "memory": {
            "bytes": memory_bytes,
            "tokens": tokens,
            "thresholdTokens": threshold,
            "carryoverTokens": config.carryover_tokens,
            "percent": round(100 * tokens / threshold, 1) if threshold else 0.0,
            "rotationEnabled": config.memoryRotation.enabled,
        },
        "archives": {
            "count": len(archives_on_disk),
            "bytes": sum(
                paths.root.joinpath(n).stat().st_size
                for n in archives_on_disk
                if paths.root.joinpath(n).is_file()
            ),
            "files": rows,
        },
        "summaries": counts,
        "modelBudget": budget,
        "settings": {
            "memoryEnabled": config.memory.enabled,
            "flushEvery": config.memory.flushEvery,
            "recallEnabled": config.recall.enabled,
            "recallMinConfidence": config.recall.minConfidence,
        },
        "sessions": {"count": _session_count(paths)},
        "capture": progress,
        "toolUsesSinceReset": tool_uses,
        "lastRotation": extra.get("lastRotation"),
        "lastFlushAt": extra.get("lastFlushAt"),
        "lastMemoryUpdateTs": extra.get("lastMemoryUpdateTs"),
        "warnings": warnings,
    }


def _bar(percent: float) -> str:
    filled = min(BAR_WIDTH, round(BAR_WIDTH * percent / 100))
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def run_status(args: argparse.Namespace) -> int:
    from .output import EXIT_NOTHING, console, literal, print_json

    paths = paths_from(args)
    status = collect_status(paths)
    if args.json:
        print_json(status)
        return 0 if status["exists"] else EXIT_NOTHING
    out = console()
    if not status["exists"]:
        from .output import no_store_message
        from .output import sentence as _sentence

        out.print(literal(_sentence(no_store_message(paths))))
        out.print(
            "Claude Code creates it on the first session with the plugin; try [bold]memkeeper demo[/bold]."
        )
        return EXIT_NOTHING
    from rich.table import Table

    mem = status["memory"]
    color = "green" if mem["percent"] < 70 else "yellow" if mem["percent"] < 100 else "red"
    out.print(literal(f"memkeeper · {status['project']}"), style="bold")
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim")
    grid.add_column()
    rotation_note = "" if mem["rotationEnabled"] else "  (rotation disabled)"
    grid.add_row(
        "memory.md",
        f"[{color}]{_bar(mem['percent'])}[/{color}] {mem['percent']:.0f}%  "
        f"{mem['tokens']:,} / {mem['thresholdTokens']:,} tokens{rotation_note}",
    )
    arch = status["archives"]
    grid.add_row("archives", f"{arch['count']}  ({arch['bytes']:,} bytes)")
    sums = status["summaries"]
    summary_text = f"{sums['generated']} generated, {sums['pending']} pending"
    if sums["failed"]:
        summary_text += f", [red]{sums['failed']} failed[/red]"
    grid.add_row("summaries", summary_text)
    budget = status["modelBudget"]
    budget_text = (
        f"{budget['calls']}/{budget['dailyCalls']} calls, "
        f"{budget['tokens']:,}/{budget['dailyTokens']:,} tokens today"
    )
    if budget["exceeded"]:
        budget_text += "  [red]cap reached: summaries use the extractive backend until tomorrow (UTC)[/red]"
    grid.add_row("model budget", budget_text)
    grid.add_row("summarizer", literal(_backend_text(status["backend"])))
    _capture_rows(grid, status)
    grid.add_row("settings", _settings_text(status["settings"]))
    grid.add_row("tool uses", f"{status['toolUsesSinceReset']} since the last reset")
    _plugin_row(grid, status["plugin"])
    for label, key in (("last rotation", "lastRotation"), ("last flush", "lastFlushAt")):
        grid.add_row(label, literal(_when(status[key]) if status[key] else "never"))
    out.print(grid)
    unfinished = [row for row in arch["files"] if row["summary"] != "generated"]
    if unfinished:
        table = Table(title="summaries to do", title_justify="left", show_edge=False)
        table.add_column("archive", no_wrap=True)
        table.add_column("dates", no_wrap=True)
        table.add_column("state")
        table.add_column("last error", overflow="fold")
        for row in unfinished:
            dates = f"{row['dateRange']['first']}…{row['dateRange']['last']}" if row["dateRange"] else ""
            state = "[red]failed[/red]" if row["summary"] == "failed" else "[yellow]pending[/yellow]"
            table.add_row(literal(row["file"]), dates, state, literal(row["error"] or ""))
        out.print(table)
    for reason in status["notKept"]:
        out.print(literal(f"memory not kept: {reason}"), style="red")
    for warning in status["warnings"]:
        out.print(literal(f"warning: {warning}"), style="yellow")
    return 0


def _plugin_row(grid: Any, plugin: dict[str, Any]) -> None:
    """Whether the plugin Claude Code will run finds memkeeper (red when it does not)."""
    from .output import literal

    grid.add_row("plugin", literal(plugin["message"]), style=None if plugin["findsMemkeeper"] else "red")


def _when(stamp: str) -> str:
    """A stored UTC stamp on this machine's clock (``2026-11-21 12:49``)."""
    from ..core.basics.timestamps import local_time

    return local_time(stamp)


def _capture_rows(grid: Any, status: dict[str, Any]) -> None:
    """``captured`` (sessions copied so far, or how to start) and ``next flush``."""
    from ..core.log.progress import captured_text, next_flush_text
    from .output import literal

    progress = status["capture"]
    last = progress["lastCaptureAt"]
    grid.add_row("captured", literal(captured_text(progress, _when(last) if last else None)))
    grid.add_row("next flush", literal(next_flush_text(progress)))


def _settings_text(settings: dict[str, Any]) -> str:
    """``memory on, flush every 10 · recall on (confidence ≥ 0.92)`` (``memkeeper config list``: all)."""
    memory = f"memory on, flush every {settings['flushEvery']}" if settings["memoryEnabled"] else "memory off"
    recall = (
        f"recall on (confidence ≥ {settings['recallMinConfidence']:g})"
        if settings["recallEnabled"]
        else "recall off"
    )
    return f"{memory} · {recall}"


def _backend_text(backend: dict[str, Any]) -> str:
    """``claude (auto: claude is on PATH), last answered 2026-…`` or why it rests."""
    text = f"{backend['inUse']} ({backend['why']})"
    if backend["inUse"] != "extractive" or backend["restingUntil"]:
        text += f", last answered {backend['lastOkAt'] or 'never'}"
    return text


def run_migrate(args: argparse.Namespace) -> int:
    from ..core.log.migrate import migrate_legacy
    from .output import EXIT_NOTHING, print_json

    paths = paths_from(args)
    result = migrate_legacy(paths, dry_run=args.dry_run)
    if args.json:
        print_json(result.as_dict())
        return 0 if result.needed else EXIT_NOTHING
    if not result.needed:
        print(f"[MEMORY_KEEPER] No migration needed ({result.reason})")
        return EXIT_NOTHING
    if args.dry_run:
        print(f"Plan ({result.reason}); nothing is changed (--dry-run):")
        for archive in result.archives:
            print(
                f"  {archive.name}  {archive.first_date}…{archive.last_date}  "
                f"{archive.sections} sections  {archive.tokens:,} tokens  {archive.bytes:,} bytes"
            )
        print(
            f"  memory.md keeps the last {result.carryover_bytes:,} bytes; "
            "the original is copied to .backups/ first."
        )
        return 0
    print(f"[MEMORY_KEEPER] Legacy split: {len(result.archives)} archives created")
    for line in result.trigger_lines:
        print(line)
    print(f"[MEMORY_KEEPER] Original saved as {paths.backups / (result.backup or '')}")
    return 0


def _named_key(name: str) -> str:
    from ..core.store.paths import NAMED_MEMORY_FILES
    from .output import EXIT_USAGE, CliError

    key = name.removesuffix(".md")
    if key not in NAMED_MEMORY_FILES:
        allowed = ", ".join(NAMED_MEMORY_FILES)
        raise CliError(f"unknown memory file {name!r} (allowed: {allowed})", EXIT_USAGE)
    return key


NAMED_TITLES = {"project": "Project Overview", "architecture": "Architecture", "conventions": "Conventions"}


def run_memory_set(args: argparse.Namespace) -> int:
    import sys

    from ..core.store.atomic import atomic_write_text
    from ..core.store.lock import reentrant_lock
    from ..core.store.paths import ensure_store

    key = _named_key(args.name)
    text = sys.stdin.read() if args.text == ["-"] else " ".join(args.text)
    if not text.endswith("\n"):
        text += "\n"
    paths = paths_from(args)
    ensure_store(paths)
    with reentrant_lock(paths.lock):
        atomic_write_text(paths.named(key), text)
    if args.json:
        from .output import print_json

        print_json({"saved": paths.named(key).name, "bytes": len(text.encode("utf-8"))})
        return 0
    print(f"[MEMORY_KEEPER] Saved {NAMED_TITLES[key]} to .claude/memory/{paths.named(key).name}")
    return 0


def _read_named(paths: StorePaths, key: str) -> str | None:
    try:
        return paths.named(key).read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return None


def run_memory_get(args: argparse.Namespace) -> int:
    from ..core.store.paths import NAMED_MEMORY_FILES
    from .output import EXIT_NOTHING, console, literal, print_json

    paths = paths_from(args)
    keys = [_named_key(args.name)] if args.name else list(NAMED_MEMORY_FILES)
    found = {key: _read_named(paths, key) for key in keys}
    if args.json:
        print_json({key: {"file": paths.named(key).name, "content": text} for key, text in found.items()})
    else:
        out = console()
        for key, text in found.items():
            out.print(f"[bold]## {NAMED_TITLES[key]}[/bold] [dim]({paths.named(key).name})[/dim]")
            if text is None:
                out.print("[dim](not set)[/dim]")
            else:
                out.print(literal(text.rstrip("\n")), soft_wrap=True)
            out.print()
    return 0 if any(text is not None for text in found.values()) else EXIT_NOTHING


def run_memory_list(args: argparse.Namespace) -> int:
    from ..core.basics.timestamps import iso_from_epoch
    from ..core.basics.tokens import tokens_for_bytes
    from ..core.store.paths import MEMORY_FILE, NAMED_MEMORY_FILES
    from .output import console, literal, print_json

    paths = paths_from(args)
    rows: list[dict[str, Any]] = []
    for name in (MEMORY_FILE, *NAMED_MEMORY_FILES.values()):
        path = paths.root / name
        try:
            info = path.stat()
        except FileNotFoundError:
            rows.append({"file": name, "exists": False, "bytes": 0, "tokens": 0, "modified": None})
            continue
        modified = iso_from_epoch(info.st_mtime)
        rows.append(
            {
                "file": name,
                "exists": True,
                "bytes": info.st_size,
                "tokens": tokens_for_bytes(info.st_size),
                "modified": modified,
            }
        )
    if args.json:
        print_json({"store": str(paths.root), "files": rows})
        return 0
    from rich.table import Table

    table = Table(title=str(paths.root), title_justify="left", show_edge=False)
    table.add_column("file")
    table.add_column("bytes", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("modified (UTC)")
    for row in rows:
        if row["exists"]:
            table.add_row(row["file"], f"{row['bytes']:,}", f"{row['tokens']:,}", row["modified"])
        else:
            table.add_row(row["file"], "[dim]-[/dim]", "[dim]-[/dim]", "[dim]not set[/dim]")
    console().print(literal("") if not rows else table)
    return 0
