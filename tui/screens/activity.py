"""ActivityScreen (A): the store over time, and every decision and open issue in one list.

Two terminal plots (textual-plotext): sessions, prompts and tool calls per day, and
memory.md's size at each rotation against the threshold (with today's size last). Under
them, every key decision and unresolved issue across all L3 summaries, newest first;
Enter opens the summary it came from. Everything is read by a thread worker through
:mod:`memkeeper.core.search.history` and painted as it arrives, the next part read while the one
before is drawn: the growth plot and the totals first, then the decisions (from the search
index's lists for every summary it has current), then the days while the sessions are
counted (from the index's counts for every session it has current, so only the files it
lacks are read). Per-file readings are kept in the store's ``.state``
(:func:`~memkeeper.core.search.history.save_cache`), so the next open reads only the files that changed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option
from textual_plotext import PlotextPlot

from ...core.basics.wording import counted
from ...core.search.history import ActivityCache, DayActivity, Finding, Rotation
from ...core.store.paths import StorePaths
from .. import keymap
from ..messages import ShowInBrowser
from ..text import gauge, human_tokens, literal

#: Days shown in the daily plot (the most recent ones with any activity).
DAYS = 30
#: Bars in the memory growth plot at most (rotations are grouped beyond that).
GROWTH_BARS = 60
#: Decisions and issues listed at first, and added by each "more".
FINDINGS_PAGE = 200


class _Superseded(Exception):
    """A newer reading replaced the one that raised this."""


@dataclass(frozen=True)
class Activity:
    """What the screen shows, read in one go."""

    days: list[DayActivity]
    rotations: list[Rotation]
    findings: list[Finding] | None
    memory_tokens: int
    threshold: int
    counted: tuple[int, int] | None = (0, 0)
    """Sessions counted so far and in all (None: all counted)."""


class ActivityScreen(Screen[None]):
    """Plots of activity per day and memory growth; decisions and open issues below."""

    BINDINGS = keymap.bindings("activity")
    """Keys of the activity screen."""

    def __init__(self, paths: StorePaths) -> None:
        super().__init__()
        self._paths = paths
        self._cache: ActivityCache | None = None
        self._findings: list[Finding] = []
        self._shown: Activity | None = None
        self._listed = FINDINGS_PAGE
        self._listing = 0
        """The making of the list under way (its second part is dropped once another starts)."""
        self._reading = 0
        """The reading under way (a reload starts another; messages of older ones are dropped)."""
        self._one_reading = threading.Lock()
        """Held by the reading under way (the readings saved are not read by two at once)."""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield Static("reading activity…", id="activity-summary", markup=False)
        with Horizontal(id="activity-plots"):
            # Hidden (not drawn: Plotext draws in Python) until there is something to plot
            with Vertical(id="daily-column"):
                yield PlotextPlot(id="daily-plot", classes="unplotted")
                # The legend under the plot, not in it: Plotext draws its own over the lines.
                yield Static(_legend(), id="daily-legend")
            yield PlotextPlot(id="growth-plot", classes="unplotted")
        yield OptionList(id="findings")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#findings", OptionList).focus()
        self.watch(self.app, "theme", self._theme_changed, init=True)
        self.action_reload()

    def _theme_changed(self) -> None:
        # A fixed Plotext theme per light/dark: its "auto" theme is cached process-wide from
        # whatever colours were current when first used, so plots would differ run to run.
        theme: Literal["clear", "dark"] = "dark" if self.app.current_theme.dark else "clear"
        for plot in self.query(PlotextPlot):
            plot.theme = theme

    @property
    def findings(self) -> list[Finding]:
        """The decisions and open issues listed, in order."""
        return self._findings

    def action_reload(self) -> None:
        self._reading += 1
        self._read_activity(self._reading)

    @dataclass
    class Read(Message):
        """A worker read part of the activity (``then``: "reading": more is being read, "": all read)."""

        activity: Activity
        then: Literal["reading", ""]
        reading: int

        def can_replace(self, message: Message) -> bool:
            # Each part holds the ones before, and counting posts its progress often: a newer
            # part replaces one not shown yet.
            return isinstance(message, ActivityScreen.Read) and message.then == self.then == "reading"

    @on(Read)
    def _read(self, message: Read) -> None:
        if message.reading != self._reading:
            return  # from a reading that a reload (F5) replaced
        self._show(message.activity)
        if message.then == "":
            # Saved once all is on screen: writing the readings (redacted) is heavier than reading
            # them from the index, and would hold the interpreter's lock while the last frame draws.
            self.call_after_refresh(self._save_readings)

    @work(thread=True, exclusive=True, group="activity", exit_on_error=False, description="read activity")
    def _read_activity(self, reading: int) -> None:
        """Read in parts, each posted as soon as it is read, the next one read while the screen
        draws it (reading waits mostly on the disk and SQLite, which let the screen's thread run):

        - memory.md, its threshold and the rotations: the first paint (small files only);
        - every decision and open issue (the index's lists, the saved readings, then the files);
        - sessions, prompts and tool calls per day, shown as the count goes.
        """
        from ...core.config.reader import hook_settings
        from ...core.log.rotation import memory_tokens
        from ...core.search.history import daily_activity, findings, load_cache, rotations

        paths = self._paths

        def progress(days: list[DayActivity], done: int, total: int) -> None:
            if reading != self._reading:
                raise _Superseded  # a reload started reading again: stop this one
            self.post_message(
                self.Read(replace(activity, days=days, counted=(done, total)), "reading", reading)
            )

        with self._one_reading:  # a reading a reload replaced stops at its next part
            try:
                activity = Activity(
                    [], rotations(paths), None, memory_tokens(paths), hook_settings(paths).threshold_tokens
                )
                progress([], 0, 0)  # the first paint (nothing counted yet)
                if self._cache is None:
                    self._cache = load_cache(paths)
                activity = replace(activity, findings=findings(paths, self._cache, activity.rotations))
                progress([], 0, 0)
                days = daily_activity(paths, self._cache, progress)
            except _Superseded:
                return
        self.post_message(self.Read(replace(activity, days=days, counted=None), "", reading))

    @work(
        thread=True, exclusive=True, group="activity-save", exit_on_error=False, description="save readings"
    )
    def _save_readings(self) -> None:
        """Keep what was read in the store's ``.state``: the next open reads only what changed."""
        from ...core.search.history import save_cache

        if self._cache is not None:
            try:
                save_cache(self._paths, self._cache)
            except OSError:
                pass  # a read-only store: the next open reads the files again

    def _show(self, activity: Activity) -> None:
        """Paint what changed since the last call (the worker sends partial results)."""
        if not self.is_attached:
            return
        shown, self._shown = self._shown, activity
        self.query_one("#activity-summary", Static).update(_summary_line(activity))
        if (activity.days or activity.counted is None) and (shown is None or shown.days != activity.days):
            self._plot_days(activity.days[-DAYS:])
        if shown is None or (shown.rotations, shown.memory_tokens) != (
            activity.rotations,
            activity.memory_tokens,
        ):
            self._plot_growth(activity)
        if activity.findings is not None and (shown is None or shown.findings is not activity.findings):
            self._list_findings(activity.findings)

    def _plot_days(self, days: list[DayActivity]) -> None:
        widget = self.query_one("#daily-plot", PlotextPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        span = f" {days[0].day[5:]} → {days[-1].day[5:]}" if days else ""
        plt.title(f"per day{span} ({counted(len(days), 'active day')})")
        if days:
            xs = list(range(1, len(days) + 1))
            for (_, color), values in zip(
                SERIES,
                ([d.tools for d in days], [d.prompts for d in days], [d.sessions for d in days]),
                strict=True,
            ):
                plt.plot(xs, values, marker="braille", color=color)
            # Dates go in the title: Plotext places tick labels a column apart from run to run.
            plt.xticks([], [])
            top = max(max(d.tools, d.prompts, d.sessions) for d in days)
            ticks = _ticks(top)
            plt.yticks(ticks, [str(int(t)) for t in ticks])
        widget.remove_class("unplotted")
        widget.refresh()

    def _plot_growth(self, activity: Activity) -> None:
        widget = self.query_one("#growth-plot", PlotextPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        first = f" from {activity.rotations[0].rotated_at[5:10]}" if activity.rotations else ""
        rotated, per_bar = _bars([r.tokens for r in activity.rotations])
        each = f", a bar: the largest of {per_bar}" if per_bar > 1 else ""
        plt.title(f"memory.md{first} → now (limit {human_tokens(activity.threshold)}{each})")
        sizes = [*rotated, activity.memory_tokens]
        xs = list(range(1, len(sizes) + 1))
        plt.bar(xs, sizes, width=0.4)
        plt.hline(activity.threshold)
        top = max([activity.threshold, *sizes])
        plt.ylim(0, top * 1.05)
        plt.xticks([], [])
        ticks = _ticks(top)
        plt.yticks(ticks, [human_tokens(int(t)) for t in ticks])  # 24.9k, not 24937.5
        widget.remove_class("unplotted")
        widget.refresh()

    def _list_findings(self, found: list[Finding], keep: int | None = None) -> None:
        """The decisions and open issues, newest first, a page at a time (a store may hold
        thousands): the options that fill the list first, the rest of the page once that is
        drawn (each label is measured as it is added: a page of them takes a frame's time)."""
        self._findings = found
        self._listing += 1
        options = self.query_one("#findings", OptionList)
        keep = options.highlighted if keep is None else keep
        options.clear_options()
        if not found:
            options.add_option(Option(Text("No decisions or open issues in any summary yet."), disabled=True))
            return
        first = max(options.size.height, keep or 0) + 1
        self._add_findings(self._listing, 0, first)
        options.highlighted = min(keep or 0, options.option_count - 1)
        if first < self._listed:
            self.call_after_refresh(self._add_findings, self._listing, first, self._listed)

    def _add_findings(self, listing: int, start: int, end: int) -> None:
        """Options ``start`` to ``end`` of the page, and "more" after its last one."""
        if listing != self._listing:
            return  # the list was made again meanwhile
        found, end = self._findings, min(end, self._listed)
        options = self.query_one("#findings", OptionList)
        options.add_options(
            [Option(_finding_label(f), id=str(i)) for i, f in enumerate(found[start:end], start)]
        )
        more = len(found) - end
        if end == self._listed and more > 0:
            label = f"   … {more:,} more: Enter shows {FINDINGS_PAGE} more"
            options.add_option(Option(Text(label, style="italic"), id="more"))

    @on(OptionList.OptionSelected, "#findings")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._open(event.option.id)

    def action_open(self) -> None:
        options = self.query_one("#findings", OptionList)
        if options.highlighted is not None and self._findings:
            self._open(options.get_option_at_index(options.highlighted).id)

    def _open(self, option_id: str | None) -> None:
        from ...core.store.names import summary_name

        if option_id is None:
            return
        if option_id == "more":
            self._listed += FINDINGS_PAGE
            self._list_findings(self._findings, keep=self._listed - FINDINGS_PAGE)
            return
        finding = self._findings[int(option_id)]
        self.post_message(ShowInBrowser(summary_name(finding.archive), None, (finding.text,)))

    def action_close(self) -> None:
        self.dismiss(None)


#: The daily plot's lines: (legend name, Plotext colour; Rich knows the same names).
SERIES = (("tool calls", "blue"), ("prompts", "green"), ("sessions", "red"))


def _legend() -> Text:
    return Text("  ").join(Text.assemble(("── ", color), name) for name, color in SERIES)


def _ticks(top: int) -> list[float]:
    """At most five whole-number ticks from 0 to ``top`` (no 7.7 calls, no 24937.5 tokens)."""
    return [float(t) for t in sorted({round(top * i / 4) for i in range(5)})]


def _bars(sizes: list[int]) -> tuple[list[int], int]:
    """At most GROWTH_BARS bars of ``sizes``: each the largest of as many rotations in a row
    as it takes (a plot a terminal wide cannot show thousands, and drawing them is slow)."""
    per_bar = max(1, -(-len(sizes) // GROWTH_BARS))
    return [max(sizes[i : i + per_bar]) for i in range(0, len(sizes), per_bar)], per_bar


def _finding_label(finding: Finding) -> Text:
    mark = "◆ decision" if finding.kind == "decision" else "○ issue   "
    return Text.assemble((mark, "bold"), f" {finding.date or 'undated':10} ", literal(finding.text))


def _summary_line(activity: Activity) -> str:
    """memory.md against the threshold, rotations, and the totals (or how far counting got)."""
    ratio = activity.memory_tokens / max(1, activity.threshold)
    memory = (
        f"memory.md {human_tokens(activity.memory_tokens)}/{human_tokens(activity.threshold)} "
        f"{gauge(ratio, 10)} {ratio:.0%} · {counted(len(activity.rotations), 'rotation')} · "
    )
    days = activity.days
    totals = (
        f"{counted(sum(d.sessions for d in days), 'session')}, {counted(sum(d.prompts for d in days), 'prompt')}, "
        f"{counted(sum(d.tools for d in days), 'tool call')} (days in UTC)"
    )
    if activity.counted is None:
        return memory + totals
    done, total = activity.counted
    counting = f"counting sessions… {done:,} of {total:,}" if total else "counting sessions…"
    return memory + counting + (f" · so far {totals}" if done else "")
