"""How the viewer draws one item: its rows (Strips) at a width, with matches highlighted.

Items are literal text styled by kind (nothing in them is markup). An assistant answer is
Markdown when the viewer renders it (Rich's Markdown: headings, lists, emphasis, code
blocks), laid out beside its ``HH:MM claude ▸`` prefix with a hanging indent; the raw
toggle shows it as written. :class:`ItemPainter` holds the styles of one theme, taken
from :class:`~memkeeper.tui.widgets.docview.DocView`'s component classes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from ..items import DocItem
from ..text import fg_style, visible

#: Kinds whose text takes their kind's colour (the others keep the plain text colour).
STYLED_KINDS = frozenset({"h1", "h2", "h3", "title", "day", "code", "muted", "tool", "tool_result", "error"})
#: Kinds drawn as Markdown when rendering is on.
MARKDOWN_KINDS = frozenset({"assistant"})
SIDECHAIN_MARK = "┆ "


@dataclass(frozen=True)
class ItemPainter:
    """Turns items into rows with the styles of one theme (``styles`` by component class)."""

    console: Console
    styles: dict[str, Style]
    match: Style
    dark: bool = True

    def style(self, name: str) -> Style:
        return self.styles.get(name, Style())

    def head(self, item: DocItem) -> Text:
        """The sidechain mark and the prefix (``HH:MM claude ▸``)."""
        base = self.style(f"docview--{item.kind}")
        head = Text(no_wrap=False, end="")
        if item.sidechain:
            head.append(SIDECHAIN_MARK, self.style("docview--sidechain"))
        if item.prefix:
            head.append(visible(item.prefix), base + self.style("docview--prefix"))
        return head

    def text(self, item: DocItem, folded: bool, pattern: re.Pattern[str] | None) -> Text:
        """The whole item as one Text: prefix, text, fold mark and (unfolded) body."""
        text = self.head(item)
        base = self.style(f"docview--{item.kind}")
        text.append(visible(item.text).replace("\t", "    "), base if item.kind in STYLED_KINDS else Style())
        if item.origin:
            text.append("  " + visible(item.origin), self.style("docview--origin"))
        if item.body:
            text.append("  ▸ …" if folded else "  ▾", self.style("docview--muted"))
            if not folded:
                text.append("\n" + visible(item.body).replace("\t", "    "), self.style("docview--muted"))
        _mark(text, pattern, self.match)
        return text

    def strips(
        self, item: DocItem, width: int, folded: bool, pattern: re.Pattern[str] | None, markdown: bool
    ) -> list[Strip]:
        """The item's rows at ``width`` (Markdown for an assistant answer when ``markdown``)."""
        if markdown and item.kind in MARKDOWN_KINDS and item.text.strip():
            return self._markdown_strips(item, width, pattern)
        lines = self.text(item, folded, pattern).wrap(
            self.console, width, justify="left", overflow="fold", no_wrap=False
        )
        return [Strip(list(line.render(self.console)), line.cell_len) for line in lines] or [Strip.blank(0)]

    def _markdown_strips(self, item: DocItem, width: int, pattern: re.Pattern[str] | None) -> list[Strip]:
        from rich.markdown import Markdown

        head = self.head(item)
        indent = min(cell_len(head.plain), width // 2)
        body_width = max(10, width - indent)
        document = Markdown(
            visible(item.text),
            code_theme="ansi_dark" if self.dark else "ansi_light",
            inline_code_theme="ansi_dark" if self.dark else "ansi_light",
            hyperlinks=False,
        )
        options = self.console.options.update(width=body_width, max_width=body_width, height=None)
        rows = self.console.render_lines(document, options, pad=False, new_lines=False)
        while len(rows) > 1 and not "".join(s.text for s in rows[-1]).strip():
            rows.pop()
        strips: list[Strip] = []
        for number, row in enumerate(rows):
            line = Text(end="")
            line.append_text(head if number == 0 else Text(" " * indent))
            for segment in row:
                if not segment.control:
                    # Colours and emphasis from Markdown, the background the view's own (and the cursor's).
                    line.append(segment.text, fg_style(segment.style) if segment.style else None)
            _mark(line, pattern, self.match)
            strips.append(Strip(list(line.render(self.console)), line.cell_len))
        return strips or [Strip.blank(0)]


def _mark(text: Text, pattern: re.Pattern[str] | None, style: Style) -> None:
    """Highlight every match of ``pattern`` in ``text``."""
    if pattern is not None:
        for found in pattern.finditer(text.plain):
            text.stylize(style, found.start(), found.end())


def estimate_rows(item: DocItem, width: int, unfolded: bool) -> int:
    """An item's height before it is drawn: its lines' cell lengths over the width."""
    text = (
        (SIDECHAIN_MARK if item.sidechain else "")
        + item.prefix
        + item.text
        + (f"  {item.origin}" if item.origin else "")
        + ("  ▸ …" if item.body else "")
    )
    if item.body and unfolded:
        text += "\n" + item.body
    return sum(max(1, -(-cell_len(line) // width)) for line in text.split("\n"))


def plain_rows(strips: list[Strip]) -> list[str]:
    """The text of each row (what the view shows, without styles)."""
    return ["".join(segment.text for segment in strip) for strip in strips]


def with_cursor(segments: list[Segment], base: Style, cursor: Style) -> list[Segment]:
    """Segments on the cursor row: the cursor's background where the row has the view's own."""
    return [
        Segment(
            s.text, s.style + cursor if s.style and s.style.bgcolor == base.bgcolor else s.style, s.control
        )
        for s in segments
    ]
