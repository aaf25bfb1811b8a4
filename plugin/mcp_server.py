"""The MCP server (``memkeeper mcp``): lets Claude recall memory on demand, over stdio.

Three tools, in the progressive-disclosure order: ``search`` returns ranked hits (the
high-confidence ones expanded with their text, the rest one line each with a stable id
and its size in tokens), ``timeline`` what came just before and after a hit, ``show`` the
whole entry. Answers are plain text, short on purpose: Claude pays for every token it
reads. The project is ``--project``, else ``$CLAUDE_PROJECT_DIR``, else the working
directory Claude Code starts the server in.

Claude Code gives up on a server that does not answer its first request within a few
seconds, and importing the MCP SDK alone takes longer than that on a busy machine. So
the server speaks the protocol itself: newline-delimited JSON-RPC 2.0 over stdio, the
``initialize`` handshake, ``ping``, ``tools/list`` and ``tools/call`` — stdlib only, ready
in the time Python starts. The search engine is imported by the first tool call (or by
the index warm-up that starts once the handshake is answered). Tool calls run on worker
threads, so a long first index build never stalls ``ping``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from ..core.store.paths import StorePaths, paths_for

if TYPE_CHECKING:
    from ..core.recall.lookup import RecallServer
    from ..core.search.model import Entry, Hit, SearchResults, Timeline

SERVER_NAME = "memkeeper"
#: Handshake versions of the protocol this server speaks (oldest first); a client asking
#: for another gets the newest, as the specification says.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
INSTRUCTIONS = (
    "Long-term memory of this project (memkeeper): decisions, facts and past sessions. Ask `search` "
    "in plain words — a natural question works as well as keywords. Confident hits come with their "
    "text; the others are one line with an id: use `timeline` on an id for the surrounding context "
    "and `show` for the full entry. Tiers: memory (memory.md and project notes), l3 (archive "
    "summaries), l2 (archives), l1 (raw sessions, with deep=true)."
)
MAX_LIMIT = 50
#: A first build of a big store takes minutes: a search waits for it rather than
#: reading every file itself (which would take as long, twice).
LOCK_WAIT_SECONDS = 300.0
#: Confidence tiers: at most this many high-confidence hits are expanded, each up to
#: EXPAND_CHARS of its text, all together up to EXPAND_BUDGET characters.
MAX_EXPANDED = 3
EXPAND_CHARS = 1_200
EXPAND_BUDGET = 3_000
#: Tool calls running at once; more wait their turn.
MAX_CALLS = 4

# JSON-RPC error codes
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class ToolError(Exception):
    """A tool call that cannot be answered: reported to Claude as the tool's error text."""


# --- tool descriptions (JSON Schema by hand: no pydantic on the start-up path) ----------

_STR_LIST = {"type": "array", "items": {"type": "string"}}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "search",
        "description": (
            "Search the project's long-term memory. Ask in plain words: a natural question "
            '("why did we move the queue to redis?") works, and so do keywords; Korean too. No word is '
            'required; hits are ranked, more and rarer matching words first; a query that is one "quoted '
            'phrase" finds that phrase as written. A session hit (l1) comes with the turn before and after '
            "it (↳). Confident hits come expanded with their text; the rest are compact lines with an id for "
            "`show` or `timeline`. Set exact=true for the grep-like mode (every word as a substring). "
            "Options: tiers (memory|l3|l2|l1), types (decision|theme|issue|overall|section|user|assistant|"
            "tool|tool_result), since/until (YYYY-MM-DD), deep (false leaves out the raw sessions, l1; "
            "the exact mode reads them only with true), limit (hits per tier)."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "a question or keywords, in plain words"},
                "tiers": _STR_LIST,
                "types": _STR_LIST,
                "since": {"type": "string", "description": "YYYY-MM-DD"},
                "until": {"type": "string", "description": "YYYY-MM-DD"},
                "deep": {"type": "boolean"},
                "exact": {"type": "boolean", "default": False},
                "limit": {"type": "integer", "default": 8, "minimum": 1, "maximum": MAX_LIMIT},
            },
            "required": ["query"],
        },
    },
    {
        "name": "show",
        "description": "The full text of one memory entry, by the id a search or timeline returned.",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
    },
    {
        "name": "timeline",
        "description": "What came just before and after a memory entry (same session or file), by id.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "before": {"type": "integer", "default": 3, "minimum": 0, "maximum": 20},
                "after": {"type": "integer", "default": 3, "minimum": 0, "maximum": 20},
            },
            "required": ["id"],
        },
    },
]


