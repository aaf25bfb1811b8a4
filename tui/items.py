"""The viewer's data: :class:`DocItem`, one displayable unit of a document, and its kinds.

Loaders (:mod:`memkeeper.tui.documents`) make them, the viewer widget
(:mod:`memkeeper.tui.widgets.docview`) draws them; neither owns the other's data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

ItemKind = Literal[
    "h1",
    "h2",
    "h3",
    "text",
    "bullet",
    "code",
    "muted",
    "title",
    "user",
    "assistant",
    "tool",
    "tool_result",
    "error",
    "day",
]
"""How an item is styled (each kind has a ``docview--<kind>`` component class)."""

KINDS: tuple[ItemKind, ...] = get_args(ItemKind)


@dataclass(frozen=True)
class DocItem:
    """One displayable unit: a header line, an optional folded body, its kind and source line."""

    text: str
    kind: ItemKind = "text"
    body: str = ""
    prefix: str = ""
    line: int | None = None  # 1-based line in the source file, for search hits
    anchor: bool = False  # a section start, for [ and ]
    sidechain: bool = False  # subagent work
    end_line: int | None = None  # last source line of a Markdown section or bullet (for removal)
    origin: str = ""  # "from NAME": a section a teammate committed (a shared store)
