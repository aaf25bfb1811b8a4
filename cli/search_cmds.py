"""Search commands: ``search`` (alias ``search-memory``), ``show``, ``timeline``, ``reindex``, ``mcp``.

``memkeeper search WORDS… [--exact] [--tier T] [--type T] [--since D] [--until D]
[--deep] [--limit N] [--json]`` prints ranked hits, best first, each with its
confidence; a query whose words occur nowhere says so and suggests close words.
``--exact`` (or a query that is one ``"quoted phrase"``) is the grep-like mode: every word must occur as
a substring, hits grouped by tier (memory.md, L3, L2, then L1 with ``--deep``).
Options may come after the words, as in the JS ``search-memory "q" --deep``. ``show ID`` prints a whole entry, ``timeline ID`` its neighbours, ``reindex``
rebuilds the index with a progress bar, ``mcp`` serves search over stdio for Claude.
Exit codes: 0 hits, 3 no hits, 2 a bad query or option.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .output import paths_from

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping
    from types import SimpleNamespace
    from typing import Any

    from ..core.search import Entry, Hit, SearchResults, TierResult, Timeline
    from .parser import Commands

TIER_LABELS = {"memory": "memory.md", "l3": "L3 summaries", "l2": "L2 archives", "l1": "L1 sessions"}
MATCH_STYLE = "bold yellow"


def _split(values: list[str] | None) -> list[str] | None:
    """``--tier l2 --tier l3`` and ``--tier l2,l3`` both work."""
    if not values:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def register(commands: Commands) -> None:
    search = commands.add(
        "search",
        run_search,
        "search the memory: ask in plain words (ranked), or --exact for every word as a substring",
        description=(
            "Ranked by default: a question or keywords in plain words, English or Korean; the entries "
            "holding more and rarer of its words rank first (stemmed, stop words ignored, words next "
            "to each other and typed prompts count more), each hit with a confidence from 0 to 1. "
            'With --exact, or a query that is one "quoted phrase", words are ANDed and each must occur as a '
            "case-insensitive substring (Korean inside words too), hits grouped by tier."
        ),
    )
    search.add_argument("query", nargs="+", metavar="WORD", help='words, a question, or "a phrase"')
    search.add_argument(
        "--exact",
        action="store_true",
        help="every word must occur as a substring (the grep-like mode; memory, L3, L2, and L1 with --deep)",
    )
    search.add_argument(
        "--tier", action="append", metavar="TIER", help="memory, l3, l2, l1 (repeat or comma)"
    )
    search.add_argument(
        "--type",
        action="append",
        metavar="TYPE",
        help="decision, theme, issue, overall, section, user, assistant, tool, tool_result, …",
    )
    search.add_argument("--since", metavar="DATE", help="only entries dated on or after DATE (YYYY-MM-DD)")
    search.add_argument("--until", metavar="DATE", help="only entries dated on or before DATE")
    search.add_argument(
        "--deep",
        action="store_true",
        help="also search the L1 sessions in --exact mode (ranked reads them always)",
    )
    search.add_argument("--limit", type=int, default=10, metavar="N", help="hits shown per tier (default 10)")
    show = commands.add("show", run_show, "print the whole entry behind a search hit id")
    show.add_argument("id", metavar="ID")
    timeline = commands.add("timeline", run_timeline, "print what came just before and after a search hit")
    timeline.add_argument("id", metavar="ID")
    timeline.add_argument("--before", type=int, default=3, metavar="N", help="entries before (default 3)")
    timeline.add_argument("--after", type=int, default=3, metavar="N", help="entries after (default 3)")
    commands.add("reindex", run_reindex, "rebuild the search index from the files")
    commands.add("mcp", run_mcp, "serve search, show and timeline to Claude over stdio (MCP)")


#: The options ``fast_args`` reads: option -> (attribute, whether it takes a value).
_FAST_OPTIONS = {
    "--exact": ("exact", False),
    "--deep": ("deep", False),
    "--json": ("json", False),
    "--tier": ("tier", True),
    "--type": ("type", True),
    "--since": ("since", True),
    "--until": ("until", True),
    "--limit": ("limit", True),
    "--project": ("project", True),
}
_SHARED = ("project", "json")  # the options also read before the command
_APPENDED = ("tier", "type")


def fast_args(argv: list[str], aliases: Mapping[str, str]) -> SimpleNamespace | None:
    """``[--project DIR] [--json] search WORDS… [OPTIONS]`` read without argparse (importing and
    building it costs a search more than the query): the namespace argparse gives for the same
    line, or None for anything else (help, an unknown or abbreviated option, ``--``, a value that
    starts with ``-``, words split by an option, a limit that is not a number), which argparse
    then reads and answers as always. ``aliases``: the command line's other names of commands
    (:data:`memkeeper.cli.main.ALIASES`, given by its caller)."""
    from types import SimpleNamespace

    values: dict[str, object] = {"project": None, "json": False, "exact": False, "deep": False}
    values.update(tier=None, type=None, since=None, until=None, limit="10")
    command: str | None = None
    words: list[str] = []
    words_ended = False
    pending = iter(argv)
    for word in pending:
        if not word.startswith("-"):
            if command is None:
                if aliases.get(word, word) != "search":
                    return None
                command = word
            elif words_ended:
                return None  # argparse: "unrecognized arguments"
            else:
                words.append(word)
            continue
        words_ended = bool(words)
        name, has_value, value = word.partition("=")
        attr, takes_value = _FAST_OPTIONS.get(name, ("", False))
        if not attr or (command is None and attr not in _SHARED) or (has_value and not takes_value):
            return None
        if not takes_value:
            values[attr] = True
            continue
        if not has_value:
            value = next(pending, "-")
            if value.startswith("-"):
                return None
        if attr in _APPENDED:
            known = values[attr]
            values[attr] = [*known, value] if isinstance(known, list) else [value]
        else:
            values[attr] = value
    limit = values["limit"]
    if not words or not (isinstance(limit, str) and limit.isascii() and limit.isdigit()):
        return None
    values["limit"] = int(limit)
    return SimpleNamespace(command="search", query=words, handler=run_search, **values)


def run_search(args: argparse.Namespace) -> int:
    from ..core.search import QueryError, search
    from ..core.search.schema import ONE_SHOT_MMAP_BYTES
    from .output import EXIT_NOTHING, EXIT_OK, EXIT_USAGE, CliError, print_json, warn

    paths = paths_from(args)
    query = " ".join(args.query)
    if not args.json and paths.exists() and not paths.search_db.exists() and sys.stderr.isatty():
        _first_build(paths)  # a big store takes a while the first time: show it
    try:
        results = search(
            paths,
            query,
            tiers=_split(args.tier),
            types=_split(args.type),
            since=args.since,
            until=args.until,
            deep=True if args.deep else None,
            limit=args.limit,
            exact=args.exact,
            mmap_bytes=ONE_SHOT_MMAP_BYTES,  # this process reads and leaves
        )
    except QueryError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if args.json:
        print_json(results.to_dict())
    else:
        for note in results.warnings:
            warn(note)
        if results.mode == "ranked":
            _print_ranked(results, args.limit)
        else:
            _print_results(results)
    return EXIT_OK if results else EXIT_NOTHING


def hit_text(hit: Hit) -> Any:
    """One hit as Rich Text: location, date, snippet with the matches styled (no markup parsed)."""
    from rich.text import Text

    from ..core.search.model import file_line
    from .output import strip_control

    where = file_line(hit)
    head = Text("  ")
    head.append(strip_control(where), style="cyan")
    if hit.date:
        head.append("  " + strip_control(hit.date[:16]), style="dim")
    head.append("  " + hit.type, style="magenta")
    if hit.title and hit.tier in ("l3", "l1") and hit.title != hit.type:
        head.append("  " + strip_control(hit.title), style="bold")
    body = Text("    ")
    snippet = Text(strip_control(hit.snippet))
    for start, end in hit.highlights:
        snippet.stylize(MATCH_STYLE, start, end)
    body.append_text(snippet)
    around = []
    for turn in hit.exchange:
        line = Text("    " + strip_control(exchange_head(turn)), style="dim")
        near = Text(strip_control(turn.snippet), style="dim")
        for start, end in turn.highlights:
            near.stylize(MATCH_STYLE, start, end)
        line.append_text(near)
        around.append(line)
    foot = Text(f"    id {hit.id} · {hit.tokens} tokens", style="dim")
    return Text("\n").join([head, body, *around, foot])


def exchange_head(turn: Hit) -> str:
    """What leads a turn of a hit's exchange (the turn before or after it): where it is."""
    from ..core.search.model import file_line

    return f"↳ {turn.type} {file_line(turn)}: "


