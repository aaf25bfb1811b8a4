"""StatusLine: memory.md tokens against the threshold, pending summaries, last rotation and flush, live refresh."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from memkeeper.core.timefmt import local_time
from memkeeper.tui.model import StoreSnapshot
from memkeeper.tui.text import human_tokens, literal


class StatusLine(Static):
    """One line of store status, updated by the app after every snapshot."""

    DEFAULT_CSS = """
    StatusLine { height: 1; background: $panel; color: $text; padding: 0 1; }
    StatusLine.-over { background: $warning 30%; }
    """

    live: reactive[bool] = reactive(False)
    """Whether live refresh is running."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self._snapshot: StoreSnapshot | None = None

    def show_snapshot(self, snapshot: StoreSnapshot) -> None:
        """Show the state in ``snapshot``."""
        self._snapshot = snapshot
        self._redraw()

    def set_live(self, live: bool) -> None:
        """Show live refresh as on or off (bound to the App's ``live``)."""
        self.live = live

    def watch_live(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        snapshot = self._snapshot
        if snapshot is None:
            self.update(Text("loading…"))
            return
        if not snapshot.exists:
            self.update(Text.assemble("no store in ", literal(snapshot.project.name)))
            return
        ratio = snapshot.memory_tokens / max(1, snapshot.threshold)
        self.set_class(ratio >= 1.0, "-over")
        text = Text.assemble(
            (
                f"{human_tokens(snapshot.memory_tokens)}/{human_tokens(snapshot.threshold)} {ratio:.0%}",
                "bold",
            ),
            " │ ",
            (f"{snapshot.pending} pending", "bold" if snapshot.pending else ""),
            f" {snapshot.failed}✗" if snapshot.failed else "",
            " │ rot ",
            _brief(snapshot.last_rotation),
            " │ flush ",
            _brief(snapshot.last_flush),
            " │ live ",
            ("on" if self.live else "off", "bold" if self.live else ""),
        )
        self.update(text)


def _brief(iso: str | None) -> str:
    """``2026-11-21T11:49…`` → local ``11-21 12:49`` (absolute, so it never changes by itself)."""
    return local_time(iso, "%m-%d %H:%M") if iso else "never"
