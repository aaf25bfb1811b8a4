"""SettingsScreen (,): every setting a user would change, where its value comes from, what it costs.

Each row shows a setting's value in an editor (a switch, a choice or a field: Enter saves a
typed value), its source (default, global, this project), a one-line explanation (the one
declared in :mod:`memkeeper.core.config.model`) and, where it costs, today's model use against the
cap. Saving goes through :mod:`memkeeper.core.config.edit`, as ``memkeeper config set`` does,
to the layer chosen at the top; a refused value is shown with its reason and nothing is
written. Reading and saving run in thread workers. After a save the screen posts
:class:`~memkeeper.tui.messages.SettingsChanged` up (the app re-reads the store's state, so
the status line shows it); the TUI's own preferences go up as
:class:`~memkeeper.tui.messages.PrefChosen`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Footer, Header, Input, Select, Static, Switch

from .. import keymap
from ..messages import PrefChosen, SettingsChanged
from ..reach import ReachesApp
from ..text import human_tokens, literal
from ..widgets.status import StatusLine
from .store_screen import StoreScreen

if TYPE_CHECKING:
    from ...core.config.edit import Layer, Setting
    from ...core.store.paths import StorePaths
    from ..model import StoreSnapshot

STYLES = Path(__file__).parent.parent / "styles"
Editor = Literal["switch", "input", "select"]
#: Keys of the TUI's own preferences (tui/prefs.py), beside the config's dotted keys.
THEME, DEEP = "tui.theme", "tui.deep"
SOURCES = {"default": "default", "global": "global", "project": "this project", "prefs": "your TUI prefs"}


@dataclass(frozen=True)
class Row:
    """A setting on the screen: its key, its label, how it is edited."""

    key: str
    label: str
    editor: Editor
    choices: tuple[str, ...] = ()


GROUPS: tuple[tuple[str, tuple[Row, ...]], ...] = (
    (
        "Memory",
        (
            Row("memory.enabled", "memory", "switch"),
            Row("memory.flushEvery", "flush every", "input"),
            Row("memory.retentionDays", "retention (days)", "input"),
        ),
    ),
    (
        "Summarizer",
        (
            Row(
                "summarizer.backend",
                "backend",
                "select",
                ("auto", "claude", "anthropic", "command", "extractive"),
            ),
            Row("summarizer.model", "model", "input"),
        ),
    ),
    (
        "Daily model budget (UTC)",
        (
            Row("budget.dailyCalls", "calls a day", "input"),
            Row("budget.dailyTokens", "tokens a day", "input"),
        ),
    ),
    (
        "Recall",
        (Row("recall.enabled", "recall", "switch"), Row("recall.minConfidence", "min confidence", "input")),
    ),
    ("This TUI (you, every project)", (Row(THEME, "theme", "select"), Row(DEEP, "deep search", "switch"))),
)
ROWS = {row.key: row for _title, rows in GROUPS for row in rows}
PREF_HELP = {
    THEME: "The colours of memkeeper-tui (also ctrl+p → theme).",
    DEEP: "Search L1 sessions too, by default (F4 in search toggles it).",
}


@dataclass(frozen=True)
class Shown:
    """What a row shows: its value, source, explanation and cost."""

    value: Any
    source: str
    help: str
    cost: str = ""
    #: Today's model use reached a cap.
    capped: bool = False


def widget_id(key: str) -> str:
    return "edit-" + key.replace(".", "-")


def shown_text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return "" if value is None else str(value)


def read_rows(paths: StorePaths, theme: str, deep: bool) -> dict[str, Shown]:
    """Every row's value, source, explanation and cost (reads files: run it in a thread)."""
    from ...core.config import edit as config_edit
    from ...core.config.model import load_config_or_default
    from ...core.summarizers import budget_status
    from ..prefs import saved_names

    items = {item.key: item for item in config_edit.settings(paths)}
    config, _warnings = load_config_or_default(paths)
    budget = budget_status(paths, config)
    shown = {key: _shown(items[key], budget) for key in ROWS if key in items}
    saved = saved_names()
    shown[THEME] = Shown(theme, "prefs" if "theme" in saved else "default", PREF_HELP[THEME])
    shown[DEEP] = Shown(deep, "prefs" if "deep" in saved else "default", PREF_HELP[DEEP])
    return shown


def _shown(item: Setting, budget: dict[str, Any]) -> Shown:
    cost = cost_text(item.key, budget)
    return Shown(item.value, item.source, item.description, cost, bool(cost) and budget["exceeded"])


def cost_text(key: str, budget: dict[str, Any]) -> str:
    """Today's model use (the store's model-calls log) where the setting spends it."""
    calls, tokens = budget["calls"], budget["tokens"]
    if key == "budget.dailyCalls":
        return f"{calls}/{budget['dailyCalls']:,} today"
    if key == "budget.dailyTokens":
        return f"{brief_tokens(tokens)}/{brief_tokens(budget['dailyTokens'])} today"
    if key == "summarizer.backend":
        return f"{calls} calls today"
    return ""


