"""TrashScreen (t): what was forgotten, and restoring it (through :mod:`memkeeper.core.forget`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from memkeeper.core.store import StorePaths
from memkeeper.core.timefmt import local_time
from memkeeper.tui import keymap
from memkeeper.tui.text import literal

if TYPE_CHECKING:
    from memkeeper.core.forget import TrashItem
    from memkeeper.tui.model import StoreSnapshot


class TrashScreen(Screen[None]):
    """Forgotten archives and sessions; Enter or u restores the selected one."""

    BINDINGS = keymap.bindings("trash")
    """Keys of the trash screen."""

    def __init__(self, paths: StorePaths) -> None:
        super().__init__()
        self._paths = paths
        self._items: list[TrashItem] = []

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield Static("Trash", id="trash-title", classes="screen-title")
        yield DataTable(id="trash-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("forgotten", "kind", "name", "files")
        table.focus()
        self.refresh_list()

    def show_snapshot(self, snapshot: StoreSnapshot, changed: frozenset[Any]) -> None:
        """Called by the app after a store change."""
        self.refresh_list()

    def refresh_list(self) -> None:
        self._list_worker()

    @work(thread=True, exclusive=True, group="trash-list", exit_on_error=False, description="list trash")
    def _list_worker(self) -> None:
        from memkeeper.core.forget import list_trash

        items = list_trash(self._paths)
        self.app.call_from_thread(self._show, items)

    def _show(self, items: list[TrashItem]) -> None:
        if not self.is_attached:
            return
        self._items = items
        table = self.query_one(DataTable)
        table.clear()
        for item in items:
            table.add_row(
                local_time(item.deleted_at), item.kind, literal(item.name), str(len(item.files)), key=item.id
            )
        title = (
            f"Trash ({len(items)}): Enter restores"
            if items
            else "Trash is empty (d forgets an archive or a session, x an entry of memory)"
        )
        self.query_one("#trash-title", Static).update(title)

    def on_data_table_row_selected(self) -> None:
        """Enter on a row (the table takes the key first): restore it, as the title says."""
        self.action_restore()

    def action_restore(self) -> None:
        from memkeeper.tui.app import MemkeeperApp

        table = self.query_one(DataTable)
        if not self._items:
            self.notify("The trash is empty.", severity="warning")
            return
        item = self._items[table.cursor_row]
        if isinstance(self.app, MemkeeperApp):
            self.app.restore(item.id)  # the snapshot it reloads refreshes this list

    def action_close(self) -> None:
        self.dismiss(None)
