"""What the App does to the store and with what was found: rotate, forget, restore, remove an
entry, regenerate a summary (each confirmed, then run in a thread worker through core), copy to
the clipboard, open in ``$EDITOR`` / ``$PAGER``, export a session.

:class:`StoreActions` is the App's base class; screens and the viewer call these methods.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App

from ..core.store.paths import StorePaths
from .model import StoreSnapshot, Target
from .widgets.doc_pane import DocPane


class StoreActions(App[None]):
    """The store-changing and acting-on-a-find methods of :class:`~memkeeper.tui.app.MemkeeperApp`."""

    paths: StorePaths
    snapshot: StoreSnapshot | None

    if TYPE_CHECKING:

        def reload_snapshot(self, changed: frozenset[Path] = frozenset()) -> None: ...

    def rotate_now(self) -> None:
        """Confirm, then rotate memory.md now (refused when it is empty)."""
        from .modals.confirm import ConfirmModal

        snapshot = self.snapshot
        if snapshot is None or not snapshot.exists or snapshot.memory_bytes == 0:
            self.notify("Nothing to rotate: memory.md is empty.", severity="warning")
            return
        lines = [
            f"memory.md has {snapshot.memory_tokens:,} tokens (rotation threshold {snapshot.threshold:,}).",
            "It will be archived as memory_<UTC time>.md with a pending L3 summary;",
            "memory.md keeps its last ~2,375 tokens.",
        ]

        def confirmed(ok: bool | None) -> None:
            if ok:
                self._rotate_worker(self.paths)

        self.push_screen(ConfirmModal("Rotate memory.md now?", lines, "Rotate"), confirmed)

    @work(thread=True, exclusive=True, group="store-action", exit_on_error=False, description="rotate")
    def _rotate_worker(self, paths: StorePaths) -> None:
        from ..core.config.model import load_config_or_default
        from ..core.log.rotation import rotate

        config, _ = load_config_or_default(paths)
        try:
            result = rotate(paths, config.threshold_tokens, config.carryover_tokens, force=True)
        except Exception as exc:
            self.call_from_thread(self.notify, f"Rotation failed, nothing lost: {exc}", severity="error")
            return
        if result is None:
            self.call_from_thread(self.notify, "Nothing to rotate: memory.md is empty.", severity="warning")
        else:
            from ..core.store.jobs import start_job

            start_job(paths, "summary")  # as the CLI does: the new archive is summarised in the background
            self.call_from_thread(
                self.notify, f"Rotated into {result.archive} ({result.tokens:,} tokens); summary job started."
            )
        self.reload_snapshot()

    def forget(self, target: Target) -> None:
        """Confirm, then move an archive (with its summary) or an L1 session into the trash."""
        from .modals.confirm import ConfirmModal

        name = target.name
        if target.kind == "l1":
            lines = [f"The L1 session {name} moves into the trash.", "Restore it from the trash screen (t)."]
        else:
            lines = [
                f"The archive {name} and its L3 summary move into the trash;",
                "the index forgets them. Restore them from the trash screen (t).",
            ]

        def confirmed(ok: bool | None) -> None:
            if ok:
                self._forget_worker(self.paths, target)

        self.push_screen(ConfirmModal("Forget this?", lines, "Forget", danger=True), confirmed)

    @work(thread=True, exclusive=True, group="store-action", exit_on_error=False, description="forget")
    def _forget_worker(self, paths: StorePaths, target: Target) -> None:
        from ..core.store.trash import forget_archive, forget_l1

        def change() -> str:
            item = (
                forget_l1(paths, target.name) if target.kind == "l1" else forget_archive(paths, target.name)
            )
            return f"Moved {item.name} to the trash (t to restore)."

        self._change_store(paths, change, f"Cannot forget {target.name}")

    def restore(self, trash_id: str) -> None:
        """Restore a trashed item (in a worker); the reloaded snapshot refreshes every screen."""
        self._restore_worker(self.paths, trash_id)

    @work(thread=True, exclusive=True, group="store-action", exit_on_error=False, description="restore")
    def _restore_worker(self, paths: StorePaths, trash_id: str) -> None:
        from ..core.store.trash import restore

        self._change_store(paths, lambda: f"Restored {restore(paths, trash_id).name}.", "Cannot restore")

    def copy_text(self, text: str, what: str) -> None:
        """Copy ``text`` to the clipboard (OSC 52: the terminal must allow it) and say so."""
        self.copy_to_clipboard(text)
        shown = text if len(text) <= 60 else text[:57] + "…"
        self.notify(
            f"Copied {what}: {shown}\n(through the terminal's OSC 52; if nothing arrives, "
            "the terminal refuses it: select the text above instead)",
            timeout=6,
        )

    def open_external(self, path: Path, line: int | None, *, pager: bool) -> None:
        """Open ``path`` in ``$EDITOR`` (or ``$PAGER``) at ``line``, the app suspended meanwhile."""
        import subprocess

        from textual.app import SuspendNotSupported

        argv = _editor_argv(path, line, pager)
        try:
            with self.suspend():
                code = subprocess.run(argv, check=False).returncode  # noqa: S603 - the user's own editor
        except SuspendNotSupported:
            self.notify("This terminal cannot hand over to another program.", severity="warning")
            return
        except OSError as exc:
            self.notify(f"Cannot run {argv[0]}: {exc}", severity="error")
            return
        if code:
            self.notify(f"{argv[0]} exited with {code}.", severity="warning")
        self.reload_snapshot()

    def export_session(self, path: Path) -> None:
        """Write the L1 session at ``path`` as Markdown into the project folder (in a worker)."""
        self._export_worker(self.paths, path)

    @work(thread=True, group="export", exit_on_error=False, description="export session")
    def _export_worker(self, paths: StorePaths, path: Path) -> None:
        from ..core.capture.export import export_session

        try:
            written = export_session(path, paths.project)
        except (OSError, ValueError) as exc:
            self.call_from_thread(self.notify, f"Cannot export: {exc}", severity="error")
            return
        self.call_from_thread(self.notify, f"Exported to {written}", timeout=6)

    @on(DocPane.RemoveRequested)
    def _remove_requested(self, message: DocPane.RemoveRequested) -> None:
        from .modals.confirm import ConfirmModal

        where = "memory.md" if message.target.kind == "memory" else message.target.name
        span = (
            f"line {message.start}"
            if message.start == message.end
            else f"lines {message.start}-{message.end}"
        )
        preview = message.text.splitlines()[:4]
        lines = [f"{span} of {where} move into the trash (t restores them):", *preview]
        if message.target.kind == "archive":
            lines.append("Its L3 summary is marked pending, to be made again without them.")

        def confirmed(ok: bool | None) -> None:
            if ok:
                self._remove_worker(self.paths, where, message.start, message.end, message.text)

        self.push_screen(ConfirmModal("Remove this entry?", lines, "Remove", danger=True), confirmed)

    @work(thread=True, exclusive=True, group="store-action", exit_on_error=False, description="remove entry")
    def _remove_worker(self, paths: StorePaths, name: str, start: int, end: int, text: str) -> None:
        from ..core.store.trash import forget_lines

        def change() -> str:
            forget_lines(paths, name, start, end, text)
            return f"Moved {end - start + 1} line(s) of {name} to the trash (t)."

        self._change_store(paths, change, "Nothing removed")

    def regenerate(self, archive: str) -> None:
        """Make the L3 summary of ``archive`` again with the configured backend (in a worker)."""
        self.notify(f"Regenerating the summary of {archive}…", timeout=3)
        self._regenerate_worker(self.paths, archive)

    @work(thread=True, exclusive=True, group="store-action", exit_on_error=False, description="regenerate")
    def _regenerate_worker(self, paths: StorePaths, archive: str) -> None:
        from ..core.summaries.summary import generate_summary

        try:
            summary = generate_summary(paths, archive)
        except Exception as exc:
            self.call_from_thread(self.notify, f"Regeneration failed: {exc}", severity="error")
        else:
            made_by = getattr(summary, "generator", None) or "the configured backend"
            self.call_from_thread(self.notify, f"Summary of {archive} made again ({made_by}).")
        self.reload_snapshot()

    def _change_store(self, paths: StorePaths, change: Callable[[], str], failed: str) -> None:
        """Run ``change`` (in a worker thread) and say what it did, or why nothing changed;
        then bring the search index and every screen up to date."""
        try:
            done = change()
        except Exception as exc:
            self.call_from_thread(self.notify, f"{failed}: {exc}", severity="error")
            return
        self._refresh_search(paths)
        self.call_from_thread(self.notify, done)
        self.reload_snapshot()

    @staticmethod
    def _refresh_search(paths: StorePaths) -> None:
        try:
            from ..core.search import refresh
        except ImportError:
            return
        try:
            refresh(paths)
        except Exception:
            pass


def _editor_argv(path: Path, line: int | None, pager: bool) -> list[str]:
    import os
    import shlex

    if pager:
        command = os.environ.get("PAGER") or "less"
        argv = shlex.split(command)
        if line and Path(argv[0]).name == "less":
            argv.append(f"+{line}")
        return [*argv, str(path)]
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    argv = shlex.split(command)
    if line and Path(argv[0]).name in ("vi", "vim", "nvim", "nano", "emacs", "micro", "kak", "hx"):
        argv.append(f"+{line}")
    return [*argv, str(path)]
