"""The one way a screen or widget reaches the App that runs it (its store and its actions)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.dom import DOMNode

    from memkeeper.tui.app import MemkeeperApp


def memkeeper_app(node: DOMNode) -> MemkeeperApp:
    """The :class:`MemkeeperApp` that ``node`` is mounted in."""
    from memkeeper.tui.app import MemkeeperApp

    app = node.app
    assert isinstance(app, MemkeeperApp)
    return app


class ReachesApp:
    """Mixed into a screen or widget: ``self.mk`` is the :class:`MemkeeperApp` it runs in."""

    @property
    def mk(self) -> MemkeeperApp:
        from textual.dom import DOMNode

        assert isinstance(self, DOMNode)
        return memkeeper_app(self)
