"""The one way a screen or widget reaches the App that runs it (its store and its actions).

Only a type: nothing here imports the App, so the screens it runs do not import it back (a
screen asks the App to act by posting a message up, :mod:`memkeeper.tui.messages`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from textual.dom import DOMNode

    from .app import MemkeeperApp


def memkeeper_app(node: DOMNode) -> MemkeeperApp:
    """The :class:`MemkeeperApp` that ``node`` is mounted in (memkeeper's screens run in no other)."""
    return cast("MemkeeperApp", node.app)


class ReachesApp:
    """Mixed into a screen or widget: ``self.mk`` is the :class:`MemkeeperApp` it runs in."""

    @property
    def mk(self) -> MemkeeperApp:
        from textual.dom import DOMNode

        assert isinstance(self, DOMNode)
        return memkeeper_app(self)
