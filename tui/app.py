"""memkeeper-tui: the App (store, snapshot, live refresh, actions) and the console script.

``memkeeper-tui [PROJECT_DIR] [--demo [--keep-demo]] [--no-watch]``: a folder without a store is an
error (exit 2) that points to ``--demo``; a demo store is removed on exit unless kept. The App owns the store paths,
the latest :class:`StoreSnapshot` (read in a thread worker), the one file watcher and
the actions that change the store (rotate, forget, restore, migrate), which all run in
workers through core. Screens get the snapshot through calls down
(``screen.show_snapshot``) and ask for actions through the App's methods.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive

from memkeeper.core.store import StorePaths
from memkeeper.tui.commands import MemoryCommands
from memkeeper.tui.messages import SnapshotLoaded, StoreChanged, WatchStateChanged
from memkeeper.tui.model import BackendHealth, StoreSnapshot, Target
from memkeeper.tui.prefs import Prefs
from memkeeper.tui.screens.browse import BrowseScreen, target_for_file
from memkeeper.tui.snapshot import load_snapshot
from memkeeper.tui.widgets.doc_pane import DocPane, OpenRequest

if TYPE_CHECKING:
    from memkeeper.tui.screens.search import SearchState

STYLES = Path(__file__).parent / "styles"


class MemkeeperApp(App[None]):
    """Browse a memkeeper store's tiers, act on pending work, search, refresh live."""

    TITLE = "memkeeper"
    CSS_PATH: ClassVar[list[str | PurePath]] = [STYLES / "base.tcss", STYLES / "app.tcss"]
    COMMANDS = App.COMMANDS | {MemoryCommands}
    BINDINGS = [
        Binding("f1", "help", "Help", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("ctrl+p", "command_palette", "Commands", show=False, id="app.palette"),
    ]
    """Keys that work on every screen."""

    live: reactive[bool] = reactive(False)
    """Whether live refresh is running (screens bind their status line to it)."""

    backend: reactive[BackendHealth | None] = reactive(None)
    """The summarizer backend and whether it rests (read after each snapshot, in a thread)."""

    def __init__(
        self, paths: StorePaths, *, watch: bool = True, note: str | None = None, prefs: bool = True
    ) -> None:
        super().__init__()
        from memkeeper.tui.prefs import Prefs, load_prefs

        self.paths = paths
        self.snapshot: StoreSnapshot | None = None
        self.prefs = load_prefs() if prefs else Prefs()
        self._save = prefs
        self.theme = self.prefs.theme if self.prefs.theme in self.available_themes else "textual-dark"
        self.search_state: SearchState | None = None
        self._watch_wanted = watch
        self._watch_stop: asyncio.Event | None = None
        self._note = note
        self.sub_title = paths.project.name

    def get_default_screen(self) -> BrowseScreen:
        return BrowseScreen()

    def on_mount(self) -> None:
        self.watch(self, "theme", self._theme_changed, init=False)
        self.reload_snapshot()
        if self._note:
            self.notify(self._note, title="memkeeper-tui", timeout=6)
        if self._watch_wanted:
            self.start_watching()

    # -- snapshot ---------------------------------------------------------------------------

    def reload_snapshot(self, changed: frozenset[Path] = frozenset()) -> None:
        """Re-read the store in a thread; screens get it through :class:`SnapshotLoaded`."""
        self._snapshot_worker(self.paths, changed)

    @work(thread=True, exclusive=True, group="snapshot", exit_on_error=False, description="read the store")
    def _snapshot_worker(self, paths: StorePaths, changed: frozenset[Path]) -> None:
        try:
            snapshot = load_snapshot(paths)
        except Exception as exc:
            self.call_from_thread(self.notify, f"Cannot read the store: {exc}", severity="error")
            return
        if paths == self.paths:
            self.post_message(SnapshotLoaded(snapshot, changed))

    @on(SnapshotLoaded)
    def _snapshot_loaded(self, message: SnapshotLoaded) -> None:
        if self.snapshot is None:
            self.call_after_refresh(self._warm_up)
        elif message.snapshot.exists:
            self._backend_worker(self.paths)
        self.snapshot = message.snapshot
        for screen in self.screen_stack:
            show = getattr(screen, "show_snapshot", None)
            if callable(show):
                show(message.snapshot, message.changed)

    @work(thread=True, group="warm-up", exit_on_error=False, description="warm up search")
    def _warm_up(self) -> None:
        """After the first paint, read the summarizer's health and import what the first search
        needs, so its keystroke is fast."""
        if self.snapshot is None or not self.snapshot.exists:
            return
        self._read_backend(self.paths)
        try:
            from memkeeper.core.search import search
        except ImportError:
            return
        if not self.paths.search_db.exists():
            return  # no index yet: the first search builds it, with its progress shown
        try:
            # A throwaway search: opens the index, reads its schema and pages into the OS
            # cache, so the first real keystroke pays none of that (nothing is written).
            search(self.paths, "memkeeper", deep=self.prefs.deep, limit=1, refresh=False)
        except Exception:
            pass

    @work(thread=True, exclusive=True, group="backend", exit_on_error=False, description="backend health")
    def _backend_worker(self, paths: StorePaths) -> None:
        self._read_backend(paths)

    def _read_backend(self, paths: StorePaths) -> None:
        from memkeeper.tui.snapshot import backend_health

        try:
            health = backend_health(paths)
        except Exception:
            return  # the status line says nothing rather than something wrong
        if paths == self.paths:
            self.call_from_thread(setattr, self, "backend", health)

    # -- live refresh ----------------------------------------------------------------------

    def start_watching(self) -> None:
        self._watch_stop = asyncio.Event()
        self._watch_worker(self.paths, self._watch_stop)

    def stop_watching(self) -> None:
        if self._watch_stop is not None:
            self._watch_stop.set()
        self.workers.cancel_group(self, "fs-watch")
        self._set_live(False)

    @work(exclusive=True, group="fs-watch", exit_on_error=False, description="watch the store")
    async def _watch_worker(self, paths: StorePaths, stop: asyncio.Event) -> None:
        from memkeeper.tui.watch import watch_store, watched_folders

        if not watched_folders(paths):
            self.post_message(WatchStateChanged(False, "nothing to watch: the store does not exist"))
            return
        self.post_message(WatchStateChanged(True))
        try:
            async for tiers, changed in watch_store(paths, stop):
                self.post_message(StoreChanged(tiers, changed))
        except OSError as exc:
            hint = (
                " (raise fs.inotify.max_user_watches)"
                if "inotify" in str(exc).lower() or exc.errno == 28
                else ""
            )
            self.post_message(WatchStateChanged(False, f"live refresh stopped: {exc}{hint}"))
            return
        self.post_message(WatchStateChanged(False))

    @on(WatchStateChanged)
    def _watch_state(self, message: WatchStateChanged) -> None:
        self._set_live(message.active)
        if message.error:
            self.notify(message.error, severity="warning")

    def _set_live(self, live: bool) -> None:
        self.live = live

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        self.reload_snapshot(message.paths)

    def toggle_live(self) -> None:
        """Turn live refresh off, or on again."""
        if self.live:
            self.stop_watching()
            self.notify("Live refresh off (w turns it on).", timeout=3)
        else:
            self.start_watching()
            self.reload_snapshot()

    # -- screens -----------------------------------------------------------------------------

    def action_help(self) -> None:
        from memkeeper.tui.modals.help import HelpModal

        if not isinstance(self.screen, HelpModal):
            self.push_screen(HelpModal(type(self.screen)))

    def browse(self) -> BrowseScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, BrowseScreen):
                return screen
        return None

    def open_search(self, query: str = "") -> None:
        """Open search where it was left (query, filters, results), or with ``query``."""
        from memkeeper.tui.screens.search import SearchScreen, SearchState

        if isinstance(self.screen, SearchScreen):
            return
        state = self.search_state or SearchState(deep=self.prefs.deep)
        if query:
            state = SearchState(query=query, deep=state.deep)
        self.push_screen(SearchScreen(self.paths, state))

    def remember_search(self, state: SearchState) -> None:
        """Keep where the search was left: ``/`` reopens it there."""
        self.search_state = state

    def show_in_browser(self, file: str, line: int | None, terms: tuple[str, ...]) -> None:
        """Close the screens over the browser and open ``file`` there (tree selected)."""
        target = target_for_file(file)
        browse = self.browse()
        if target is None or browse is None:
            self.notify(f"Cannot open {file}", severity="warning")
            return
        while self.screen is not browse:
            self.pop_screen()
        browse.open_request(OpenRequest(target, line, terms))

    def set_deep_default(self, deep: bool) -> None:
        """Remember the deep toggle as the default of the next search."""
        from dataclasses import replace

        if deep != self.prefs.deep:
            self.prefs = replace(self.prefs, deep=deep)
            self._save_prefs()

    def _theme_changed(self, theme: str) -> None:
        from dataclasses import replace

        if theme != self.prefs.theme:
            self.prefs = replace(self.prefs, theme=theme)
            self._save_prefs()

    def _save_prefs(self) -> None:
        if self._save:
            self._prefs_worker(self.prefs)

    @work(thread=True, group="prefs", exit_on_error=False, description="save preferences")
    def _prefs_worker(self, prefs: Prefs) -> None:
        from dataclasses import asdict

        from memkeeper.tui.prefs import save_prefs

        save_prefs(**asdict(prefs))

    def open_pending(self) -> None:
        from memkeeper.tui.screens.pending import PendingScreen

        if not isinstance(self.screen, PendingScreen):
            self.push_screen(PendingScreen(self.paths))

    def open_sessions(self) -> None:
        from memkeeper.tui.screens.sessions import SessionsScreen

        if not isinstance(self.screen, SessionsScreen):
            self.push_screen(SessionsScreen(self.paths))

    def open_activity(self) -> None:
        from memkeeper.tui.screens.activity import ActivityScreen

        if not isinstance(self.screen, ActivityScreen):
            self.push_screen(ActivityScreen(self.paths))

    def open_trash(self) -> None:
        from memkeeper.tui.screens.trash import TrashScreen

        if not isinstance(self.screen, TrashScreen):
            self.push_screen(TrashScreen(self.paths))

    def open_projects(self) -> None:
        from memkeeper.tui.modals.projects import ProjectsModal

        def chosen(project: Path | None) -> None:
            if project is not None and project != self.paths.project:
                self.switch_project(project)

        self.push_screen(ProjectsModal(self.paths.project), chosen)

    def open_migrate(self) -> None:
        from memkeeper.tui.modals.migrate import MigrateModal

        def closed(changed: bool | None) -> None:
            if changed:
                self.reload_snapshot()

        self.push_screen(MigrateModal(self.paths), closed)

    def switch_project(self, project: Path) -> None:
        """Show another project's store (the watcher follows)."""
        was_live = self.live or self._watch_wanted
        self.stop_watching()
        # Screens over the browser (pending, trash, search) hold the old project's paths.
        browse = self.browse()
        while browse is not None and self.screen is not browse:
            self.pop_screen()
        self.paths = StorePaths(project)
        self.snapshot = None
        self.backend = None
        self.sub_title = project.name
        if browse is not None:
            browse.reset()
        self.reload_snapshot()
        if was_live:
            self.start_watching()
        self.notify(f"Switched to {project.name}", timeout=3)

    # -- actions that change the store --------------------------------------------------------

    def rotate_now(self) -> None:
        """Confirm, then rotate memory.md now (refused when it is empty)."""
        from memkeeper.tui.modals.confirm import ConfirmModal

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
        from memkeeper.core.config import load_config_or_default
        from memkeeper.core.rotation import rotate

        config, _ = load_config_or_default(paths)
        try:
            result = rotate(paths, config.threshold_tokens, config.carryover_tokens, force=True)
        except Exception as exc:
            self.call_from_thread(self.notify, f"Rotation failed, nothing lost: {exc}", severity="error")
            return
        if result is None:
            self.call_from_thread(self.notify, "Nothing to rotate: memory.md is empty.", severity="warning")
        else:
            from memkeeper.core.jobs import start_job

            start_job(paths, "summary")  # as the CLI does: the new archive is summarised in the background
            self.call_from_thread(
                self.notify, f"Rotated into {result.archive} ({result.tokens:,} tokens); summary job started."
            )
        self.reload_snapshot()

    def forget(self, target: Target) -> None:
        """Confirm, then move an archive (with its summary) or an L1 session into the trash."""
        from memkeeper.tui.modals.confirm import ConfirmModal

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
        from memkeeper.core.forget import forget_archive, forget_l1

        try:
            if target.kind == "l1":
                item = forget_l1(paths, target.name)
            else:
                item = forget_archive(paths, target.name)
        except Exception as exc:
            self.call_from_thread(self.notify, f"Cannot forget {target.name}: {exc}", severity="error")
            return
        self._refresh_search(paths)
        self.call_from_thread(self.notify, f"Moved {item.name} to the trash (t to restore).")
        self.reload_snapshot()

    def restore(self, trash_id: str) -> None:
        """Restore a trashed item (in a worker); the reloaded snapshot refreshes every screen."""
        self._restore_worker(self.paths, trash_id)

    @work(thread=True, exclusive=True, group="store-action", exit_on_error=False, description="restore")
    def _restore_worker(self, paths: StorePaths, trash_id: str) -> None:
        from memkeeper.core.forget import restore

        try:
            item = restore(paths, trash_id)
        except Exception as exc:
            self.call_from_thread(self.notify, f"Cannot restore: {exc}", severity="error")
        else:
            self._refresh_search(paths)
            self.call_from_thread(self.notify, f"Restored {item.name}.")
        self.reload_snapshot()

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
        from memkeeper.core.export import export_session

        try:
            written = export_session(path, paths.project)
        except (OSError, ValueError) as exc:
            self.call_from_thread(self.notify, f"Cannot export: {exc}", severity="error")
            return
        self.call_from_thread(self.notify, f"Exported to {written}", timeout=6)

    @on(DocPane.RemoveRequested)
    def _remove_requested(self, message: DocPane.RemoveRequested) -> None:
        from memkeeper.tui.modals.confirm import ConfirmModal

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
        from memkeeper.core.forget import forget_lines

        try:
            forget_lines(paths, name, start, end, text)
        except Exception as exc:
            self.call_from_thread(self.notify, f"Nothing removed: {exc}", severity="error")
            return
        self._refresh_search(paths)
        self.call_from_thread(self.notify, f"Moved {end - start + 1} line(s) of {name} to the trash (t).")
        self.reload_snapshot()

    def regenerate(self, archive: str) -> None:
        """Make the L3 summary of ``archive`` again with the configured backend (in a worker)."""
        self.notify(f"Regenerating the summary of {archive}…", timeout=3)
        self._regenerate_worker(self.paths, archive)

    @work(thread=True, exclusive=True, group="store-action", exit_on_error=False, description="regenerate")
    def _regenerate_worker(self, paths: StorePaths, archive: str) -> None:
        from memkeeper.core.summary import generate_summary

        try:
            summary = generate_summary(paths, archive)
        except Exception as exc:
            self.call_from_thread(self.notify, f"Regeneration failed: {exc}", severity="error")
        else:
            made_by = getattr(summary, "generator", None) or "the configured backend"
            self.call_from_thread(self.notify, f"Summary of {archive} made again ({made_by}).")
        self.reload_snapshot()

    @staticmethod
    def _refresh_search(paths: StorePaths) -> None:
        try:
            from memkeeper.core.search import refresh
        except ImportError:
            return
        try:
            refresh(paths)
        except Exception:
            pass


