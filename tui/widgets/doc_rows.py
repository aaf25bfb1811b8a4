"""DocRows: the drawing half of the viewer — items laid out in rows at the width, drawn a
screenful at a time, a cursor item, folds, Markdown or raw answers and highlighted matches.

:class:`~memkeeper.tui.widgets.docview.DocView` adds the keys, the movement and the hits.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..highlight import query_words, terms_pattern
from ..items import KINDS, DocItem
from ..text import fg_style
from .doc_render import ItemPainter, estimate_rows, plain_rows, with_cursor


class DocRows(ScrollView):
    """Items in rows: laid out lazily at the width, a cursor item, folds, highlighted matches."""

    COMPONENT_CLASSES = {f"docview--{kind}" for kind in KINDS} | {
        "docview--cursor",
        "docview--match",
        "docview--origin",
        "docview--prefix",
        "docview--sidechain",
    }
    """Styled by :class:`~memkeeper.tui.widgets.docview.DocView`'s default CSS."""

    cursor: reactive[int] = reactive(0, always_update=True, repaint=True)
    """Index of the cursor item."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._items: list[DocItem] = []
        self._unfolded: set[int] = set()
        self._cache: dict[int, list[Strip]] = {}
        self._heights: list[int] = []
        self._offsets: list[int] = [0]
        self._offsets_dirty = False
        self._query = ""
        self._terms: tuple[str, ...] = ()
        self._pin_whole = False
        self._pattern: re.Pattern[str] | None = None
        self._hits: list[int] = []
        self._width = 80
        self._markdown = True
        self._painter_cache: ItemPainter | None = None

    # -- data ------------------------------------------------------------------------------

    @property
    def items(self) -> list[DocItem]:
        return self._items

    @property
    def hits(self) -> list[int]:
        """Indices of the items that contain the highlighted query."""
        return self._hits

    def rendered_text(self) -> str:
        """Every item exactly as the view draws it (its segments' text), one row per line."""
        return "\n".join(row for i in range(len(self._items)) for row in plain_rows(self._strips(i)))

    @property
    def highlight_query(self) -> str:
        """The search query whose matches are highlighted ("" for none)."""
        return self._query

    def set_items(self, items: list[DocItem], *, keep_position: bool = False) -> None:
        """Show ``items``; with ``keep_position`` the cursor, folds and scroll survive (live refresh)."""
        scroll_y = self.scroll_y
        cursor = self.cursor
        self._pin_whole = self._pin_whole and keep_position
        self._items = items
        if keep_position:
            self._unfolded = {i for i in self._unfolded if i < len(items)}
        else:
            self._unfolded = set()
        self._find_hits()
        self._layout()
        if keep_position:
            self.set_reactive(DocRows.cursor, min(cursor, max(0, len(items) - 1)))
            self.scroll_to(y=scroll_y, animate=False, immediate=True)
        else:
            self.set_reactive(DocRows.cursor, 0)
            self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    @property
    def markdown(self) -> bool:
        """Whether assistant answers are drawn as Markdown (else raw, as written)."""
        return self._markdown

    def set_markdown(self, markdown: bool) -> None:
        """Draw assistant answers as Markdown, or raw; the cursor stays on its item."""
        if markdown != self._markdown:
            self._markdown = markdown
            self._layout()
            self._scroll_cursor_visible()
            self.refresh()

    def set_query(self, query: str) -> None:
        """Highlight every word of ``query`` (case-insensitive); empty clears it."""
        self.set_terms(query_words(query))

    @property
    def terms(self) -> tuple[str, ...]:
        """The highlighted terms (none: nothing highlighted)."""
        return self._terms

    def set_terms(self, terms: tuple[str, ...]) -> None:
        """Highlight exactly ``terms`` (the ones the search matched), unfolding bodies that hold one."""
        self._terms = tuple(terms)
        self._query = " ".join(terms)
        self._pattern = terms_pattern(self._terms)
        self._find_hits()
        for index in self._hits:
            if self._items[index].body and self._pattern and self._pattern.search(self._items[index].body):
                self._unfolded.add(index)
        self._layout()
        self.refresh()

    def _find_hits(self) -> None:
        pattern = self._pattern
        if pattern is None:
            self._hits = []
            return
        self._hits = [
            i for i, item in enumerate(self._items) if pattern.search(item.text) or pattern.search(item.body)
        ]

    # -- layout ----------------------------------------------------------------------------
    #
    # Items are wrapped only when they come into view. Every other item counts with an
    # estimate of its height (its lines' cell lengths over the width), corrected when it is
    # wrapped, so opening an L1 session with thousands of entries costs one screenful.

    def _painter(self) -> ItemPainter:
        """The item painter of the current theme (made again when the styles change)."""
        if self._painter_cache is None:
            styles = {name: fg_style(self.get_component_rich_style(name)) for name in self.COMPONENT_CLASSES}
            self._painter_cache = ItemPainter(
                self.app.console,
                styles,
                self.get_component_rich_style("docview--match"),
                dark=self.app.current_theme.dark,
            )
        return self._painter_cache

    def _strips(self, index: int) -> list[Strip]:
        """The wrapped rows of item ``index`` (cached until width, folds or highlight change)."""
        strips = self._cache.get(index)
        if strips is None:
            strips = self._painter().strips(
                self._items[index], self._width, index not in self._unfolded, self._pattern, self._markdown
            )
            self._cache[index] = strips
            if len(strips) != self._heights[index]:
                self._heights[index] = len(strips)
                self._offsets_dirty = True
        return strips

    def _layout(self) -> None:
        """Start over at the current width: estimates for all, rows for none."""
        self._width = max(10, self.scrollable_content_region.width or self.size.width or 80)
        self._cache = {}
        self._heights = [
            estimate_rows(item, self._width, i in self._unfolded) for i, item in enumerate(self._items)
        ]
        self._offsets_dirty = True
        self._update_offsets()

    def _relayout(self, index: int) -> None:
        """Item ``index`` changed (fold, highlight): forget its rows, estimate it again."""
        self._cache.pop(index, None)
        if 0 <= index < len(self._heights):
            self._heights[index] = estimate_rows(self._items[index], self._width, index in self._unfolded)
            self._offsets_dirty = True
        self._update_offsets()

    def _update_offsets(self) -> None:
        if self._offsets_dirty:
            self._offsets = [0, *accumulate(self._heights)]
            self._offsets_dirty = False
            self.virtual_size = Size(self._width, self._offsets[-1])

    def _item_at_row(self, row: int) -> int:
        return max(0, bisect_right(self._offsets, row) - 1)

    def _ensure_rows(self, top: int, height: int) -> None:
        """Wrap the items shown in rows ``top`` … ``top + height`` (estimates settle in a few rounds)."""
        for _ in range(4):
            if not self._items:
                return
            first = self._item_at_row(top)
            index = first
            while index < len(self._items) and self._offsets[index] <= top + height:
                self._strips(index)
                index += 1
            if not self._offsets_dirty:
                return
            self._update_offsets()

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._items:
            self._ensure_rows(int(self.scroll_y), self.scrollable_content_region.height + 1)
        return super().render_lines(crop)

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        if width and width != self._width and self._items:
            pinned = self._offsets[self.cursor] == int(self.scroll_y) or self._pin_whole
            self._layout()
            if pinned:
                self._pin_cursor_top(self._pin_whole)  # a section or hit opened at the top stays there
            else:
                self._scroll_cursor_visible()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._painter_cache = None
        if self._items:
            self._layout()

    # -- drawing ---------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        row = scroll_y + y
        if not self._items or row >= self._offsets[-1]:
            return Strip.blank(width, base)
        index = self._item_at_row(row)
        strips = self._strips(index)
        line = row - self._offsets[index]
        if line >= len(strips):
            return Strip.blank(width, base)
        strip = strips[line].crop_extend(scroll_x, scroll_x + width, None)
        segments = [Segment(s.text, base + s.style if s.style else base, s.control) for s in strip]
        if index == self.cursor:
            cursor = Style(bgcolor=self.get_component_rich_style("docview--cursor").bgcolor)
            segments = with_cursor(segments, base, cursor)
        return Strip(segments, width)

    # -- cursor ----------------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        self._pin_whole = False
        self._scroll_cursor_visible()

    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self._items) - 1)) if self._items else 0

    def _scroll_cursor_visible(self) -> None:
        if not self._items:
            return
        self._strips(self.cursor)
        self._update_offsets()
        top = self._offsets[self.cursor]
        bottom = self._offsets[self.cursor + 1]
        height = self.scrollable_content_region.height or 1
        if top < self.scroll_y:
            self.scroll_to(y=top, animate=False)
        elif bottom > self.scroll_y + height:
            self.scroll_to(y=min(top, bottom - height), animate=False)

    def _pin_cursor_top(self, whole: bool = False) -> None:
        """Scroll the cursor item to the top, its offset exact (the items above it wrapped).

        ``whole`` wraps every item, so the height is exact too (a short document whose
        last section cannot reach the top scrolls to the same place every time).
        """
        for index in range(len(self._items) if whole else self.cursor + 1):
            self._strips(index)
        self._update_offsets()
        self.scroll_to(y=self._offsets[self.cursor], animate=False, immediate=True)
