"""SearchScreen (/): results across tiers as you type, grouped in tier order, with filters.

Each keystroke starts a search in a thread worker through
:func:`memkeeper.core.search.search`; an older answer that arrives late is dropped.
Enter opens the highlighted hit over this screen (:class:`HitScreen`), so Esc comes back
to the same query, filters and selection. The first deep search of a session brings the
index up to date with a progress bar instead of a blank list. ``since:DATE`` and
``until:DATE`` in the query filter by date, as the CLI's options do.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from ...core.basics.timestamps import local_time
from ...core.basics.wording import counted
from ...core.search.model import file_line
from ...core.store.paths import StorePaths
from .. import keymap
from ..messages import PrefChosen, SearchLeft
from ..model import SEARCH_PAGE, SearchState
from ..text import fg_style, literal, visible

TIER_CHOICES: tuple[str | None, ...] = (None, "memory", "l3", "l2", "l1")
TIER_NAMES = {"memory": "memory (current)", "l3": "L3 summaries", "l2": "L2 archives", "l1": "L1 sessions"}
DATE_FILTER = re.compile(r"\b(since|until):(\d{4}-\d{2}(?:-\d{2})?)\b")


def type_choices() -> tuple[str | None, ...]:
    """Every hit type, in tier order, after ``None`` (all)."""
    from ...core.search.sources import TYPES_BY_TIER

    seen: list[str] = []
    for types in TYPES_BY_TIER.values():
        seen.extend(t for t in types if t not in seen)
    return (None, *seen)


FRESH_SECONDS = 2.0


@dataclass(frozen=True)
class Request:
    """One search to run: the words, the filters, and its serial number."""

    query: str
    tier: str | None
    kind: str | None
    deep: bool
    since: str | None
    until: str | None
    limit: int
    serial: int
    exact: bool = False


def _same_search(request: Request, other: Request | None) -> bool:
    """Whether two requests ask the same thing (their serial numbers aside)."""
    return other is not None and replace(request, serial=0) == replace(other, serial=0)


def split_dates(query: str) -> tuple[str, str | None, str | None]:
    """``webhook since:2026-11-01`` → (``webhook``, ``2026-11-01``, None)."""
    found = dict(DATE_FILTER.findall(query))
    words = DATE_FILTER.sub(" ", query)
    return " ".join(words.split()), found.get("since"), found.get("until")


class HitList(OptionList):
    """Search hits grouped under tier headings; styles come from the theme (``styles/widgets.tcss``)."""

    COMPONENT_CLASSES = {"hitlist--match", "hitlist--meta"}


class SearchScreen(Screen[None]):
    """Type to search; F2/F3/F4 filter by tier, type and deep; Enter opens the hit over this screen."""

    BINDINGS = keymap.bindings("search")
    """Keys of the search screen (typing goes to the query; ``since:`` / ``until:`` filter dates)."""

    def __init__(self, paths: StorePaths, state: SearchState | None = None) -> None:
        super().__init__()
        self._paths = paths
        self._state = state or SearchState()
        self._serial = 0
        self._hits: list[Any] = []
        self._terms: tuple[str, ...] = ()
        self._types = type_choices()
        self._summary = ""
        self._searching = False
        self._queued: Request | None = None
        self._answered_serial = 0  # the serial of the last search answered (shown or failed)
        self._asked: Request | None = None
        self._restore_highlight = self._state.highlighted
        #: Options of the results on screen still to be added below the first screen.
        self._rest: list[Option] | None = None
        #: When the index was last brought up to date for a (tier, deep) choice. Keystrokes
        #: within FRESH_SECONDS of that skip the per-file freshness check (25-50 ms on a
        #: large store); the first search, a new filter and any pause in typing still do it.
        self._fresh_at: dict[tuple[str | None, bool], float] = {}

    @property
    def state(self) -> SearchState:
        """The query, filters, page size and selection as they are now."""
        return self._state

    @property
    def hits(self) -> list[Any]:
        """The hits on screen, in list order."""
        return self._hits

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield Input(
            value=self._state.query,
            placeholder="search memory, summaries, archives, sessions…  (since:YYYY-MM-DD until:…)",
            id="query",
        )
        yield Static("", id="filters", markup=False)
        yield ProgressBar(total=None, show_eta=False, id="search-progress")
        yield HitList(id="results")
        yield Footer()

    def on_mount(self) -> None:
        query = self.query_one(Input)
        query.cursor_blink = not self.app.is_headless  # a blinking cursor makes screenshots random
        query.focus()
        self.query_one("#search-progress").display = False
        self._show_filters()
        if self._state.query:
            self.run_search()

    # -- filters ---------------------------------------------------------------------------

    def _show_filters(self) -> None:
        """The hit count first (it must not be cut), then each filter; one that is not the
        default is marked, so filters kept from the last search are seen."""
        state = self._state
        tier = TIER_CHOICES[state.tier_index] or "all"
        kind = self._types[state.type_index] or "all"
        marked = "bold reverse"
        parts: list[Text] = []
        if self._summary:
            parts.append(Text(self._summary, style="bold"))
        parts.append(Text(f"tier: {tier} (F2)", style=marked if state.tier_index else ""))
        parts.append(Text(f"type: {kind} (F3/F6)", style=marked if state.type_index else ""))
        parts.append(Text(f"deep: {'on' if state.deep else 'off'} (F4)", style="" if state.deep else marked))
        if state.exact:
            parts.append(Text("exact substrings (F5)", style=marked))
        _, since, until = split_dates(state.query)
        if since or until:
            parts.append(Text(f"dates: {since or '…'} → {until or '…'}", style=marked))
        self.query_one("#filters", Static).update(Text(" · ").join(parts))

    def _set_filters(self, **changes: Any) -> None:
        self._state = replace(self._state, limit=SEARCH_PAGE, **changes)
        self._show_filters()
        self.run_search()

    def action_cycle_tier(self) -> None:
        self._set_filters(tier_index=(self._state.tier_index + 1) % len(TIER_CHOICES))

    def action_cycle_type(self) -> None:
        self._set_filters(type_index=(self._state.type_index + 1) % len(self._types))

    def action_cycle_type_back(self) -> None:
        """The type before (F6; shift+F3 too where the terminal's shift+F3 reaches us, which xterm's
        does not: Textual reads it as a cursor position report): back to "all" without going round."""
        self._set_filters(type_index=(self._state.type_index - 1) % len(self._types))

    def action_toggle_exact(self) -> None:
        """Ranked (the default) or exact: every word as a substring, as grep would."""
        self._set_filters(exact=not self._state.exact)

    def action_toggle_deep(self) -> None:
        self._set_filters(deep=not self._state.deep)
        self.post_message(PrefChosen("deep", self._state.deep))  # the next search's default

    # -- searching ---------------------------------------------------------------------------

    @on(Input.Changed, "#query")
    def _query_changed(self, event: Input.Changed) -> None:
        if event.value != self._state.query:
            self._state = replace(self._state, query=event.value, limit=SEARCH_PAGE)
        self.run_search()

    @property
    def idle(self) -> bool:
        """No search under way or queued, and the last one's results all shown."""
        return not self._searching and self._queued is None and self._rest is None

    def run_search(self) -> None:
        """Search for the current query and filters (in a thread)."""
        state = self._state
        words, since, until = split_dates(state.query)
        if not words.strip():
            self._serial += 1
            self._asked = None
            self._hits = []
            self._summary = ""
            self._rest = None
            self.query_one(HitList).clear_options()
            self._show_filters()
            return
        request = Request(
            words,
            TIER_CHOICES[state.tier_index],
            self._types[state.type_index],
            state.deep,
            since,
            until,
            state.limit,
            self._serial + 1,
            state.exact,
        )
        if _same_search(request, self._asked):
            # The same words and filters as the last search asked (on screen, under way or
            # queued): a key that changed nothing; that answer stands.
            return
        self._serial += 1
        self._asked = request
        if self._searching:
            # One search thread at a time: a slow query is not joined by one per keystroke;
            # the latest request runs as soon as it finishes (older ones are skipped).
            self._queued = request
            return
        self._searching = True
        self._search_worker(request)

    def _search_done(self) -> None:
        self._searching = False
        self.query_one("#search-progress").display = False
        if self._queued is not None:
            request, self._queued = self._queued, None
            if request.serial == self._serial:
                self._searching = True
                self._search_worker(request)

    @work(thread=True, group="search", exit_on_error=False, description="search")
    def _search_worker(self, request: Request) -> None:
        from ...core.search import search

        started = time.perf_counter()
        scope = (request.tier, request.deep)
        stale = started - self._fresh_at.get(scope, float("-inf")) > FRESH_SECONDS
        try:
            if stale and not self._fresh_at and request.deep:
                self._refresh_with_progress(request.serial)
                stale = False
            results = search(
                self._paths,
                request.query,
                tiers=[request.tier] if request.tier else None,
                types=[request.kind] if request.kind else None,
                since=request.since,
                until=request.until,
                deep=request.deep,
                limit=request.limit,
                refresh=stale,
                exact=request.exact,
            )
            self._fresh_at[scope] = started
        except Exception as exc:  # a bad query is one line, not a crash
            self.app.call_from_thread(self._answered, request.serial, self._failed, str(exc))
            return
        elapsed = (time.perf_counter() - started) * 1000
        # One trip to the event loop: the results shown, then the next search started.
        self.app.call_from_thread(self._answered, request.serial, self._show_results, results, elapsed)

    def _answered(self, serial: int, show: Callable[..., None], *args: Any) -> None:
        try:
            show(*args, serial)
        finally:
            self._answered_serial = max(self._answered_serial, serial)
            self._search_done()

    def _refresh_with_progress(self, serial: int) -> None:
        """Bring the whole index up to date, reporting its progress (the first deep search)."""
        from ...core.search import IndexBusy, refresh

        last = [0.0]

        def progress(done: int, total: int, current: str) -> None:
            now = time.perf_counter()
            if now - last[0] >= 0.1 or done >= total:
                last[0] = now
                self.post_message(SearchScreen.IndexProgress(done, total, current, serial))

        try:
            refresh(self._paths, progress)
        except IndexBusy:
            pass  # another process is updating it: search reads what is there

    @dataclass
    class IndexProgress(Message):
        """The index update before the first search: ``done`` of ``total`` bytes (for search ``serial``)."""

        done: int
        total: int
        current: str
        serial: int

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, SearchScreen.IndexProgress)

    @on(IndexProgress)
    def _index_progress(self, message: IndexProgress) -> None:
        if message.serial <= self._answered_serial:
            return  # late news of a search already answered: its results are on screen
        bar = self.query_one("#search-progress", ProgressBar)
        if message.done >= message.total:
            bar.display = False
            return
        bar.display = True
        bar.update(total=max(1, message.total), progress=message.done)
        name = message.current.rsplit("/", 1)[-1]
        self._summary = f"indexing {message.done / 1e6:,.0f} of {message.total / 1e6:,.0f} MB ({name})"
        self._show_filters()

    def _failed(self, error: str, serial: int) -> None:
        if serial != self._serial or not self.is_attached:
            return
        self._asked = None  # asking again may work (the index was busy)
        self._hits = []
        self._summary = f"error: {error}"
        self._rest = None
        self.query_one(HitList).clear_options()
        self._show_filters()

    def _show_results(self, results: Any, elapsed_ms: float, serial: int) -> None:
        if serial != self._serial or not self.is_attached:
            return  # a newer keystroke already asked again (or the screen is closed)
        hit_list = self.query_one(HitList)
        match_style = hit_list.get_component_rich_style("hitlist--match")
        meta_style = fg_style(hit_list.get_component_rich_style("hitlist--meta"))
        options, self._hits = result_options(results, match_style, meta_style)
        self._terms = tuple(results.terms)
        keep = hit_list.highlighted
        hit_list.clear_options()
        self._rest = None
        rest: list[Option] = []
        if options:
            wanted = self._restore_highlight if self._restore_highlight is not None else keep
            self._restore_highlight = None
            chosen = _selectable(options, wanted)
            # What fills the list's height first, the rest of the page after that frame: laying
            # out every hit's wrapped lines is most of a keystroke's drawing time (80 hits).
            first = max(chosen + 1, first_screen(options, hit_list.size.height or self.app.size.height))
            rest = options[first:]
            hit_list.add_options(options[:first])
            hit_list.highlighted = chosen
        else:
            hit_list.add_option(Option(Text("no results", style="italic"), disabled=True))
        warnings = f" · {results.warnings[0]}" if getattr(results, "warnings", ()) else ""
        self._summary = f"{counted(len(self._hits), 'hit')}{warnings}"
        self._show_filters()
        shown = SearchScreen.ResultsShown(len(self._hits), elapsed_ms)
        if rest:
            self._rest = rest
            self.call_after_refresh(self._show_rest, rest, shown)
        else:
            self.post_message(shown)

    def _show_rest(self, rest: list[Option], shown: ResultsShown) -> None:
        """The page's options below the first screen (unless newer results replaced them)."""
        if self._rest is not rest or not self.is_attached:
            return
        self._rest = None
        self.query_one(HitList).add_options(rest)
        self.post_message(shown)

    @dataclass
    class ResultsShown(Message):
        """Results for the latest query are on screen: ``count`` hits, found in ``elapsed_ms``."""

        count: int
        elapsed_ms: float

    # -- moving and opening ---------------------------------------------------------------

    def action_result_down(self) -> None:
        self.query_one(HitList).action_cursor_down()

    def action_result_up(self) -> None:
        self.query_one(HitList).action_cursor_up()

    @on(OptionList.OptionSelected, "#results")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._open(event.option.id)

    @on(Input.Submitted, "#query")
    def _submitted(self) -> None:
        self.action_open()

    def action_open(self) -> None:
        hit_list = self.query_one(HitList)
        index = hit_list.highlighted
        if index is None or not self._hits:
            return
        self._open(hit_list.get_option_at_index(index).id)

    def _open(self, option_id: str | None) -> None:
        from .hit import HitScreen

        if option_id is None:
            return
        if option_id.startswith("more:"):
            self._restore_highlight = self.query_one(HitList).highlighted
            self._state = replace(self._state, limit=self._state.limit + SEARCH_PAGE)
            self.run_search()
            return
        self._remember()
        self.app.push_screen(HitScreen(self._hits, int(option_id), self._terms, self._state.query))

    def _remember(self) -> None:
        self._state = replace(self._state, highlighted=self.query_one(HitList).highlighted)
        self.post_message(SearchLeft(self._state))

    def action_close(self) -> None:
        self._remember()
        self.dismiss(None)


