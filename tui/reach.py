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