def brief_tokens(tokens: int) -> str:
    """2000000 → ``2.0M``, 12345 → ``12.3k``."""
    return f"{tokens / 1_000_000:.1f}M" if tokens >= 1_000_000 else human_tokens(tokens)


class SettingsScreen(ReachesApp, StoreScreen):
    """The settings: change one in place, saved to this project's or the global config."""

    BINDINGS = keymap.bindings("settings")
    """Keys of the settings screen (every field takes letters, so they are F-keys)."""

    CSS_PATH: ClassVar[list[str | PurePath]] = [STYLES / "settings.tcss"]

    @dataclass
    class Read(Message):
        """The rows were read (``error``: the configuration does not read)."""

        rows: dict[str, Shown]
        error: str | None = None

    @dataclass
    class Saved(Message):
        key: str
        note: str

    @dataclass
    class Refused(Message):
        key: str
        reason: str

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield StatusLine(id="settings-status")
        with Horizontal(id="settings-top"):
            yield Static("Save changes to", classes="label")
            yield Select(
                [("this project", "project"), ("global (every project)", "global")],
                value="project",
                allow_blank=False,
                compact=True,
                id="settings-layer",
            )
            yield Static("Enter saves a typed value", id="settings-hint")
        yield Static("", id="settings-error", markup=False)
        with VerticalScroll(id="settings-rows"):
            for title, rows in GROUPS:
                yield Static(title, classes="settings-group")
                for row in rows:
                    with Vertical(classes="setting", id=f"row-{widget_id(row.key)}"):
                        with Horizontal(classes="setting-line"):
                            yield Static(row.label, classes="setting-label")
                            yield self._editor(row)
                            if row.editor == "switch":
                                yield Static("", classes="switch-state")
                            yield Static("", classes="setting-source")
                            yield Static("", classes="setting-cost")
                        yield Static("", classes="setting-help", markup=False)
        yield Footer()

    def _editor(self, row: Row) -> Widget:
        if row.editor == "switch":
            return Switch(animate=False, id=widget_id(row.key), classes="setting-editor")
        if row.editor == "select":
            choices = row.choices or tuple(sorted(self.app.available_themes))
            return Select(
                [(choice, choice) for choice in choices],
                allow_blank=False,
                compact=True,
                id=widget_id(row.key),
                classes="setting-editor",
            )
        return Input(compact=True, id=widget_id(row.key), classes="setting-editor")

    def __init__(self, paths: StorePaths) -> None:
        super().__init__(paths)
        #: The value each row shows, as read (a switch or a choice saves only a change from it).
        self._values: dict[str, Any] = {}

    def on_mount(self) -> None:
        status = self.query_one(StatusLine)
        self.watch(self.app, "live", status.set_live, init=True)
        self.watch(self.app, "backend", status.set_backend, init=True)
        if self.mk.snapshot is not None:
            status.show_snapshot(self.mk.snapshot)
        self.query_one("#settings-error").display = False
        self.query_one(f"#{widget_id('memory.enabled')}").focus()
        self.reread()

    # -- reading ---------------------------------------------------------------------------------

    def show_snapshot(self, snapshot: StoreSnapshot, changed: frozenset[Any]) -> None:
        """Called by the app after a store change: the status line, and the rows read again."""
        self.query_one(StatusLine).show_snapshot(snapshot)
        self.reread()

    def reread(self) -> None:
        self._read_worker(self.app.theme, self.mk.prefs.deep)

    @work(
        thread=True, exclusive=True, group="settings-read", exit_on_error=False, description="read settings"
    )
    def _read_worker(self, theme: str, deep: bool) -> None:
        from ...core.config.reader import ConfigError

        try:
            rows = read_rows(self._paths, theme, deep)
        except ConfigError as exc:
            self.post_message(self.Read({}, str(exc)))
            return
        self.post_message(self.Read(rows))

    @on(Read)
    def _read(self, message: Read) -> None:
        rows = self.query_one("#settings-rows")
        rows.display = message.error is None
        if message.error is not None:
            self._say(f"{message.error} — fix the file (or memkeeper config) to change settings here")
            return
        with self.prevent(Switch.Changed, Select.Changed):
            for key, shown in message.rows.items():
                self._show_row(key, shown)

    def _show_row(self, key: str, shown: Shown) -> None:
        before = shown_text(self._values.get(key))
        self._values[key] = shown.value
        row = self.query_one(f"#row-{widget_id(key)}")
        editor = row.query_one(".setting-editor")
        if isinstance(editor, Switch):
            editor.value = bool(shown.value)
            row.query_one(".switch-state", Static).update(shown_text(editor.value))
        elif isinstance(editor, Select):
            editor.value = shown.value
        elif isinstance(editor, Input) and not (editor.has_focus and editor.value != before):
            editor.value = shown_text(shown.value)  # (not over what is being typed, or was refused)
        source = row.query_one(".setting-source", Static)
        source.update(SOURCES[shown.source])
        source.set_class(shown.source != "default", "-set")
        cost = row.query_one(".setting-cost", Static)
        cost.update(shown.cost)
        cost.set_class(shown.capped, "-capped")
        row.query_one(".setting-help", Static).update(literal(shown.help))

    # -- saving ----------------------------------------------------------------------------------

    @property
    def layer(self) -> Layer:
        return "global" if self.query_one("#settings-layer", Select).value == "global" else "project"

    @on(Switch.Changed, ".setting-editor")
    def _switched(self, event: Switch.Changed) -> None:
        key = self._key_of(event.switch)
        if self._values.get(key, event.value) != event.value:  # a user's toggle, not the file's value shown
            self.query_one(f"#row-{event.switch.id} .switch-state", Static).update(shown_text(event.value))
            self._change(key, event.value)

    @on(Select.Changed, ".setting-editor")
    def _selected(self, event: Select.Changed) -> None:
        key = self._key_of(event.select)
        # Not the first option a Select shows as it mounts, nor the value read from the file.
        if event.value is not Select.BLANK and self._values.get(key, event.value) != event.value:
            self._change(key, str(event.value))

    @on(Input.Submitted, ".setting-editor")
    def _submitted(self, event: Input.Submitted) -> None:
        self._change(self._key_of(event.input), event.value)

    @staticmethod
    def _key_of(editor: Widget) -> str:
        return next(key for key in ROWS if widget_id(key) == editor.id)

    def _change(self, key: str, value: str | bool) -> None:
        if key in (THEME, DEEP):
            self.post_message(PrefChosen("theme" if key == THEME else "deep", value))
            self.call_after_refresh(self.reread)
            return
        self._save_worker(key, value, self.layer)

    @work(thread=True, group="settings-save", exit_on_error=False, description="save a setting")
    def _save_worker(self, key: str, value: str | bool, layer: Layer) -> None:
        from ...core.config import edit as config_edit
        from ...core.config.reader import ConfigError

        try:
            parsed = value if isinstance(value, bool) else config_edit.parse_value(key, value)
            config_edit.set_value(self._paths, key, parsed, layer)
            item = config_edit.setting(self._paths, key)
        except (ConfigError, OSError) as exc:
            self.post_message(self.Refused(key, str(exc)))
            return
        note = f"{key} = {shown_text(parsed)} saved to {SOURCES[layer]}"
        if layer == "global" and item.source == "project":
            note += f"; this project's own value ({shown_text(item.value)}) still wins (F3 here unsets it)"
        self.post_message(self.Saved(key, note))

    @on(Saved)
    def _saved(self, message: Saved) -> None:
        self._say("")
        self.query_one(f"#{widget_id(message.key)}").remove_class("-refused")
        self.notify(message.note, timeout=4)
        self.post_message(SettingsChanged(message.key))
        self.reread()

    @on(Refused)
    def _refused(self, message: Refused) -> None:
        self._say(f"Not saved: {message.reason}")
        editor = self.query_one(f"#{widget_id(message.key)}")
        if isinstance(editor, Input):
            editor.add_class("-refused")  # the typed value stays, to be corrected
        else:
            self.reread()  # a switch or a choice goes back to what the file says

    def _say(self, text: str) -> None:
        error = self.query_one("#settings-error", Static)
        error.update(text)
        error.display = bool(text)

    # -- actions ---------------------------------------------------------------------------------

    def action_layer(self) -> None:
        """Save to the other layer (this project ↔ global)."""
        select = self.query_one("#settings-layer", Select)
        select.value = "global" if self.layer == "project" else "project"
        self.notify(f"Changes now go to {SOURCES[self.layer]}.", timeout=3)

    def action_unset(self) -> None:
        """The focused setting's value removed from the chosen layer (the next one applies)."""
        focused = self.focused
        key = next((k for k in ROWS if focused is not None and widget_id(k) == focused.id), None)
        if key is None or key in (THEME, DEEP):
            self.notify("Move to a setting of the config first.", severity="warning")
            return
        self._unset_worker(key, self.layer)

    @work(thread=True, group="settings-save", exit_on_error=False, description="unset a setting")
    def _unset_worker(self, key: str, layer: Layer) -> None:
        from ...core.config import edit as config_edit
        from ...core.config.reader import ConfigError

        try:
            removed = config_edit.unset_value(self._paths, key, layer)
            item = config_edit.setting(self._paths, key)
        except (ConfigError, OSError) as exc:
            self.post_message(self.Refused(key, str(exc)))
            return
        where = SOURCES[layer]
        head = f"{key} unset in {where}" if removed else f"{key} was not set in {where}"
        self.post_message(self.Saved(key, f"{head}: now {shown_text(item.value)} ({SOURCES[item.source]})"))
