"""The TUI's own preferences (theme, deep search by default), kept between runs.

A small JSON file in the user's config folder (``$XDG_CONFIG_HOME/memkeeper/tui.json``,
else ``~/.config/memkeeper/tui.json``), never in a store: it is about the person, not
the project. Written atomically; an unreadable file gives the defaults (and is rewritten
on the next change).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Prefs:
    """What the TUI remembers."""

    theme: str = "textual-dark"
    deep: bool = True


def prefs_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "memkeeper" / "tui.json"


def load_prefs() -> Prefs:
    """The saved preferences, or the defaults."""
    try:
        data: Any = json.loads(prefs_path().read_text("utf-8"))
    except (OSError, ValueError):
        return Prefs()
    if not isinstance(data, dict):
        return Prefs()
    defaults = Prefs()
    theme = data.get("theme")
    deep = data.get("deep")
    return Prefs(
        theme=theme if isinstance(theme, str) and theme else defaults.theme,
        deep=deep if isinstance(deep, bool) else defaults.deep,
    )


def save_prefs(**changes: Any) -> Prefs:
    """Save ``changes`` over the current preferences (best effort: a read-only home keeps defaults)."""
    from ..core.store.atomic import atomic_write_text

    prefs = replace(load_prefs(), **changes)
    path = prefs_path()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(asdict(prefs), indent=2) + "\n")
    except OSError:
        pass
    return prefs


def saved_names() -> frozenset[str]:
    """The preferences the file sets (the others are the defaults)."""
    try:
        data: Any = json.loads(prefs_path().read_text("utf-8"))
    except (OSError, ValueError):
        return frozenset()
    return frozenset(data) if isinstance(data, dict) else frozenset()
