"""PendingScreen (p): pending and failed L3 summaries, and regenerating them.

The list comes from :func:`memkeeper.core.store.memory_index_model.pending_summaries`. Regenerating
one or all runs :func:`memkeeper.core.summaries.summary.generate_summary` with the chosen backend
in a thread worker, one archive at a time, with a progress bar; cancelling stops after
the archive being generated (a model call cannot be interrupted safely halfway).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Header, ProgressBar, Select, Static
from textual.worker import get_current_worker

from .. import keymap
from ..messages import JobFinished, JobProgress, ReloadWanted
from ..text import literal
from .store_screen import ListScreen

if TYPE_CHECKING:
    from ...core.store.memory_index_model import PendingSummary
    from ..model import StoreSnapshot

CONFIGURED = "configured"


def backend_choices() -> list[str]:
    from ...core.summarizers import BACKEND_NAMES

    return [CONFIGURED, *BACKEND_NAMES]


#: The table's columns.
COLUMNS = ("archive", "state", "tries", "error")


def first_line(error: str | None) -> str:
    """The first line of a summary's last error ("" if none)."""
    return error.splitlines()[0] if error else ""


class PendingScreen(ListScreen["PendingSummary"]):
    """The pending summaries, their errors, and regenerate one / all with a backend."""

    BINDINGS = keymap.bindings("pending")
    """Keys of the pending screen."""

    _job_running = False
    """A regeneration is under way (set until its JobFinished arrives)."""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield Static("Pending and failed L3 summaries", id="pending-title", classes="screen-title")
        yield DataTable(id="pending-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="pending-error", markup=False)
        with Horizontal(id="pending-controls"):
            yield Static("backend:", classes="label")
            yield Select(
                [(name, name) for name in backend_choices()],
                value=CONFIGURED,
                allow_blank=False,
                id="backend",
            )
            yield ProgressBar(total=1, show_eta=False, id="pending-progress")
        yield Static("", id="pending-log", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.focus()
        self.query_one("#pending-progress").display = False
        self.refresh_list()

    # -- list -------------------------------------------------------------------------------

    def show_snapshot(self, snapshot: StoreSnapshot, changed: frozenset[Any]) -> None:
        """Called by the app after any store change: re-read the list (not while regenerating)."""
        if not self._job_running:
            self.refresh_list()

    def read_list(self) -> list[PendingSummary]:
        from ...core.store.memory_index_model import pending_summaries

        return pending_summaries(self._paths)

    def show_list(self) -> None:
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        rows = []
        for item in self._items:
            error = first_line(item.error)
            short = error if len(error) <= 48 else error[:47] + "…"  # the whole error shows below the table
            rows.append((item.file, item.state, str(item.attempts), short))
        # Widths set from the rows, not measured by the table when it next idles: the screen looks the
        # same however soon after the list arrives it is drawn.
        table.clear(columns=True)
        for n, label in enumerate(COLUMNS):
            table.add_column(label, width=max([len(label), *(len(row[n]) for row in rows)]))
        for file, state, attempts, short in rows:
            style = "bold" if state == "failed" else ""
            table.add_row(literal(file), Text(state, style=style), attempts, literal(short), key=file)
        if self._items:
            table.move_cursor(row=min(cursor, len(self._items) - 1))
        title = (
            f"Pending and failed L3 summaries ({len(self._items)})"
            if self._items
            else "No pending summaries: all archives are summarised."
        )
        self.query_one("#pending-title", Static).update(title)
        self._show_error()

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        """Enter on a row (the table takes the key first): regenerate it, as the title says."""
        self.action_regenerate_one()

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self) -> None:
        self._show_error()

    def _show_error(self) -> None:
        table = self.query_one(DataTable)
        text = ""
        if 0 <= table.cursor_row < len(self._items):
            item = self._items[table.cursor_row]
            if error := first_line(item.error):
                text = f"{item.file}: {error}"
        self.query_one("#pending-error", Static).update(literal(text))

    # -- regenerate --------------------------------------------------------------------------

    def _backend(self) -> str | None:
        value = self.query_one("#backend", Select).value
        return None if value in (CONFIGURED, Select.BLANK) else str(value)

    def action_backend(self) -> None:
        select = self.query_one("#backend", Select)
        select.focus()
        select.expanded = True

    def action_regenerate_one(self) -> None:
        table = self.query_one(DataTable)
        if not self._items:
            self.notify("Nothing to regenerate: no pending summaries.", severity="warning")
            return
        self._start([self._items[table.cursor_row].file])

    def action_regenerate_all(self) -> None:
        if not self._items:
            self.notify("Nothing to regenerate: no pending summaries.", severity="warning")
            return
        self._start([item.file for item in self._items])

    def _start(self, files: list[str]) -> None:
        if self._job_running:
            self.notify("A regeneration is already running (c cancels it).", severity="warning")
            return
        self._job_running = True
        progress = self.query_one("#pending-progress", ProgressBar)
        progress.display = True
        progress.update(total=len(files), progress=0)
        self.query_one("#pending-log", Static).update(f"regenerating {len(files)} summary(ies)…")
        self._regenerate_worker(files, self._backend())

    @work(
        thread=True,
        exclusive=True,
        group="regenerate",
        exit_on_error=False,
        description="regenerate summaries",
    )
    def _regenerate_worker(self, files: list[str], backend: str | None) -> None:
        from ...core.summaries.summary import SummaryError, generate_summary

        worker = get_current_worker()
        lines: list[str] = []
        for done, name in enumerate(files):
            if worker.is_cancelled:
                self.post_message(JobFinished(lines, cancelled=True))
                return
            self.post_message(JobProgress(done, len(files), name))
            try:
                summary = generate_summary(self._paths, name, backend)
            except SummaryError as exc:
                lines.append(f"✗ {name}: {exc}")
            except Exception as exc:
                lines.append(f"✗ {name}: {type(exc).__name__}: {exc}")
            else:
                lines.append(f"✓ {name} ({getattr(summary, 'generator', None) or backend or 'configured'})")
        self.post_message(JobProgress(len(files), len(files), "done"))
        self.post_message(JobFinished(lines))

    @on(JobProgress)
    def _progress(self, message: JobProgress) -> None:
        self.query_one("#pending-progress", ProgressBar).update(total=message.total, progress=message.done)
        if message.done < message.total:
            self.query_one("#pending-log", Static).update(
                literal(f"[{message.done + 1}/{message.total}] {message.label} … (c cancels after this one)")
            )

    @on(JobFinished)
    def _finished(self, message: JobFinished) -> None:
        self._job_running = False
        head = "cancelled" if message.cancelled else "finished"
        failed = sum(1 for line in message.lines if line.startswith("✗"))
        summary = f"{head}: {len(message.lines) - failed} generated, {failed} failed"
        self.query_one("#pending-log", Static).update(literal("\n".join([summary, *message.lines[-4:]])))
        self.notify(summary, severity="warning" if failed or message.cancelled else "information")
        self.post_message(ReloadWanted())  # the app's new snapshot reaches show_snapshot: this list

    def action_cancel(self) -> None:
        if not self._job_running:
            self.notify("No job is running.", severity="warning")
            return
        # The guard stays up until the worker reports JobFinished (which reloads the lists):
        # it is still generating the current archive, and a new job must not start beside it.
        self.workers.cancel_group(self, "regenerate")
        self.query_one("#pending-log", Static).update("cancelling: stops after the current archive")

    def action_close(self) -> None:
        if self._job_running:
            self.notify(
                "Regeneration goes on in the background of this screen; c cancels it.", severity="warning"
            )
            return
        self.dismiss(None)
