"""HitScreen: one search hit opened over the search screen; Esc goes back to the same results.

The hit's document opens in a :class:`DocPane` on the hit's own entry (an L1 entry
unfolded), with the terms the search matched highlighted. ``n`` / ``N`` step through
the search's hits across documents; ``b`` shows the document in the browser's tree.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header

from .. import keymap
from ..messages import ShowInBrowser
from ..widgets.doc_pane import DocPane, OpenRequest


class HitScreen(Screen[None]):
    """A search hit in its document; n/N go to the next/previous hit, Esc back to the results."""

    BINDINGS = keymap.bindings("hit")
    """Keys of an opened hit (the viewer's keys also apply)."""

    def __init__(self, hits: list[Any], index: int, terms: tuple[str, ...], query: str = "") -> None:
        super().__init__()
        self._hits = hits
        self._index = index
        self._terms = terms
        self._query = query

    @property
    def index(self) -> int:
        """Which hit (0-based, in the search's list order) is open."""
        return self._index

    @property
    def hit(self) -> Any:
        """The open hit."""
        return self._hits[self._index]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield DocPane(id="hit-viewer")
        yield Footer()

    def on_mount(self) -> None:
        self._open()

    def _open(self) -> None:
        from .browse import target_for_file

        hit = self._hits[self._index]
        target = target_for_file(hit.file)
        pane = self.query_one(DocPane)
        if target is None:
            self.notify(f"Cannot open {hit.file}", severity="warning")
            return
        pane.open(target, request=OpenRequest(target, hit.line, self._terms, self._query))

    def on_doc_pane_opened(self, event: DocPane.Opened) -> None:
        event.pane.set_title(f"  [hit {self._index + 1}/{len(self._hits)}]")

    def _step(self, step: int) -> None:
        self._index = (self._index + step) % len(self._hits)
        self._open()

    def action_next_hit(self) -> None:
        self._step(+1)

    def action_prev_hit(self) -> None:
        self._step(-1)

    def action_back(self) -> None:
        self.dismiss(None)

    def action_browse(self) -> None:
        hit = self._hits[self._index]
        self.post_message(ShowInBrowser(hit.file, hit.line, self._terms))
