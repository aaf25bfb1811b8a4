"""Messages shared across screens (the ones owned by one widget live in that widget)."""

from __future__ import annotations

from pathlib import Path

from textual.message import Message

from memkeeper.tui.model import StoreSnapshot

#: Tiers a file change can touch.
TIERS = ("l2", "l3", "l1", "index", "named")


class StoreChanged(Message):
    """Files of the store changed on disk (one batch from the watcher, merged while queued)."""

    def __init__(self, tiers: frozenset[str], paths: frozenset[Path]) -> None:
        super().__init__()
        self.tiers = tiers
        self.paths = paths

    def can_replace(self, message: Message) -> bool:
        # A queued change is folded into this one, so a burst of hook writes costs one reload.
        if isinstance(message, StoreChanged):
            self.tiers = self.tiers | message.tiers
            self.paths = self.paths | message.paths
            return True
        return False


class SnapshotLoaded(Message):
    """A fresh :class:`StoreSnapshot` was read (startup, live refresh, after an action)."""

    def __init__(self, snapshot: StoreSnapshot, changed: frozenset[Path] = frozenset()) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.changed = changed


class WatchStateChanged(Message):
    """Live refresh turned on or off (or failed to start: ``error``)."""

    def __init__(self, active: bool, error: str | None = None) -> None:
        super().__init__()
        self.active = active
        self.error = error


class JobProgress(Message):
    """Progress of a long job run in a worker (regenerate, migrate)."""

    def __init__(self, done: int, total: int, label: str) -> None:
        super().__init__()
        self.done = done
        self.total = total
        self.label = label


class JobFinished(Message):
    """A long job ended; ``lines`` describe the result, ``error`` is set if it failed."""

    def __init__(self, lines: list[str], error: str | None = None, cancelled: bool = False) -> None:
        super().__init__()
        self.lines = lines
        self.error = error
        self.cancelled = cancelled
