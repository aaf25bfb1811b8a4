"""HelpModal (F1): every key of every screen and widget, with its description."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .. import keymap


def key_sections(first: type | None = None) -> list[tuple[str, list[Binding]]]:
    """(section title, bindings) for every part of the app; the parts of screen ``first`` lead."""
    from .. import keymap
    from ..screens.activity import ActivityScreen
    from ..screens.browse import BrowseScreen
    from ..screens.hit import HitScreen
    from ..screens.pending import PendingScreen
    from ..screens.search import SearchScreen
    from ..screens.sessions import SessionsScreen
    from ..screens.settings import SettingsScreen
    from ..screens.trash import TrashScreen
    from ..widgets.doc_pane import DocPane
    from ..widgets.docview import DocView
    from ..widgets.tier_tree import TierTree
    from .confirm import ConfirmModal
    from .migrate import MigrateModal

    viewer = [*DocPane.BINDINGS, *DocView.BINDINGS]
    parts: list[tuple[str, type | None, list[BindingType]]] = [
        ("Browse", BrowseScreen, [*BrowseScreen.BINDINGS, *TierTree.BINDINGS]),
        ("Viewer (browse and opened hits)", BrowseScreen, viewer),
        ("Search (/)", SearchScreen, list(SearchScreen.BINDINGS)),
        ("Opened hit", HitScreen, [*HitScreen.BINDINGS, *viewer]),
        ("Sessions (S)", SessionsScreen, list(SessionsScreen.BINDINGS)),
        ("Activity (A)", ActivityScreen, list(ActivityScreen.BINDINGS)),
        ("Pending summaries (p)", PendingScreen, list(PendingScreen.BINDINGS)),
        ("Trash (t)", TrashScreen, list(TrashScreen.BINDINGS)),
        ("Settings (,)", SettingsScreen, list(SettingsScreen.BINDINGS)),
        ("Migrate dialog", MigrateModal, list(MigrateModal.BINDINGS)),
        ("Confirmations", ConfirmModal, list(ConfirmModal.BINDINGS)),
        ("Everywhere", None, list(keymap.table()["app"])),  # the app's own keys
    ]
    if first is not None:
        parts.sort(key=lambda part: part[1] is not first)  # stable: the current screen's parts lead
    return [(title, [b for b in bindings if isinstance(b, Binding)]) for title, _, bindings in parts]


def key_label(key: str) -> str:
    names = {
        "left_square_bracket": "[",
        "right_square_bracket": "]",
        "slash": "/",
        "escape": "esc",
        "delete": "del",
        "comma": ",",
    }
    return ", ".join(names.get(k.strip(), k.strip()) for k in key.split(","))


class HelpModal(ModalScreen[None]):
    """Lists every key binding; Esc, F1 or q closes it."""

    BINDINGS = keymap.bindings("help")
    """Keys of the help screen."""

    def __init__(self, current: type | None = None) -> None:
        super().__init__()
        self._current = current

    def compose(self) -> ComposeResult:
        table = self.help_table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for title, bindings in key_sections(self._current):
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
