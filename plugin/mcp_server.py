"""The MCP server (``memkeeper mcp``): lets Claude recall memory on demand, over stdio.

Three tools, in the progressive-disclosure order: ``search`` returns compact hits
(one line each, with a stable id and its size in tokens), ``timeline`` what came just
before and after a hit, ``show`` the whole entry. Answers are plain text, short on
purpose: Claude pays for every token it reads. The project is ``--project``, else
``$CLAUDE_PROJECT_DIR``, else the working directory Claude Code starts the server in.
"""

from __future__ import annotations

import threading
from typing import Any

from memkeeper.core.search import (
    NotFound,
    QueryError,
    SearchResults,
    Timeline,
    refresh,
    search,
    show,
    timeline,
)
from memkeeper.core.search.model import Entry, Hit
from memkeeper.core.store import StorePaths, paths_for

INSTRUCTIONS = (
    "Long-term memory of this project (memkeeper). Start with `search` (compact hits with ids); "
    "use `timeline` on an id for the surrounding context, and `show` only for the entries you need. "
    "Tiers: memory (memory.md and project notes), l3 (archive summaries), l2 (archives), "
    "l1 (raw sessions, with deep=true)."
)
MAX_LIMIT = 50
#: A first build of a big store takes minutes: a search waits for it rather than
#: reading every file itself (which would take as long, twice).
LOCK_WAIT_SECONDS = 300.0


def hit_line(hit: Hit) -> str:
    where = hit.file + (f":{hit.line}" if hit.line else "")
    date = f" {hit.date[:16]}" if hit.date else ""
    return f"- {hit.id} [{hit.tier} {hit.type}{date}] {where} ({hit.tokens} tok): {hit.marked_snippet('**', '**')}"


def format_results(results: SearchResults) -> str:
    lines: list[str] = []
    if not results:
        lines.append(f'No results for "{results.query}".')
        if not any(t.tier == "l1" for t in results.tiers):
            lines.append("Try deep=true to include the raw sessions (l1), or fewer words.")
        lines.extend(f"note: {w}" for w in results.warnings)
        return "\n".join(lines)
    for tier in results.tiers:
        if not tier.hits:
            continue
        more = "+" if tier.more else ""
        lines.append(f"[{tier.tier}] {tier.total}{more} match(es)")
        lines.extend(hit_line(h) for h in tier.hits)
    lines.extend(f"note: {w}" for w in results.warnings)
    lines.append("Use timeline(id) for context or show(id) for the full entry.")
    return "\n".join(lines)


def format_entry(entry: Entry) -> str:
    where = entry.file + (f":{entry.line}" if entry.line else "")
    meta = [f"{entry.id} [{entry.tier} {entry.type}] {where}"]
    if entry.date:
        meta.append(f"date: {entry.date}")
    if entry.session:
        meta.append(f"session: {entry.session}")
    meta.append(f"tokens: {entry.tokens}")
    return "\n".join(meta) + "\n\n" + entry.text


def format_timeline(found: Timeline) -> str:
    lines = [hit_line(h) for h in found.before]
    lines.append(">>> " + format_entry(found.anchor).replace("\n", "\n    "))
    lines.extend(hit_line(h) for h in found.after)
    return "\n".join(lines)


def build_server(paths: StorePaths) -> Any:
    """The MCPServer with the three tools bound to one store."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("memkeeper", instructions=INSTRUCTIONS)

    @server.tool(
        name="search",
        description=(
            'Search the project\'s long-term memory. Words are ANDed, "quoted" is a phrase, substring '
            "match (Korean works). Returns compact hits grouped by tier (memory, l3, l2, l1) with ids. "
            "Options: tiers (list), types (decision|theme|issue|overall|section|user|assistant|tool|"
            "tool_result), since/until (YYYY-MM-DD), deep (include raw sessions), limit (per tier)."
        ),
        structured_output=False,
    )
    def search_tool(
        query: str,
        tiers: list[str] | None = None,
        types: list[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        deep: bool = False,
        limit: int = 8,
    ) -> str:
        try:
            results = search(
                paths,
                query,
                tiers=tiers,
                types=types,
                since=since,
                until=until,
                deep=deep,
                limit=max(1, min(limit, MAX_LIMIT)),
                lock_wait=LOCK_WAIT_SECONDS,
            )
        except QueryError as exc:
            return f"error: {exc}"
        return format_results(results)

    @server.tool(
        name="show",
        description="The full text of one memory entry, by the id a search or timeline returned.",
        structured_output=False,
    )
    def show_tool(id: str) -> str:
        try:
            return format_entry(show(paths, id))
        except NotFound as exc:
            return f"error: {exc}"

    @server.tool(
        name="timeline",
        description="What came just before and after a memory entry (same session or file), by id.",
        structured_output=False,
    )
    def timeline_tool(id: str, before: int = 3, after: int = 3) -> str:
        try:
            found = timeline(paths, id, max(0, min(before, 20)), max(0, min(after, 20)))
        except NotFound as exc:
            return f"error: {exc}"
        return format_timeline(found)

    return server


def warm_up(paths: StorePaths) -> threading.Thread:
    """Bring the index up to date in the background, so the first search is quick."""

    def work() -> None:
        try:
            refresh(paths)
        except Exception:
            pass

    thread = threading.Thread(target=work, name="memkeeper-index-warm-up", daemon=True)
    thread.start()
    return thread


def serve(project: str | None = None) -> None:
    """Run the server on stdio until the client closes it."""
    paths = paths_for(project)
    if paths.exists():
        warm_up(paths)
    build_server(paths).run("stdio")