# --- answers as text ---------------------------------------------------------------------


def hit_line(hit: Hit, session_title: str | None = None) -> str:
    from ..core.search.model import file_line

    where = file_line(hit)
    date = f" {hit.date[:16]}" if hit.date else ""
    named = f' (session "{session_title}")' if session_title else ""
    return (
        f"- {hit.id} [{hit.tier} {hit.type}{date}] {where}{named} ({hit.tokens} tok): "
        f"{hit.marked_snippet('**', '**')}"
    )


def exchange_line(turn: Hit) -> str:
    """A turn of a hit's exchange (the turn before or after it), under the hit's line."""
    from ..core.search.model import file_line

    return f"↳ {turn.id} [{turn.type}] {file_line(turn)}: {turn.marked_snippet('**', '**')}"


def _expanded_ids(results: SearchResults) -> list[str]:
    """The hits worth their text: high confidence, best first, at most MAX_EXPANDED."""
    from ..core.search import HIGH_CONFIDENCE

    confident = [h for h in results.hits if h.confidence >= HIGH_CONFIDENCE]
    confident.sort(key=lambda h: -h.confidence)  # stable: tier order breaks ties
    return [h.id for h in confident[:MAX_EXPANDED]]


def _expansion(paths: StorePaths, hit: Hit, budget: int) -> str:
    from ..core.search import NotFound, show

    try:
        text = show(paths, hit.id).text.strip()
    except NotFound:
        return ""
    limit = min(EXPAND_CHARS, budget)
    if len(text) > limit:
        text = text[: max(0, limit - 1)].rstrip() + "…"
    return "  " + text.replace("\n", "\n  ")


def _session_titles(paths: StorePaths, results: SearchResults) -> dict[str, str]:
    if not any(h.tier == "l1" for h in results.hits):
        return {}
    from ..core.capture.titles import session_titles

    return session_titles(paths)


def _title_of(titles: dict[str, str], hit: Hit) -> str | None:
    if hit.tier != "l1":
        return None
    from ..core.capture.titles import title_key

    return titles.get(title_key(hit.file.rsplit("/", 1)[-1]))


def format_results(results: SearchResults, paths: StorePaths | None = None) -> str:
    """The search answer: per tier, expanded confident hits, then compact ones."""
    lines: list[str] = []
    if not results:
        lines.append(f'No results for "{results.query}".')
        if results.suggestions:
            lines.append("Did you mean: " + ", ".join(results.suggestions) + "?")
        if not any(t.tier == "l1" for t in results.tiers):
            lines.append("Try deep=true to include the raw sessions (l1), or other words.")
        lines.extend(f"note: {w}" for w in results.warnings)
        return "\n".join(lines)
    expand = _expanded_ids(results) if paths is not None else []
    titles = _session_titles(paths, results) if paths is not None else {}
    budget = EXPAND_BUDGET
    for tier in results.tiers:
        if not tier.hits:
            continue
        more = "+" if tier.more else ""
        lines.append(f"[{tier.tier}] {tier.total}{more} match(es)")
        for hit in tier.hits:
            lines.append(hit_line(hit, _title_of(titles, hit)))
            lines.extend("  " + exchange_line(turn) for turn in hit.exchange)
            if paths is not None and hit.id in expand and budget > 0:
                text = _expansion(paths, hit, budget)
                budget -= len(text)
                if text:
                    lines.append(text)
    lines.extend(f"note: {w}" for w in results.warnings)
    lines.append("Use timeline(id) for context or show(id) for the full entry.")
    return "\n".join(lines)


def format_entry(entry: Entry, session_title: str | None = None) -> str:
    from ..core.search.model import file_line

    where = file_line(entry)
    meta = [f"{entry.id} [{entry.tier} {entry.type}] {where}"]
    if entry.date:
        meta.append(f"date: {entry.date}")
    if entry.session:
        meta.append(f"session: {entry.session}" + (f' "{session_title}"' if session_title else ""))
    meta.append(f"tokens: {entry.tokens}")
    return "\n".join(meta) + "\n\n" + entry.text


