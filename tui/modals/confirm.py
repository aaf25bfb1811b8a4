"""ConfirmModal: a yes/no question with the details of what will happen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from .. import keymap
from ..text import literal


class ConfirmModal(ModalScreen[bool]):
    """Ask before doing something; dismisses with True (confirm) or False."""

    BINDINGS = keymap.bindings("confirm")
    """Keys of a confirmation."""

    def __init__(
        self, title: str, lines: list[str], confirm_label: str = "Yes", danger: bool = False
    ) -> None:
        super().__init__()
        self._title = title
        self._lines = lines
        self._confirm_label = confirm_label
        self._danger = danger

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(literal(self._title), classes="dialog-title")
            yield Static(literal("\n".join(self._lines)), classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(
                    f"{self._confirm_label} (y)", id="yes", variant="error" if self._danger else "primary"
                )
                yield Button("Cancel (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
