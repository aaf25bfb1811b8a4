"""HelpModal (F1): every key of every screen and widget, with its description."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def key_sections() -> list[tuple[str, list[Binding]]]:
    """(section title, bindings) for every part of the app, in the order a user meets them."""
    from memkeeper.tui.app import MemkeeperApp
    from memkeeper.tui.modals.confirm import ConfirmModal
    from memkeeper.tui.modals.migrate import MigrateModal
    from memkeeper.tui.screens.browse import BrowseScreen
    from memkeeper.tui.screens.pending import PendingScreen
    from memkeeper.tui.screens.search import SearchScreen
    from memkeeper.tui.screens.trash import TrashScreen
    from memkeeper.tui.widgets.docview import DocView
    from memkeeper.tui.widgets.tier_tree import TierTree

    parts: list[tuple[str, list[BindingType]]] = [
        ("Everywhere", list(MemkeeperApp.BINDINGS)),
        ("Browse", list(BrowseScreen.BINDINGS)),
        ("Tier tree", list(TierTree.BINDINGS)),
        ("Viewer", list(DocView.BINDINGS)),
        ("Search (/)", list(SearchScreen.BINDINGS)),
        ("Pending summaries (p)", list(PendingScreen.BINDINGS)),
        ("Trash (t)", list(TrashScreen.BINDINGS)),
        ("Migrate dialog", list(MigrateModal.BINDINGS)),
        ("Confirmations", list(ConfirmModal.BINDINGS)),
    ]
    return [(title, [b for b in bindings if isinstance(b, Binding)]) for title, bindings in parts]


def key_label(key: str) -> str:
    names = {
        "left_square_bracket": "[",
        "right_square_bracket": "]",
        "slash": "/",
        "escape": "esc",
        "delete": "del",
    }
    return ", ".join(names.get(k.strip(), k.strip()) for k in key.split(","))


class HelpModal(ModalScreen[None]):
    """Lists every key binding; Esc, F1 or q closes it."""

    BINDINGS = [Binding("escape,f1,q", "close", "Close help", id="help.close")]
    """Keys of the help screen."""

    def compose(self) -> ComposeResult:
        table = self.help_table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for title, bindings in key_sections():
            table.add_row(Text(title, style="bold underline"), "")
            for binding in bindings:
                table.add_row(Text(key_label(binding.key)), Text(binding.description or binding.action))
            table.add_row("", "")
        table.add_row(Text("ctrl+p", style="bold"), Text("Command palette: every action by name"))
        with Vertical(classes="dialog wide tall"):
            yield Static("Keys (F1)", classes="dialog-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(table, id="help-table")

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)