TIER_SHORT = {"memory": "memory.md", "l3": "L3", "l2": "L2", "l1": "L1"}


def _ranked_lines(results: SearchResults, limit: int) -> list[tuple[Hit, str]]:
    """The best hits across tiers, each with its head line (plain text)."""
    from ..core.search.model import file_line
    from .output import strip_control

    out: list[tuple[Hit, str]] = []
    for hit in results.ranked[:limit]:
        head = f"  {hit.confidence:.2f}  {TIER_SHORT[hit.tier]}  {file_line(hit)}"
        if hit.date:
            head += "  " + hit.date[:16]
        head += "  " + hit.type
        if hit.title and hit.tier in ("l3", "l1") and hit.title != hit.type:
            head += "  " + hit.title
        out.append((hit, strip_control(head)))
    return out


def _nothing_line(results: SearchResults) -> str:
    from .output import strip_control

    line = f'[MEMORY_KEEPER] No results for "{strip_control(results.query)}"'
    if results.mode == "ranked":
        line += ": none of its words occurs in the memory"
        if results.suggestions:
            line += " (did you mean: " + ", ".join(strip_control(s) for s in results.suggestions) + "?)"
    return line


def _plain_ranked(results: SearchResults, limit: int) -> None:
    from .output import strip_control

    lines: list[str] = []
    if not results:
        lines.append(_nothing_line(results))
    else:
        lines.append(f"[ranked] {_ranked_count(results, limit)}, best first (confidence · tier · where)")
    for hit, head in _ranked_lines(results, limit):
        lines.append(head)
        lines.append("    " + strip_control(hit.snippet))
        lines.extend("    " + strip_control(exchange_head(turn) + turn.snippet) for turn in hit.exchange)
        lines.append(f"    id {hit.id} · {hit.tokens} tokens")
    sys.stdout.write("\n".join(lines) + "\n")


