"""User text made safe to display: never markup, never terminal escape codes.

Everything that comes from the store (memory, summaries, transcripts, file names) is
wrapped by :func:`literal` into a Rich ``Text`` (which does not parse markup) with
control characters shown in caret notation, as ``cat -v`` does (ESC shows as ``^[``).
"""

from __future__ import annotations

import re

from rich.style import Style
from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def visible(text: str) -> str:
    """``text`` with control characters (except newline and tab) in caret notation: ESC shows as ``^[``."""
    return _CONTROL.sub(lambda m: "^?" if m.group() == "\x7f" else "^" + chr(0x40 + ord(m.group())), text)


def literal(text: str, style: str = "") -> Text:
    """A Rich Text that shows ``text`` exactly as written."""
    return Text(visible(text).replace("\t", "    "), style=style, no_wrap=False)


def human_bytes(size: int) -> str:
    """1,234,567 → ``1.2M``; short enough for a tree label."""
    value = float(size)
    for unit in ("B", "K", "M", "G"):
        if value < 1024 or unit == "G":
            return f"{value:.0f}{unit}" if unit == "B" or value >= 10 else f"{value:.1f}{unit}"
        value /= 1024
    return f"{size}B"


def human_tokens(tokens: int) -> str:
    """12345 → ``12.3k``."""
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def human_minutes(minutes: int) -> str:
    """``95`` → ``1h35``; ``7`` → ``7m``."""
    return f"{minutes // 60}h{minutes % 60:02d}" if minutes >= 60 else f"{minutes}m"


def gauge(fraction: float, width: int = 10) -> str:
    """A text bar ``▰▰▰▱▱`` for a fraction (clamped to 0..1)."""
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "▰" * filled + "▱" * (width - filled)


def fg_style(style: Style) -> Style:
    """Only the foreground and attributes of a (component) style: keeps the widget's background."""
    return Style(
        color=style.color,
        bold=style.bold,
        italic=style.italic,
        underline=style.underline,
        dim=style.dim,
        strike=style.strike,
        reverse=style.reverse,
    )
