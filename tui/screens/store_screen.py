"""StoreScreen and ListScreen: the bases of the screens opened on one store from the browser.

A :class:`StoreScreen` holds the store's paths and goes back on ``close``. A :class:`ListScreen`
also reads a list in a thread worker (:meth:`ListScreen.read_list`), shows it on the event loop
(:meth:`ListScreen.show_list`) and reads it again after every store change the app reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from textual.screen import Screen

from ...core.store.paths import StorePaths

if TYPE_CHECKING:
    from ..model import StoreSnapshot

ItemT = TypeVar("ItemT")


class StoreScreen(Screen[None]):
    """A screen over one store; ``close`` dismisses it."""

    def __init__(self, paths: StorePaths) -> None:
        super().__init__()
        self._paths = paths

    def action_close(self) -> None:
        self.dismiss(None)


class ListScreen(StoreScreen, Generic[ItemT]):
    """A store screen listing items read off the event loop, again after each store change."""

    def __init__(self, paths: StorePaths) -> None:
        super().__init__(paths)
        self._items: list[ItemT] = []

    def read_list(self) -> list[ItemT]:
        """The items, read from the store (runs in a thread worker)."""
        raise NotImplementedError

    def show_list(self) -> None:
        """Show ``self._items`` (on the event loop, the screen attached)."""
        raise NotImplementedError

    def show_snapshot(self, snapshot: StoreSnapshot, changed: frozenset[Any]) -> None:
        """Called by the app after a store change: read the list again."""
        self.refresh_list()

    def refresh_list(self) -> None:
        """Read the list in a thread worker; a newer read cancels the one under way."""
        self.run_worker(
            self._read_and_show,
            thread=True,
            exclusive=True,
            group="list",
            exit_on_error=False,
            description=f"list of {type(self).__name__}",
        )

    def _read_and_show(self) -> None:
        items = self.read_list()
        self.app.call_from_thread(self._listed, items)

    def _listed(self, items: list[ItemT]) -> None:
        if self.is_attached:
            self._items = items
            self.show_list()
