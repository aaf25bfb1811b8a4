"""memkeeper-tui's App: the store, its snapshot, live refresh, the screens.

The App owns the store paths, the latest :class:`StoreSnapshot` (read in a thread worker),
the summarizer's health, the one file watcher and the screens. The actions that change the
store (rotate, forget, restore, remove, regenerate) and act on a find (copy, editor, export)
are in its base class :class:`~memkeeper.tui.store_actions.StoreActions`; the console script
is :mod:`memkeeper.tui.launch`. Screens get the snapshot through calls down
(``screen.show_snapshot``) and ask for actions by posting messages up or through the methods
:class:`~memkeeper.tui.reach.MemkeeperHost` lists (no screen imports this module).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import App
from textual.reactive import reactive
from textual.screen import Screen

from ..core.store.paths import StorePaths
from . import keymap
from .commands import MemoryCommands
from .messages import (
    PrefChosen,
    ReloadWanted,
    RestoreWanted,
    SearchLeft,
    SettingsChanged,
    ShowInBrowser,
    SnapshotLoaded,
    StoreChanged,
    WatchStateChanged,
)
from .model import BackendHealth, SearchState, StoreSnapshot
from .prefs import Prefs
from .screens.browse import BrowseScreen, target_for_file
from .snapshot import load_snapshot
from .startup import release_gc, settle_gc
from .store_actions import StoreActions
from .widgets.doc_pane import OpenRequest

if TYPE_CHECKING:
    from .reach import MemkeeperHost

STYLES = Path(__file__).parent / "styles"


class MemkeeperApp(StoreActions):
    """Browse a memkeeper store's tiers, act on pending work, search, refresh live."""

    TITLE = "memkeeper"
    CSS_PATH: ClassVar[list[str | PurePath]] = [
        STYLES / "widgets.tcss",
        STYLES / "base.tcss",
        STYLES / "app.tcss",
    ]
    COMMANDS = App.COMMANDS | {MemoryCommands}
    BINDINGS = keymap.bindings("app")
    """Keys that work on every screen."""

    live: reactive[bool] = reactive(False)
    """Whether live refresh is running (screens bind their status line to it)."""

    backend: reactive[BackendHealth | None] = reactive(None)
    """The summarizer backend and whether it rests (read after each snapshot, in a thread)."""

    def __init__(
        self, paths: StorePaths, *, watch: bool = True, note: str | None = None, prefs: bool = True
    ) -> None:
        super().__init__()
        from .prefs import Prefs, load_prefs

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
        self.set_timer(5, self._start_once)  # should the first snapshot never come
        self.watch(self, "theme", self._theme_changed, init=False)
        self.reload_snapshot()
        if self._note:
            self.notify(self._note, title="memkeeper-tui", timeout=6)

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
            self.call_after_refresh(self._first_frame_drawn)
        elif message.snapshot.exists:
            self._backend_worker(self.paths)
        self.snapshot = message.snapshot
        for screen in self.screen_stack:
            show = getattr(screen, "show_snapshot", None)
            if callable(show):
                show(message.snapshot, message.changed)

    def _first_frame_drawn(self) -> None:
        """A store is on screen: start what waited for it, and warm up what comes next."""
        self._start_once()
        self._warm_up()

    def _start_once(self) -> None:
        """After the first frame: collect garbage again and start live refresh (importing the
        watcher is not on the way to the first frame). Later calls do nothing: the hold is
        released once, and live refresh starts only if it never started."""
        release_gc()
        if self._watch_wanted and self._watch_stop is None:
            self.start_watching()

    @work(thread=True, group="warm-up", exit_on_error=False, description="warm up search")
    def _warm_up(self) -> None:
        """After the first paint, read the summarizer's health and import what the first search
        needs, so its keystroke is fast; then settle the garbage collector (:func:`settle_gc`)."""
        try:
            self._warm_up_search()
            self._warm_up_activity()
        finally:
            try:
                self.call_from_thread(settle_gc)
            except RuntimeError:
                pass  # the app is closing

    def _warm_up_search(self) -> None:
        if self.snapshot is None or not self.snapshot.exists:
            return
        self._read_backend(self.paths)
        try:
            from ..core.search.engine import warm_up
        except ImportError:
            return
        if not self.paths.search_db.exists():
            return  # no index yet: the first search builds it, with its progress shown
        try:
            # A throwaway search and what the first keystrokes read once (nothing is written),
            # so the first real keystroke pays none of that.
            warm_up(self.paths, self.prefs.deep)
        except Exception:
            pass

    def _warm_up_activity(self) -> None:
        """The activity screen's modules (Plotext: about twenty, ~25 ms, more from a cold disk)
        imported, and the index's lists it reads asked of the OS, while the app is idle: its
        first open pays for neither."""
        import rich.ansi  # noqa: F401  (a plot is drawn as ANSI text, read back by Rich)

        from ..core.search import l1days, l3findings  # noqa: F401  (the lists' readers)
        from ..core.search.history import read_ahead
        from .screens import activity  # noqa: F401

        if self.snapshot is not None and self.snapshot.exists:
            read_ahead(self.paths)

    @work(thread=True, exclusive=True, group="backend", exit_on_error=False, description="backend health")
    def _backend_worker(self, paths: StorePaths) -> None:
        self._read_backend(paths)

    def _read_backend(self, paths: StorePaths) -> None:
        from .snapshot import backend_health

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
        from .watch import watch_store, watched_folders

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
        from .modals.help import HelpModal

        if not isinstance(self.screen, HelpModal):
            self.push_screen(HelpModal(type(self.screen)))

    def browse(self) -> BrowseScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, BrowseScreen):
                return screen
        return None

    def open_search(self, query: str = "") -> None:
        """Open search where it was left (query, filters, results), or with ``query``."""
        from .screens.search import SearchScreen

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

        from .prefs import save_prefs

        save_prefs(**asdict(prefs))

    def _push_once(self, screen: Callable[[StorePaths], Screen[None]]) -> None:
        """Open ``screen`` (a screen class) on this store, unless it is the one on top already."""
        if type(self.screen) is not screen:
            self.push_screen(screen(self.paths))

    def open_pending(self) -> None:
        from .screens.pending import PendingScreen

        self._push_once(PendingScreen)

    def open_sessions(self) -> None:
        from .screens.sessions import SessionsScreen

        self._push_once(SessionsScreen)

    def open_activity(self) -> None:
        from .screens.activity import ActivityScreen

        self._push_once(ActivityScreen)

    def open_trash(self) -> None:
        from .screens.trash import TrashScreen

        self._push_once(TrashScreen)

    def open_settings(self) -> None:
        from .screens.settings import SettingsScreen

        self._push_once(SettingsScreen)

    @on(SettingsChanged)
    def _settings_changed(self, _message: SettingsChanged) -> None:
        """A setting was saved: the store's state (memory and recall on/off) and the backend again."""
        self.reload_snapshot()
        self._backend_worker(self.paths)

    # -- requests posted up by the screens ---------------------------------------------------

    @on(ShowInBrowser)
    def _show_in_browser(self, message: ShowInBrowser) -> None:
        self.show_in_browser(message.file, message.line, message.terms)

    @on(SearchLeft)
    def _search_left(self, message: SearchLeft) -> None:
        self.remember_search(message.state)

    @on(RestoreWanted)
    def _restore_wanted(self, message: RestoreWanted) -> None:
        self.restore(message.trash_id)  # the snapshot it reloads refreshes the trash list

    @on(ReloadWanted)
    def _reload_wanted(self, _message: ReloadWanted) -> None:
        self.reload_snapshot()

    @on(PrefChosen)
    def _pref_chosen(self, message: PrefChosen) -> None:
        if message.name == "theme" and isinstance(message.value, str):
            self.theme = message.value  # saved by _theme_changed
        elif message.name == "deep" and isinstance(message.value, bool):
            self.set_deep_default(message.value)

    def open_projects(self) -> None:
        from .modals.projects import ProjectsModal

        def chosen(project: Path | None) -> None:
            if project is not None and project != self.paths.project:
                self.switch_project(project)

        self.push_screen(ProjectsModal(self.paths.project), chosen)

    def open_migrate(self) -> None:
        from .modals.migrate import MigrateModal

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


if TYPE_CHECKING:

    def _host(app: MemkeeperApp) -> MemkeeperHost:
        return app  # mypy checks here that the App offers what its screens use of it
