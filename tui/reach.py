"""The one way a screen or widget reaches the App that runs it (its store and its actions).

:class:`MemkeeperHost` says what the screens and widgets use of the App, as a Protocol: nothing here
imports the App, not even for its type, so the screens it runs do not import it back. mypy checks
that :class:`~memkeeper.tui.app.MemkeeperApp` is a host (``app.py``'s ``_host``) and every use
against this list. A screen asks the App to act through these methods or by posting a message up
(:mod:`memkeeper.tui.messages`); what any Textual App offers (``notify``, ``theme`` …) it reaches
through ``self.app``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from pathlib import Path

    from textual.dom import DOMNode
    from textual.screen import Screen

    from ..core.store.paths import StorePaths
    from .model import StoreSnapshot, Target
    from .prefs import Prefs


class MemkeeperHost(Protocol):
    """What memkeeper's screens, widgets and palette use of the App that runs them."""

    @property
    def paths(self) -> StorePaths: ...
    @property
    def snapshot(self) -> StoreSnapshot | None: ...
    @property
    def prefs(self) -> Prefs: ...

    def browse(self) -> Screen[None] | None: ...
    def reload_snapshot(self, changed: frozenset[Path] = ...) -> None: ...
    def toggle_live(self) -> None: ...
    def action_help(self) -> None: ...
    def open_search(self, query: str = "") -> None: ...
    def open_pending(self) -> None: ...
    def open_sessions(self) -> None: ...
    def open_activity(self) -> None: ...
    def open_trash(self) -> None: ...
    def open_settings(self) -> None: ...
    def open_projects(self) -> None: ...
    def open_migrate(self) -> None: ...
    def rotate_now(self) -> None: ...
    def regenerate(self, archive: str) -> None: ...
    def forget(self, target: Target) -> None: ...
    def copy_text(self, text: str, what: str) -> None: ...
    def open_external(self, path: Path, line: int | None, *, pager: bool) -> None: ...
    def export_session(self, path: Path) -> None: ...


def memkeeper_app(node: DOMNode) -> MemkeeperHost:
    """The App that ``node`` is mounted in (or ``node`` itself, an App): memkeeper's screens run in
    no other."""
    from textual.app import App

    return cast("MemkeeperHost", node if isinstance(node, App) else node.app)


class ReachesApp:
    """Mixed into a screen or widget: ``self.mk`` is the App it runs in, as a :class:`MemkeeperHost`."""

    @property
    def mk(self) -> MemkeeperHost:
        from textual.dom import DOMNode

        assert isinstance(self, DOMNode)
        return memkeeper_app(self)