# -- acting on what was found (called by the viewer pane) -----------------------------------


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


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="memkeeper-tui", description="Browse a memkeeper store in the terminal."
    )
    parser.add_argument(
        "project", nargs="?", help="project directory (default: $CLAUDE_PROJECT_DIR or the current one)"
    )
    parser.add_argument(
        "--demo", action="store_true", help="open a generated demo store in a temporary folder"
    )
    parser.add_argument(
        "--keep-demo", action="store_true", help="with --demo: keep the demo folder when the TUI exits"
    )
    parser.add_argument("--no-watch", action="store_true", help="do not refresh live when files change")
    return parser.parse_args(argv)


def demo_paths() -> StorePaths:
    """A fresh demo store in a temporary folder."""
    from memkeeper.core.demo import create_demo_store

    folder = Path(tempfile.mkdtemp(prefix="memkeeper-demo-")) / "ledgerline"
    folder.mkdir()
    return create_demo_store(folder)


def main(argv: list[str] | None = None) -> int:
    """Console script ``memkeeper-tui``."""
    from memkeeper.core.store import paths_for

    args = parse_args(argv)
    if not args.demo:
        from memkeeper.core.boundary import StoreLinkError
        from memkeeper.core.store import StoreRefused

        try:
            paths = paths_for(args.project)
        except (StoreRefused, StoreLinkError) as exc:
            print(f"memkeeper-tui: {exc}", file=sys.stderr)
            return 2
        if not paths.exists():
            print(
                f"memkeeper-tui: no memory store in {paths.project} (no {paths.root});"
                " run `memkeeper-tui --demo` to browse a generated demo store",
                file=sys.stderr,
            )
            return 2
        MemkeeperApp(paths, watch=not args.no_watch).run()
        return 0
    paths = demo_paths()
    if not args.keep_demo:
        _remove_on_hangup(paths.project.parent)
    try:
        note = f"Demo store (generated) in {paths.project}" + (" (kept on exit)" if args.keep_demo else "")
        MemkeeperApp(paths, watch=not args.no_watch, note=note).run()
    finally:
        if not args.keep_demo:
            shutil.rmtree(paths.project.parent, ignore_errors=True)
    return 0


def _remove_on_hangup(folder: Path) -> None:
    """Closing the terminal (SIGHUP) removes the demo folder too, then ends the process as the
    signal would have (no ``finally`` runs for a signal's default action, and the terminal is gone)."""
    import os
    import signal

    def hang_up(signum: int, _frame: object) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGHUP, hang_up)


if __name__ == "__main__":
    raise SystemExit(main())