def format_timeline(found: Timeline) -> str:
    lines = [hit_line(h) for h in found.before]
    lines.append(">>> " + format_entry(found.anchor).replace("\n", "\n    "))
    lines.extend(hit_line(h) for h in found.after)
    return "\n".join(lines)


# --- the tools ---------------------------------------------------------------------------


def _arg(args: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    value = args.get(name, default)
    if value is None:
        return default
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise ToolError(f"error: {name} has the wrong type")
    return value


def _str_list(args: dict[str, Any], name: str) -> list[str] | None:
    value = _arg(args, name, list)
    if value is None:
        return None
    if not all(isinstance(v, str) for v in value):
        raise ToolError(f"error: {name} must be a list of strings")
    return [str(v) for v in value]


def tool_search(paths: StorePaths, args: dict[str, Any]) -> str:
    from ..core.search import QueryError, search

    query = _arg(args, "query", str)
    if query is None:
        raise ToolError("error: query is required")
    try:
        results = search(
            paths,
            query,
            tiers=_str_list(args, "tiers"),
            types=_str_list(args, "types"),
            since=_arg(args, "since", str),
            until=_arg(args, "until", str),
            deep=_arg(args, "deep", bool),
            limit=max(1, min(int(_arg(args, "limit", int, 8)), MAX_LIMIT)),
            lock_wait=LOCK_WAIT_SECONDS,
            exact=bool(_arg(args, "exact", bool, False)),
        )
    except QueryError as exc:
        raise ToolError(f"error: {exc}") from None
    return format_results(results, paths)


def tool_show(paths: StorePaths, args: dict[str, Any]) -> str:
    from ..core.search import NotFound, show

    hit_id = _arg(args, "id", str)
    if not hit_id:
        raise ToolError("error: id is required")
    try:
        entry = show(paths, hit_id)
    except NotFound as exc:
        raise ToolError(f"error: {exc}") from None
    title = None
    if entry.tier == "l1":
        from ..core.capture.titles import session_title

        title = session_title(paths, entry.file)
    return format_entry(entry, title)


def tool_timeline(paths: StorePaths, args: dict[str, Any]) -> str:
    from ..core.search import NotFound, timeline

    hit_id = _arg(args, "id", str)
    if not hit_id:
        raise ToolError("error: id is required")
    before = max(0, min(int(_arg(args, "before", int, 3)), 20))
    after = max(0, min(int(_arg(args, "after", int, 3)), 20))
    try:
        found = timeline(paths, hit_id, before, after)
    except NotFound as exc:
        raise ToolError(f"error: {exc}") from None
    return format_timeline(found)


HANDLERS: dict[str, Callable[[StorePaths, dict[str, Any]], str]] = {
    "search": tool_search,
    "show": tool_show,
    "timeline": tool_timeline,
}


# --- JSON-RPC over stdio -------------------------------------------------------------------


class Server:
    """One client on a pair of byte streams: newline-delimited JSON-RPC 2.0 messages."""

    def __init__(self, paths: StorePaths, reader: IO[bytes], writer: IO[bytes], warm: bool = True) -> None:
        self.paths = paths
        self.reader = reader
        self.writer = writer
        self.warm = warm
        self._write_lock = threading.Lock()
        self._slots = threading.Semaphore(MAX_CALLS)
        self._calls: list[threading.Thread] = []
        self._warmed = False
        self.recall: RecallServer | None = None

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        with self._write_lock:
            try:
                self.writer.write(data)
                self.writer.flush()
            except (OSError, ValueError):  # the client went away
                pass

    def reply(self, msg_id: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def error(self, msg_id: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def run(self) -> None:
        """Serve until the client closes stdin, then let the running calls finish."""
        try:
            for raw in self.reader:
                if raw.strip():
                    self.handle_line(raw)
            for call in self._calls:
                call.join()
        finally:
            if self.recall is not None:
                self.recall.close()

    def handle_line(self, raw: bytes) -> None:
        try:
            message = json.loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            self.error(None, PARSE_ERROR, "parse error: not JSON")
            return
        for item in message if isinstance(message, list) else [message]:
            self.handle(item)

    def handle(self, message: Any) -> None:
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            if isinstance(message, dict) and ("result" in message or "error" in message):
                return  # an answer to a request we never send
            self.error(
                message.get("id") if isinstance(message, dict) else None, INVALID_REQUEST, "invalid request"
            )
            return
        method, msg_id = message["method"], message.get("id")
        raw_params = message.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if "id" not in message:  # a notification: nothing to answer
            if method == "notifications/initialized":
                self.start_warm_up()
            return
        if method == "initialize":
            self.reply(msg_id, self.initialize_result(params))
            self.start_warm_up()
        elif method == "ping":
            self.reply(msg_id, {})
        elif method == "tools/list":
            self.reply(msg_id, {"tools": TOOLS})
        elif method == "tools/call":
            self.start_call(msg_id, params)
        else:
            self.error(msg_id, METHOD_NOT_FOUND, f"method not found: {method}")

    @staticmethod
    def initialize_result(params: dict[str, Any]) -> dict[str, Any]:
        from .. import __version__

        requested = params.get("protocolVersion")
        version = requested if requested in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "version": __version__},
            "instructions": INSTRUCTIONS,
        }

    def start_call(self, msg_id: Any, params: dict[str, Any]) -> None:
        name, args = params.get("name"), params.get("arguments")
        handler = HANDLERS.get(name) if isinstance(name, str) else None
        if handler is None:
            self.error(msg_id, INVALID_PARAMS, f"unknown tool: {name!r:.60}")
            return
        if args is not None and not isinstance(args, dict):
            self.error(msg_id, INVALID_PARAMS, "arguments must be an object")
            return
        thread = threading.Thread(
            target=self.call, args=(msg_id, handler, args or {}), name=f"memkeeper-mcp-{name}", daemon=True
        )
        self._calls = [t for t in self._calls if t.is_alive()] + [thread]
        thread.start()

    def call(
        self, msg_id: Any, handler: Callable[[StorePaths, dict[str, Any]], str], args: dict[str, Any]
    ) -> None:
        with self._slots:
            try:
                text, failed = handler(self.paths, args), False
            except ToolError as exc:
                text, failed = str(exc), True
            except Exception as exc:  # a bug must not take the server down
                text, failed = f"error: {type(exc).__name__}: {exc}", True
        self.reply(msg_id, {"content": [{"type": "text", "text": text}], "isError": failed})

    def start_warm_up(self) -> None:
        """Once the handshake is answered: refresh the index, serve the hook's per-prompt recall."""
        if self._warmed or not self.warm:
            return
        self._warmed = True
        if self.paths.exists():
            warm_up(self.paths)
            from ..core.recall.lookup import RecallServer

            self.recall = RecallServer(self.paths)  # set first: run()'s cleanup closes it whenever it ends
            try:
                started = self.recall.start()
            except Exception:  # (a system without what it needs): the hook looks up itself
                started = False
            if not started:
                self.recall.close()
                self.recall = None


def warm_up(paths: StorePaths) -> threading.Thread:
    """Bring the index up to date in the background, so the first search is quick."""

    def work() -> None:
        try:
            from ..core.search import refresh

            refresh(paths)
        except Exception:
            pass

    thread = threading.Thread(target=work, name="memkeeper-index-warm-up", daemon=True)
    thread.start()
    return thread


def serve(project: str | None = None) -> None:
    """Run the server on stdio until the client closes it (or ends it with SIGTERM)."""
    import signal

    signal.signal(signal.SIGTERM, _exit_on_term)
    from ..core.store.boundary import StoreLinkError
    from ..core.store.paths import StoreRefused

    try:
        paths = paths_for(project)
    except (StoreRefused, StoreLinkError) as exc:  # no store here, or one holding a link: serve nothing
        sys.stderr.write(f"memkeeper mcp: {exc}\n")
        return
    try:
        Server(paths, sys.stdin.buffer, sys.stdout.buffer).run()
    finally:
        _leave()


def _exit_on_term(signum: int, frame: object) -> None:
    raise SystemExit(0)  # unwinds run(), which removes the recall socket


def _leave() -> None:
    """End the process at once with status 0, once run() has cleaned up (socket removed, calls answered).

    The interpreter's teardown is skipped: daemon threads (the index warm-up, the recall
    server's warm-up and answers) may be inside an import or a SQLite call, and tearing the
    interpreter down under them can fail or hang after the work is done.
    """
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM cannot cut the flush short
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)