def result_options(results: Any, match_style: Style, meta_style: Style) -> tuple[list[Option], list[Any]]:
    """The list's options (tier headings, hits, "N more" lines) and the hits in list order."""
    options: list[Option] = []
    hits: list[Any] = []
    for group in _groups_best_first(results):
        if not group.hits:
            continue
        more = group.total - len(group.hits)
        plus = "+" if group.more else ""
        count = f"{len(group.hits)} of {group.total}{plus}" if more > 0 else str(group.total)
        name = TIER_NAMES.get(group.tier, group.tier)
        options.append(Option(Text(f"── {name} ({count})", style="bold"), disabled=True))
        for hit in group.hits:
            options.append(Option(hit_text(hit, match_style, meta_style), id=str(len(hits))))
            hits.append(hit)
        if more > 0:
            label = f"   … {more}{plus} more: Enter shows {SEARCH_PAGE} more"
            options.append(Option(Text(label, style="italic"), id=f"more:{group.tier}"))
    return options, hits


def first_screen(options: list[Option], height: int) -> int:
    """How many of ``options`` fill ``height`` lines at least (a hit takes two lines or more,
    a heading or "more" line one)."""
    lines = 0
    for count, option in enumerate(options):
        if lines >= height:
            return count
        lines += 1 if option.disabled or str(option.id).startswith("more:") else 2
    return len(options)


