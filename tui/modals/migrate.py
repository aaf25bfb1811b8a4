"""MigrateModal: preview a legacy migration, confirm, run it in a worker, show the result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, ProgressBar, Static

from ...core.store.paths import StorePaths
from .. import keymap
from ..text import literal

if TYPE_CHECKING:
    from ...core.log.migrate import MigrationPlan


def plan_lines(plan: MigrationPlan) -> list[str]:
    """What a plan will create, one line each."""
    lines = [
        f"memory.md: {plan.memory_tokens:,} tokens (threshold {plan.threshold_tokens:,})",
        f"will create {len(plan.archives)} archive(s):",
    ]
    for archive in plan.archives:
        lines.append(
            f"  {archive.name}  {archive.first_date} → {archive.last_date}  "
            f"{archive.sections} sections, {archive.tokens:,} tokens"
        )
    lines.append(f"memory.md keeps the last {plan.carryover_bytes:,} bytes; a backup is made first.")
    return lines


class MigrateModal(ModalScreen[bool]):
    """Preview → confirm → progress → result. Dismisses True if the store changed."""

    BINDINGS = keymap.bindings("migrate")
    """Keys of the migration dialog."""

    def __init__(self, paths: StorePaths) -> None:
        super().__init__()
        self._paths = paths
        self._state: Literal["planning", "nothing", "ready", "migrating", "finished"] = "planning"

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static("Migrate legacy memory.md", classes="dialog-title")
            yield Static("planning…", id="migrate-body", classes="dialog-body")
            yield ProgressBar(total=None, show_eta=False, id="migrate-progress")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Migrate (y)", id="run", variant="primary", disabled=True)
                yield Button("Close (esc)", id="close")

    def on_mount(self) -> None:
        self.query_one("#migrate-progress").display = False
        self.query_one("#close", Button).focus()
        self.plan()

    @work(thread=True, exclusive=True, group="migrate", exit_on_error=False, description="plan migration")
    def plan(self) -> None:
        from ...core.log.migrate import plan_migration

        try:
            plan = plan_migration(self._paths)
        except Exception as exc:
            self.app.call_from_thread(self._show_text, [f"Cannot plan a migration: {exc}"], False)
            return
        if not plan.needed:
            self.app.call_from_thread(self._show_text, [f"Nothing to migrate: {plan.reason}."], False)
            return
        self.app.call_from_thread(self._show_text, plan_lines(plan), True)

    def _show_text(self, lines: list[str], needed: bool) -> None:
        if not self.is_attached:
            return
        self._state = "ready" if needed else "nothing"
        self.query_one("#migrate-body", Static).update(literal("\n".join(lines)))
        run = self.query_one("#run", Button)
        run.disabled = not needed
        run.display = needed  # nothing to migrate: no button that offers to
        self.refresh_bindings()
        if needed:
            run.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``y Migrate`` exists only while there is something to migrate."""
        return action != "run" or self._state in ("planning", "ready")

    def action_run(self) -> None:
        if self._state != "ready":
            self.notify("Nothing to migrate.", severity="warning")
            return
        self._state = "migrating"
        self.query_one("#run", Button).disabled = True
        self.query_one("#migrate-progress").display = True
        self.query_one("#migrate-body", Static).update("migrating… (backup, archives, memory.md, index)")
        self.migrate()

    @work(thread=True, exclusive=True, group="migrate", exit_on_error=False, description="migrate")
    def migrate(self) -> None:
        from ...core.log.migrate import migrate_legacy

        try:
            plan = migrate_legacy(self._paths, dry_run=False, start_summaries=False)
        except Exception as exc:
            self.app.call_from_thread(self._finish, [f"Migration failed, nothing was lost: {exc}"])
            return
        lines = [f"Created {len(plan.archives)} archive(s):", *[f"  {a.name}" for a in plan.archives]]
        if plan.backup:
            lines.append(f"Backup: {plan.backup}")
        lines.append("Their summaries are pending: generate them from the pending screen (p).")
        self.app.call_from_thread(self._finish, lines)

    def _finish(self, lines: list[str]) -> None:
        if not self.is_attached:
            return
        self._state = "finished"
        progress = self.query_one("#migrate-progress", ProgressBar)
        progress.update(total=1, progress=1)
        self.query_one("#migrate-body", Static).update(literal("\n".join(lines)))
        self.query_one("#close", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run":
            self.action_run()
        else:
            self.action_close()

    def action_close(self) -> None:
        if self._state == "migrating":
            self.notify(
                "The migration is running; it holds the store lock and ends shortly.", severity="warning"
            )
            return
        self.dismiss(self._state == "finished")
