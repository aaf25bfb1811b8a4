"""Messages shared across screens (the ones owned by one widget live in that widget)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.message import Message

from .model import SearchState, StoreSnapshot

#: Tiers a file change can touch.
TIERS = ("l2", "l3", "l1", "index", "named")


@dataclass
class StoreChanged(Message):
    """Files of the store changed on disk (one batch from the watcher, merged while queued)."""

    tiers: frozenset[str]
    paths: frozenset[Path]

    def can_replace(self, message: Message) -> bool:
        # A queued change is folded into this one, so a burst of hook writes costs one reload.
        if isinstance(message, StoreChanged):
            self.tiers = self.tiers | message.tiers
            self.paths = self.paths | message.paths
            return True
        return False


@dataclass
class SnapshotLoaded(Message):
    """A fresh :class:`StoreSnapshot` was read (startup, live refresh, after an action)."""

    snapshot: StoreSnapshot
    changed: frozenset[Path] = frozenset()


@dataclass
class WatchStateChanged(Message):
    """Live refresh turned on or off (or failed to start: ``error``)."""

    active: bool
    error: str | None = None


@dataclass
class JobProgress(Message):
    """Progress of a long job run in a worker (regenerate, migrate)."""

    done: int
    total: int
    label: str


@dataclass
class JobFinished(Message):
    """A long job ended; ``lines`` describe the result, ``error`` is set if it failed."""

    lines: list[str]
    error: str | None = None
    cancelled: bool = False


@dataclass
class SettingsChanged(Message):
    """A setting was saved to a config file (the app re-reads the store's state and the backend)."""

    key: str


@dataclass
class PrefChosen(Message):
    """A TUI preference was chosen on the settings screen (``theme`` or ``deep``)."""

    name: str
    value: str | bool


# -- requests a screen posts up to the app (which acts on them; a screen never calls it by name) --


@dataclass
class ShowInBrowser(Message):
    """Close the screens over the browser and open ``file`` there, at ``line``, ``terms`` marked."""

    file: str
    line: int | None = None
    terms: tuple[str, ...] = ()


@dataclass
class SearchLeft(Message):
    """The search screen was left (or a hit opened): ``/`` reopens it in this state."""

    state: SearchState


@dataclass
class RestoreWanted(Message):
    """Restore the trashed item ``trash_id``."""

    trash_id: str


@dataclass
class ReloadWanted(Message):
    """Read the store again (every screen gets the new snapshot)."""

    detail: Any = None