def _groups_best_first(results: Any) -> list[Any]:
    """The tier groups; in ranked mode, the group holding the best hit first (the order of
    ``SearchResults.ranked``, which the CLI prints), so a weaker tier never hides the answer."""
    groups = list(results.tiers)
    if results.mode != "ranked":
        return groups
    first: dict[str, int] = {}
    for position, hit in enumerate(results.ranked):
        first.setdefault(hit.tier, position)
    return sorted(groups, key=lambda group: first.get(group.tier, len(first)))


def _selectable(options: list[Option], wanted: int | None) -> int:
    """``wanted`` if it is a selectable option, else the first selectable one."""
    if wanted is not None and 0 <= wanted < len(options) and not options[wanted].disabled:
        return wanted
    return next(i for i, option in enumerate(options) if not option.disabled)


def hit_date(date: str | None) -> str:
    """A hit's date as people read it: a day as it is, a moment (session hits carry their entry's
    UTC stamp) on this machine's clock, nothing when the hit has no date (a memory file's top)."""
    if not date:
        return ""
    return local_time(date) if "T" in date else date


def hit_text(hit: Any, match_style: Style, meta_style: Style) -> Text:
    """Two lines: where the hit is (type, date, file:line), then its snippet with the matches marked."""
    where = " · ".join(part for part in (hit.type, hit_date(hit.date), file_line(hit)) if part)
    text = Text(visible(where), style=meta_style, no_wrap=True, overflow="ellipsis")
    snippet = literal(" ".join(hit.snippet.split()) if "\n" in hit.snippet else hit.snippet)
    # Spans index the original snippet: only safe to apply when flattening kept the length.
    if len(snippet.plain) == len(hit.snippet):
        for start, end in hit.highlights:
            snippet.stylize(match_style, start, end)
    text.append("\n")
    text.append_text(snippet)
    for turn in hit.exchange:  # the turns before and after an L1 hit
        near = literal(" ".join(turn.snippet.split()))
        text.append("\n")
        text.append(visible(f"  ↳ {turn.type} · {file_line(turn)}: "), style=meta_style)
        text.append_text(near)
    return text
