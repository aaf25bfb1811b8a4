"""SectionsModal: jump to a ``##`` section of the open document."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from .. import keymap
from ..text import literal


class SectionsModal(ModalScreen[int | None]):
    """Pick a section; dismisses with its item index (None if cancelled)."""

    BINDINGS = keymap.bindings("sections")
    """Keys of the section picker (arrows and Enter pick)."""

    def __init__(self, sections: list[tuple[int, str]], current: int = 0) -> None:
        super().__init__()
        self._sections = sections
        self._current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static(f"Sections ({len(self._sections)})", classes="dialog-title")
            yield OptionList(
                *[Option(literal(title), id=str(index)) for index, title in self._sections], id="sections"
            )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        before = [i for i, (index, _) in enumerate(self._sections) if index <= self._current]
        options.highlighted = before[-1] if before else 0
        options.focus()
        # Once laid out, bring the current section into view (at once: screenshots stay stable).
        self.call_after_refresh(options.scroll_to_highlight)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
