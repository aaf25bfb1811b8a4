"""SearchScreen (/): results across tiers as you type, grouped in tier order, with filters.

Each keystroke starts a search in a thread worker through
:func:`memkeeper.core.search.search`; an older answer that arrives late is dropped.
Enter opens the highlighted hit in the browser at its line with the terms highlighted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, OptionList, Static
from textual.widgets.option_list import Option

from memkeeper.core.store import StorePaths
from memkeeper.tui.text import fg_style, literal, visible

TIER_CHOICES: tuple[str | None, ...] = (None, "memory", "l3", "l2", "l1")
TIER_NAMES = {"memory": "memory (current)", "l3": "L3 summaries", "l2": "L2 archives", "l1": "L1 sessions"}


def type_choices() -> tuple[str | None, ...]:
    """Every hit type, in tier order, after ``None`` (all)."""
    from memkeeper.core.search.sources import TYPES_BY_TIER

    seen: list[str] = []
    for types in TYPES_BY_TIER.values():
        seen.extend(t for t in types if t not in seen)
    return (None, *seen)


FRESH_SECONDS = 2.0


@dataclass(frozen=True)
class SearchPick:
    """The hit the user opened: its file, line and the query to highlight."""

    file: str
    line: int | None
    query: str


class HitList(OptionList):
    """Search hits grouped under tier headings; styles come from the theme."""

    COMPONENT_CLASSES = {"hitlist--match", "hitlist--meta"}
    DEFAULT_CSS = """
    HitList > .hitlist--match { background: $warning 50%; text-style: bold; }
    HitList > .hitlist--meta { color: $text-muted; }
    """


class SearchScreen(Screen["SearchPick | None"]):
    """Type to search; F2/F3/F4 filter by tier, type and deep; Enter opens the hit."""

    BINDINGS = [
        Binding("escape", "close", "Back", id="search.close"),
        Binding("f2", "cycle_tier", "Tier filter", id="search.tier"),
        Binding("f3", "cycle_type", "Type filter", id="search.type"),
        Binding("f4", "toggle_deep", "Deep", id="search.deep"),
        Binding("down", "result_down", "Next result", show=False, id="search.down"),
        Binding("up", "result_up", "Previous result", show=False, id="search.up"),
        Binding("enter", "open", "Open hit", show=False, id="search.open"),
    ]
    """Keys of the search screen (typing goes to the query)."""

    def __init__(self, paths: StorePaths, query: str = "") -> None:
        super().__init__()
        self._paths = paths
        self._initial = query
        self._tier_index = 0
        self._type_index = 0
        self._deep = False
        self._serial = 0
        self._hits: list[Any] = []
        self._types = type_choices()
        self._summary = ""
        self._searching = False
        self._queued: tuple[str, str | None, str | None, bool, int] | None = None
        #: When the index was last brought up to date for a (tier, deep) choice. Keystrokes
        #: within FRESH_SECONDS of that skip the per-file freshness check (25-50 ms on a
        #: large store); the first search, a new filter and any pause in typing still do it.
        self._fresh_at: dict[tuple[str | None, bool], float] = {}

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield Input(
            value=self._initial, placeholder="search memory, summaries, archives, sessions…", id="query"
        )
        yield Static("", id="filters", markup=False)
        yield HitList(id="results")
        yield Footer()

    def on_mount(self) -> None:
        query = self.query_one(Input)
        query.cursor_blink = not self.app.is_headless  # a blinking cursor makes screenshots random
        query.focus()
        self._show_filters()
        if self._initial:
            self.run_search()

    # -- filters ---------------------------------------------------------------------------

    def _show_filters(self) -> None:
        tier = TIER_CHOICES[self._tier_index] or "all"
        kind = self._types[self._type_index] or "all"
        line = f"tier: {tier} (F2) · type: {kind} (F3) · deep: {'on' if self._deep else 'off'} (F4)"
        if self._summary:
            line += f" · {self._summary}"
        self.query_one("#filters", Static).update(Text(line))

    def action_cycle_tier(self) -> None:
        self._tier_index = (self._tier_index + 1) % len(TIER_CHOICES)
        self._show_filters()
        self.run_search()

    def action_cycle_type(self) -> None:
        self._type_index = (self._type_index + 1) % len(self._types)
        self._show_filters()
        self.run_search()

    def action_toggle_deep(self) -> None:
        self._deep = not self._deep
        self._show_filters()
        self.run_search()

    # -- searching ---------------------------------------------------------------------------

    @on(Input.Changed, "#query")
    def _query_changed(self) -> None:
        self.run_search()

    def run_search(self) -> None:
        """Search for the current query and filters (in a thread)."""
        self._serial += 1
        query = self.query_one(Input).value
        if not query.strip():
            self._hits = []
            self._summary = ""
            self.query_one(HitList).clear_options()
            self._show_filters()
            return
        tier = TIER_CHOICES[self._tier_index]
        kind = self._types[self._type_index]
        request = (query, tier, kind, self._deep, self._serial)
        if self._searching:
            # One search thread at a time: a slow query is not joined by one per keystroke;
            # the latest request runs as soon as it finishes (older ones are skipped).
            self._queued = request
            return
        self._searching = True
        self._search_worker(*request)

    def _search_done(self) -> None:
        self._searching = False
        if self._queued is not None:
            request, self._queued = self._queued, None
            if request[-1] == self._serial:
                self._searching = True
                self._search_worker(*request)

    @work(thread=True, group="search", exit_on_error=False, description="search")
    def _search_worker(self, query: str, tier: str | None, kind: str | None, deep: bool, serial: int) -> None:
        from memkeeper.core.search import search

        started = time.perf_counter()
        scope = (tier, deep)
        stale = started - self._fresh_at.get(scope, float("-inf")) > FRESH_SECONDS
        try:
            results = search(
                self._paths,
                query,
                tiers=[tier] if tier else None,
                types=[kind] if kind else None,
                deep=deep,
                limit=20,
                refresh=stale,
            )
            if stale:
                self._fresh_at[scope] = started
        except Exception as exc:  # a bad query is one line, not a crash
            self.app.call_from_thread(self._failed, str(exc), serial)
            return
        finally:
            self.app.call_from_thread(self._search_done)
        elapsed = (time.perf_counter() - started) * 1000
        self.app.call_from_thread(self._show_results, results, elapsed, serial)

    def _failed(self, error: str, serial: int) -> None:
        if serial != self._serial or not self.is_attached:
            return
        self._hits = []
        self._summary = f"error: {error}"
        self.query_one(HitList).clear_options()
        self._show_filters()

    def _show_results(self, results: Any, elapsed_ms: float, serial: int) -> None:
        if serial != self._serial or not self.is_attached:
            return  # a newer keystroke already asked again (or the screen is closed)
        hit_list = self.query_one(HitList)
        match_style = hit_list.get_component_rich_style("hitlist--match")
        meta_style = fg_style(hit_list.get_component_rich_style("hitlist--meta"))
        options: list[Option | None] = []
        self._hits = []
        for group in results.tiers:
            if not group.hits:
                continue
            more = "+" if group.more else ""
            options.append(
                Option(
                    Text(f"── {TIER_NAMES.get(group.tier, group.tier)} ({group.total}{more})", style="bold"),
                    disabled=True,
                )
            )
            for hit in group.hits:
                options.append(Option(hit_text(hit, match_style, meta_style), id=str(len(self._hits))))
                self._hits.append(hit)
        hit_list.clear_options()
        if options:
            hit_list.add_options(options)
            hit_list.highlighted = 1
        else:
            hit_list.add_option(Option(Text("no results", style="italic"), disabled=True))
        warnings = f" · {results.warnings[0]}" if getattr(results, "warnings", ()) else ""
        self._summary = f"{len(self._hits)} hits{warnings}"
        self._show_filters()
        self.post_message(SearchScreen.ResultsShown(len(self._hits), elapsed_ms))

    class ResultsShown(Message):
        """Results for the latest query are on screen: ``count`` hits, found in ``elapsed_ms``."""

        def __init__(self, count: int, elapsed_ms: float) -> None:
            super().__init__()
            self.count = count
            self.elapsed_ms = elapsed_ms

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
        if option_id is None:
            return
        hit = self._hits[int(option_id)]
        self.dismiss(SearchPick(hit.file, hit.line, self.query_one(Input).value))

    def action_close(self) -> None:
        self.dismiss(None)


def hit_text(hit: Any, match_style: Style, meta_style: Style) -> Text:
    """Two lines: where the hit is (type, date, file:line), then its snippet with the matches marked."""
    where = f"{hit.type} · {hit.date or '?'} · {hit.file}" + (f":{hit.line}" if hit.line else "")
    text = Text(visible(where), style=meta_style, no_wrap=True, overflow="ellipsis")
    snippet = literal(" ".join(hit.snippet.split()) if "\n" in hit.snippet else hit.snippet)
    # Spans index the original snippet: only safe to apply when flattening kept the length.
    if len(snippet.plain) == len(hit.snippet):
        for start, end in hit.highlights:
            snippet.stylize(match_style, start, end)
    text.append("\n")
    text.append_text(snippet)
    return text
