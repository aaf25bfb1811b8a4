"""SessionsScreen (S): every L1 session, newest first, found by title or date as you type.

Rows show the local start, the length, prompts, tool calls and the title (from
:mod:`memkeeper.core.capture.titles`). Typing filters the titles (all words, any order); a date
(``2026-11-20``, or ``2026-11``) jumps to the newest session on or before it. Enter
opens the session in the browser. Titles come first (cached by core); lengths and
counts are filled in by a worker in batches, newest first.
"""

from __future__ import annotations

import re

from textual import on, work
from textual.app import ComposeResult
from textual.widgets import DataTable, Footer, Header, Input, Static
from textual.worker import get_current_worker

from ...core.basics.wording import counted
from ...core.store.paths import StorePaths
from .. import keymap
from ..messages import ShowInBrowser
from ..model import SessionCounts, SessionInfo
from ..snapshot import count_l1, list_sessions
from ..text import human_minutes, literal
from .store_screen import StoreScreen

DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
BATCH = 40


class SessionsScreen(StoreScreen):
    """All sessions with title, start, length and tools; filter as you type; jump to a date."""

    BINDINGS = keymap.bindings("sessions")
    """Keys of the sessions list (typing filters by title; a date jumps to it)."""

    def __init__(self, paths: StorePaths) -> None:
        super().__init__(paths)
        self._sessions: list[SessionInfo] = []
        self._titles: dict[str, str] = {}
        self._counts: dict[str, SessionCounts] = {}
        self._shown: list[SessionInfo] = []

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield Input(placeholder="filter by title… or a date (YYYY-MM-DD) to jump to", id="session-filter")
        yield Static("", id="sessions-note", markup=False)
        yield DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, label in (
            ("started", "started (local)"),
            ("length", "length"),
            ("prompts", "prompts"),
            ("tools", "tools"),
            ("title", "title"),
        ):
            table.add_column(label, key=key)
        field = self.query_one(Input)
        field.cursor_blink = not self.app.is_headless
        field.focus()
        self._list_worker()

    @property
    def shown(self) -> list[SessionInfo]:
        """The sessions listed now (after the filter), in order."""
        return self._shown

    @work(thread=True, exclusive=True, group="sessions", exit_on_error=False, description="list sessions")
    def _list_worker(self) -> None:
        from ...core.capture.titles import session_titles

        sessions = list_sessions(self._paths)
        titles = session_titles(self._paths)
        self.app.call_from_thread(self._listed, sessions, titles)
        worker = get_current_worker()
        for start in range(0, len(sessions), BATCH):
            if worker.is_cancelled:
                return
            counts = count_l1(self._paths, [s.name for s in sessions[start : start + BATCH]])
            self.app.call_from_thread(self._counted, counts)

    def _listed(self, sessions: list[SessionInfo], titles: dict[str, str]) -> None:
        if not self.is_attached:
            return
        self._sessions = sessions
        self._titles = titles
        self._apply_filter()

    def _counted(self, counts: dict[str, SessionCounts]) -> None:
        if not self.is_attached:
            return
        self._counts.update(counts)
        table = self.query_one(DataTable)
        for name, found in counts.items():
            if name in table.rows:
                length = "unreadable" if found.unreadable else human_minutes(found.minutes)
                table.update_cell(name, "length", length)
                table.update_cell(name, "prompts", str(found.prompts))
                table.update_cell(name, "tools", str(found.tools))

    def _title(self, info: SessionInfo) -> str:
        return self._titles.get(info.name.removesuffix(".gz")) or ""

    @on(Input.Changed, "#session-filter")
    def _filter_changed(self) -> None:
        self._apply_filter()

    def _apply_filter(self) -> None:
        text = self.query_one(Input).value.strip()
        table = self.query_one(DataTable)
        if DATE.match(text):
            shown = self._sessions
        else:
            words = text.lower().split()
            shown = [s for s in self._sessions if all(w in self._title(s).lower() for w in words)]
        self._shown = shown
        table.clear()
        for info in shown:
            counts = self._counts.get(info.name)
            table.add_row(
                f"{info.day} {info.time}",
                human_minutes(counts.minutes) if counts else "…",
                str(counts.prompts) if counts else "…",
                str(counts.tools) if counts else "…",
                literal(self._title(info)),
                key=info.name,
            )
        if DATE.match(text):
            self._jump_to(text)
        note = f"{len(shown)} of {counted(len(self._sessions), 'session')}, newest first"
        self.query_one("#sessions-note", Static).update(note)

    def _jump_to(self, date: str) -> None:
        """Put the cursor on the newest session started on or before ``date``."""
        for row, info in enumerate(self._shown):
            if info.day[: len(date)] <= date:
                self.query_one(DataTable).move_cursor(row=row)
                return

    def action_row_down(self) -> None:
        self.query_one(DataTable).action_cursor_down()

    def action_row_up(self) -> None:
        self.query_one(DataTable).action_cursor_up()

    @on(Input.Submitted, "#session-filter")
    @on(DataTable.RowSelected)
    def _submitted(self) -> None:
        """Enter in the filter or on a row (the table takes the key first) opens the session."""
        self.action_open()

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if not self._shown or not 0 <= table.cursor_row < len(self._shown):
            return
        info = self._shown[table.cursor_row]
        self.post_message(ShowInBrowser(info.name))