def _print_ranked(results: SearchResults, limit: int) -> None:
    if not sys.stdout.isatty():
        _plain_ranked(results, limit)
        return
    from rich.text import Text

    from .output import console

    out = console()
    if not results:
        out.print(Text(_nothing_line(results)))
        return
    out.print(Text(f"[ranked] {_ranked_count(results, limit)}, best first", style="bold green"))
    for hit, _head in _ranked_lines(results, limit):
        style = (
            "bold green"
            if hit.tier_of_confidence == "high"
            else "yellow"
            if hit.tier_of_confidence == "suggested"
            else "dim"
        )
        line = Text("  ")
        line.append(f"{hit.confidence:.2f}", style=style)
        line.append(f"  {TIER_SHORT[hit.tier]}")
        line.append_text(hit_text(hit))
        out.print(line)


def _ranked_count(results: SearchResults, limit: int) -> str:
    """``22 matches, 10 shown (--limit N for more)``; ``3 matches`` when all are shown."""
    from ..core.basics.wording import counted

    text = counted(results.total, "match", "matches")
    if results.total > limit:
        text += f", {limit} shown (--limit N for more)"
    return text


def _tier_head(tier: TierResult) -> str:
    from ..core.basics.wording import counted

    more = "+" if tier.more else ""
    noun = counted(tier.total, "match", "matches").split(" ", 1)[1]
    return f"\n[{TIER_LABELS[tier.tier]}] {tier.total:,}{more} {noun}"


def _tier_rest(tier: TierResult) -> list[str]:
    """The line saying how many matches of the tier are not shown, if any are not."""
    hidden = tier.total - len(tier.hits)
    if hidden <= 0:
        return []
    more = "+" if tier.more else ""
    return [f"  ... and {hidden}{more} more (use --limit, --type or more words)"]


def _plain_results(results: SearchResults) -> None:
    """The same layout as plain text, for a pipe (no Rich to import: a pipe has no colours)."""
    import sys

    from ..core.search.model import file_line
    from .output import strip_control

    lines: list[str] = []
    if not results:
        lines.append(f'[MEMORY_KEEPER] No results for "{strip_control(results.query)}"')
    for tier in results.tiers:
        if not tier.hits:
            continue
        lines.append(_tier_head(tier))
        for hit in tier.hits:
            head = "  " + file_line(hit)
            if hit.date:
                head += "  " + hit.date[:16]
            head += "  " + hit.type
            if hit.title and hit.tier in ("l3", "l1") and hit.title != hit.type:
                head += "  " + hit.title
            lines.append(strip_control(head))
            lines.append("    " + strip_control(hit.snippet))
            lines.append(f"    id {hit.id} · {hit.tokens} tokens")
        lines.extend(_tier_rest(tier))
    sys.stdout.write("\n".join(lines) + "\n")


def _print_results(results: SearchResults) -> None:
    import sys

    if not sys.stdout.isatty():
        _plain_results(results)
        return
    from rich.text import Text

    from .output import console, strip_control

    out = console()
    if not results:
        out.print(Text(f'[MEMORY_KEEPER] No results for "{strip_control(results.query)}"'))
        return
    for tier in results.tiers:
        if not tier.hits:
            continue
        out.print(Text(_tier_head(tier), style="bold green"))
        for hit in tier.hits:
            out.print(hit_text(hit))
        for line in _tier_rest(tier):
            out.print(Text(line, style="dim"))


