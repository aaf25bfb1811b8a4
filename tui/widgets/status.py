"""StatusLine: memory.md against the threshold, pending summaries, the summarizer backend (and
whether it rests), today's model calls against the cap, what is captured (nothing yet, or
when the next flush runs), last rotation and flush, live refresh. Parts that do not fit the
width are left out, least useful first (rotation, then the last flush, the next flush, the
model calls)."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ...core.basics.timestamps import local_time
from ..model import BackendHealth, StoreSnapshot
from ..text import human_tokens, literal

SEPARATOR = " │ "


class StatusLine(Static):
    """One line of store status, updated by the app after every snapshot (styled in
    ``styles/widgets.tcss``)."""

    live: reactive[bool] = reactive(False)
    """Whether live refresh is running."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self._snapshot: StoreSnapshot | None = None
        self._backend: BackendHealth | None = None

    def show_snapshot(self, snapshot: StoreSnapshot) -> None:
        """Show the state in ``snapshot``."""
        self._snapshot = snapshot
        self._redraw()

    def set_live(self, live: bool) -> None:
        """Show live refresh as on or off (bound to the App's ``live``)."""
        self.live = live

    def set_backend(self, backend: BackendHealth | None) -> None:
        """Show the summarizer backend (bound to the App's ``backend``)."""
        self._backend = backend
        self._redraw()

    def watch_live(self) -> None:
        self._redraw()

    def on_resize(self) -> None:
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
        tokens = f"{human_tokens(snapshot.memory_tokens)}/{human_tokens(snapshot.threshold)} {ratio:.0%}"
        pending = Text.assemble(
            (f"{snapshot.pending} pending", "bold" if snapshot.pending else ""),
            f" {snapshot.failed}✗" if snapshot.failed else "",
        )
        # (part, dropped in this order when the line is too narrow: higher goes first)
        parts: list[tuple[Text, int]] = [
            (Text(tokens, style="bold"), 0),
            (pending, 0),
            (backend_text(self._backend), 0),
            *budget_part(self._backend),
            capture_text(snapshot),
            (switched_off(snapshot), 0),
            (Text(f"rot {_brief(snapshot.last_rotation)}"), 5),
            (Text(f"flush {_brief(snapshot.last_flush)}"), 4),
            (Text.assemble("live ", ("on" if self.live else "off", "bold" if self.live else "")), 0),
        ]
        self.update(fit([p for p in parts if p[0].plain], self.content_size.width or 200))


def switched_off(snapshot: StoreSnapshot) -> Text:
    """``memory off`` / ``recall off`` when a setting turned them off (nothing when both are on)."""
    off = [
        name
        for name, on in (("memory", snapshot.memory_enabled), ("recall", snapshot.recall_enabled))
        if not on
    ]
    return Text(" ".join(f"{name} off" for name in off), style="bold")


def backend_text(backend: BackendHealth | None) -> Text:
    """``summarizer claude``; ``summarizer extractive (claude rests → 11-24 14:20)`` while it rests."""
    if backend is None:
        return Text("summarizer …", style="dim")
    if backend.resting:
        return Text.assemble(
            "summarizer ",
            (backend.in_use, "bold"),
            (f" ({backend.backend} rests → {_brief(backend.resting_until)})", "bold"),
        )
    return Text.assemble("summarizer ", literal(backend.in_use))


def budget_part(backend: BackendHealth | None) -> list[tuple[Text, int]]:
    """``calls 3/50``: today's model calls against the daily cap (bold once a cap is reached);
    none while the free extractive summarizer is all that runs."""
    if backend is None or (backend.in_use == "extractive" and not backend.calls):
        return []
    over = backend.calls >= backend.daily_calls or backend.tokens >= backend.daily_tokens
    return [(Text(f"calls {backend.calls}/{backend.daily_calls}", style="bold" if over else ""), 2)]


def capture_text(snapshot: StoreSnapshot) -> tuple[Text, int]:
    """``nothing captured yet`` (kept), else ``next flush in 6`` (dropped before the model calls)."""
    if not snapshot.sessions:
        return Text("nothing captured yet", style="bold"), 0
    if snapshot.flush_left is None:
        return Text(f"flush every {snapshot.flush_every}"), 3
    return Text(f"next flush in {snapshot.flush_left}"), 3


def fit(parts: list[tuple[Text, int]], width: int) -> Text:
    """The parts joined by separators, the highest-numbered ones dropped until the line fits."""
    shown = list(parts)
    while True:
        line = Text(SEPARATOR).join(part for part, _ in shown)
        droppable = [p for p in shown if p[1] > 0]
        if line.cell_len <= width or not droppable:
            return line
        shown.remove(max(droppable, key=lambda p: p[1]))


def _brief(iso: str | None) -> str:
    """``2026-11-21T11:49…`` → local ``11-21 12:49`` (absolute, so it never changes by itself)."""
    return local_time(iso, "%m-%d %H:%M") if iso else "never"
