"""TrashScreen (t): what was forgotten, and restoring it (through :mod:`memkeeper.core.store.trash`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.widgets import DataTable, Footer, Header, Static

from ...core.basics.timestamps import local_time
from .. import keymap
from ..messages import RestoreWanted
from ..text import literal
from .store_screen import ListScreen

if TYPE_CHECKING:
    from ...core.store.trash import TrashItem


class TrashScreen(ListScreen["TrashItem"]):
    """Forgotten archives and sessions; Enter or u restores the selected one."""

    BINDINGS = keymap.bindings("trash")
    """Keys of the trash screen."""

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

    def read_list(self) -> list[TrashItem]:
        from ...core.store.trash import list_trash

        return list_trash(self._paths)

    def show_list(self) -> None:
        items = self._items
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
        table = self.query_one(DataTable)
        if not self._items:
            self.notify("The trash is empty.", severity="warning")
            return
        item = self._items[table.cursor_row]
        self.post_message(RestoreWanted(item.id))  # the snapshot the app reloads refreshes this list