def _entry_or_error(fn: Any, *args: Any) -> Any:
    from ..core.search import NotFound
    from ..core.search.sources import parse_id
    from .output import EXIT_NOTHING, EXIT_USAGE, CliError

    if parse_id(str(args[1])) is None:  # not an id at all: bad usage, not "nothing found"
        raise CliError(f"not an entry id: {args[1]!r} (ids look like l2-3fa2b9c1d0-1234)", EXIT_USAGE)
    try:
        return fn(*args)
    except NotFound as exc:
        raise CliError(str(exc), EXIT_NOTHING) from None


def _entry_text(entry: Entry) -> Any:
    from rich.text import Text

    from ..core.search.model import file_line
    from .output import strip_control

    where = file_line(entry)
    head = Text()
    head.append(strip_control(where), style="cyan")
    if entry.date:
        head.append("  " + strip_control(entry.date), style="dim")
    head.append(f"  {entry.tier} {entry.type}", style="magenta")
    if entry.session:
        head.append("  session " + strip_control(entry.session), style="dim")
    head.append(f"  · {entry.tokens} tokens", style="dim")
    return Text("\n").join([head, Text(strip_control(entry.text))])


def run_show(args: argparse.Namespace) -> int:
    from ..core.search import show
    from ..core.sharing.provenance import entry_from
    from .output import EXIT_OK, console, print_json, strip_control

    paths = paths_from(args)
    entry: Entry = _entry_or_error(show, paths, args.id)
    author = entry_from(paths, entry.file, entry.line)
    if args.json:
        print_json({**entry.to_dict(), "from": author.to_dict() if author else None})
        return EXIT_OK
    out = console()
    if author:
        out.print(
            strip_control(f"from: {author.name} <{author.email}> (commit {author.commit}, {author.date})"),
            style="yellow",
            markup=False,
            highlight=False,
        )
    out.print(_entry_text(entry))
    return EXIT_OK


def run_timeline(args: argparse.Namespace) -> int:
    from rich.text import Text

    from ..core.search import timeline
    from .output import EXIT_OK, console, print_json

    found: Timeline = _entry_or_error(timeline, paths_from(args), args.id, args.before, args.after)
    if args.json:
        print_json(found.to_dict())
        return EXIT_OK
    out = console()
    for hit in found.before:
        out.print(hit_text(hit))
    out.print(Text("▶ ", style="bold green"), _entry_text(found.anchor))
    for hit in found.after:
        out.print(hit_text(hit))
    return EXIT_OK


def _with_progress(build: Any, paths: Any, to_stderr: bool = False) -> Any:
    """Run ``build(paths, progress)`` under a Rich progress bar (bytes read of the total)."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    from .output import console

    out = Console(stderr=True, highlight=False) if to_stderr else console()
    with Progress(
        TextColumn("indexing"), BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=out
    ) as bar:
        task = bar.add_task("index", total=None)

        def progress(done: int, total: int, _file: str) -> None:
            bar.update(task, completed=done, total=total or None)

        return build(paths, progress)


def _first_build(paths: Any) -> None:
    from ..core.search import IndexBusy, refresh

    try:
        _with_progress(refresh, paths, to_stderr=True)
    except (IndexBusy, OSError):
        pass  # the search itself copes (a full scan)


def run_reindex(args: argparse.Namespace) -> int:
    from ..core.search import reindex
    from .output import EXIT_NOTHING, EXIT_OK, CliError, console, no_store_message, print_json

    paths = paths_from(args)
    if not paths.exists():
        raise CliError(no_store_message(paths), EXIT_NOTHING)
    if args.json:
        stats = reindex(paths)
    else:
        stats = _with_progress(reindex, paths)
    report = {
        "files": stats.files_read,
        "bytes": stats.bytes_read,
        "entries": stats.docs_added,
        "seconds": round(stats.seconds, 2),
        "notes": stats.notes,
    }
    if args.json:
        print_json(report)
    else:
        mb = stats.bytes_read / 1e6
        rate = mb / stats.seconds if stats.seconds > 0 else 0.0
        console().print(
            f"indexed {stats.files_read} files, {mb:.1f} MB, {stats.docs_added} entries "
            f"in {stats.seconds:.1f} s ({rate:.1f} MB/s)",
            markup=False,
        )
    return EXIT_OK


def run_mcp(args: argparse.Namespace) -> int:
    from ..plugin.mcp_server import serve

    serve(args.project)
    return 0
