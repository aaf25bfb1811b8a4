"""DocView: a fast, foldable, searchable document view built on the Line API.

A document is a list of :class:`DocItem` (a Markdown line, a summary paragraph, one
L1 conversation entry). Only the wrapped rows are kept, and only the visible rows are
drawn, so a 100 KB memory file or an L1 session with thousands of entries stays fast.
Items may carry a folded body (tool calls and their results); the cursor item folds and
unfolds with Enter. Text is always literal: items hold plain strings, styled here by
kind through component classes, so themes apply and nothing in the text is markup.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from memkeeper.tui.highlight import query_words, terms_pattern
from memkeeper.tui.items import KINDS, DocItem
from memkeeper.tui.text import fg_style
from memkeeper.tui.widgets.doc_render import ItemPainter, estimate_rows, plain_rows, with_cursor


class DocView(ScrollView, can_focus=True):
    """Scrollable document with a cursor item, folding, section jumps and hit highlighting."""

    COMPONENT_CLASSES = {f"docview--{kind}" for kind in KINDS} | {
        "docview--cursor",
        "docview--match",
        "docview--prefix",
        "docview--sidechain",
    }

    DEFAULT_CSS = """
    DocView { background: $surface; overflow-x: hidden; overflow-y: scroll; }
    DocView > .docview--h1 { color: $accent; text-style: bold underline; }
    DocView > .docview--h2 { color: $accent; text-style: bold; }
    DocView > .docview--h3 { color: $primary; text-style: bold; }
    DocView > .docview--text { }
    DocView > .docview--bullet { }
    DocView > .docview--code { color: $text-muted; }
    DocView > .docview--muted { color: $text-muted; }
    DocView > .docview--title { color: $accent; text-style: bold; }
    DocView > .docview--day { color: $secondary; text-style: bold; }
    DocView > .docview--user { color: $success; text-style: bold; }
    DocView > .docview--assistant { color: $primary; text-style: bold; }
    DocView > .docview--tool { color: $warning; }
    DocView > .docview--tool_result { color: $text-muted; }
    DocView > .docview--error { color: $error; text-style: bold; }
    DocView > .docview--prefix { text-style: bold; }
    DocView > .docview--sidechain { color: $secondary; text-style: italic; }
    DocView > .docview--cursor { background: $boost; }
    DocView:focus > .docview--cursor { background: $accent 25%; }
    DocView > .docview--match { background: $warning 60%; color: $text; text-style: bold; }
    """

    BINDINGS = [
        Binding("up,k", "line_up", "Line up", show=False, id="doc.up"),
        Binding("down,j", "line_down", "Line down", show=False, id="doc.down"),
        Binding("K,shift+up", "cursor_up", "Previous entry", show=False, id="doc.prev_entry"),
        Binding("J,shift+down", "cursor_down", "Next entry", show=False, id="doc.next_entry"),
        Binding("pageup", "page_up_items", "Page up", show=False, id="doc.pageup"),
        Binding("pagedown,space", "page_down_items", "Page down", show=False, id="doc.pagedown"),
        Binding("home", "first", "Top", show=False, id="doc.home"),
        Binding("end", "last", "Bottom", show=False, id="doc.end"),
        Binding("enter", "toggle_fold", "Fold/unfold", id="doc.fold"),
        Binding("z", "toggle_all", "Fold/unfold all", show=False, id="doc.fold_all"),
        Binding("left_square_bracket", "prev_section", "Previous section", show=False, id="doc.prev_section"),
        Binding("right_square_bracket", "next_section", "Next section", show=False, id="doc.next_section"),
        Binding("n", "next_hit", "Next hit", show=False, id="doc.next_hit"),
        Binding("N", "prev_hit", "Previous hit", show=False, id="doc.prev_hit"),
    ]
    """Keys of the document view (cursor, folding, sections, hits)."""

    cursor: reactive[int] = reactive(0, always_update=True, repaint=True)
    """Index of the cursor item."""

    class HitMoved(Message):
        """The cursor moved to a hit (or there is none): ``index`` of ``count``, 0-based."""

        def __init__(self, index: int, count: int) -> None:
            super().__init__()
            self.index = index
            self.count = count

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
            self.set_reactive(DocView.cursor, min(cursor, max(0, len(items) - 1)))
            self.scroll_to(y=scroll_y, animate=False, immediate=True)
        else:
            self.set_reactive(DocView.cursor, 0)
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

    # -- movement --------------------------------------------------------------------------

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

    def move_to(self, index: int, *, top: bool = False) -> None:
        """Put the cursor on item ``index``; with ``top`` scroll it to the top of the view."""
        self.cursor = index
        if top and self._items:
            self._pin_cursor_top()

    def _pin_cursor_top(self, whole: bool = False) -> None:
        """Scroll the cursor item to the top, its offset exact (the items above it wrapped).

        ``whole`` wraps every item, so the height is exact too (a short document whose
        last section cannot reach the top scrolls to the same place every time).
        """
        for index in range(len(self._items) if whole else self.cursor + 1):
            self._strips(index)
        self._update_offsets()
        self.scroll_to(y=self._offsets[self.cursor], animate=False, immediate=True)

    def goto_line(self, line: int) -> None:
        """Move to the item that holds source line ``line`` (or the nearest one before it).

        Items need not be in source order (a subagent's entries sit under its Task call,
        inside the span of that call and its result), so the item that starts on the line
        wins, then the narrowest one that spans it, then the nearest one before it.
        """
        self.move_to(_item_of_line(self._items, line), top=True)

    def goto_first_hit(self, near_line: int | None = None) -> None:
        """Move to the hit at or after ``near_line`` (or the first one)."""
        if not self._hits:
            if near_line is not None:
                self.goto_line(near_line)
            return
        target = self._hits[0]
        if near_line is not None:
            for index in self._hits:
                line = self._items[index].line
                if line is not None and line >= near_line:
                    target = index
                    break
        self.move_to(target, top=True)
        self.post_message(self.HitMoved(self._hits.index(target), len(self._hits)))

    def open_at_line(self, line: int | None) -> None:
        """Open on the item of source ``line``, unfolded (a search hit's own entry); else the first match."""
        if line is None:
            self.goto_first_hit(None)
            return
        self.goto_line(line)
        item = self._items[self.cursor] if self._items else None
        if item is not None and item.body and self.cursor not in self._unfolded:
            self._unfolded.add(self.cursor)
            self._relayout(self.cursor)
            self.refresh()
        if self.cursor in self._hits:
            self.post_message(self.HitMoved(self._hits.index(self.cursor), len(self._hits)))

    def goto_last_section(self) -> None:
        """Put the newest (last) section at the top of the view."""
        sections = self.sections()
        if sections:
            self.cursor = sections[-1][0]
            self._pin_cursor_top(whole=True)
            self._pin_whole = True

    def action_line_up(self) -> None:
        """One row up: within a tall entry first, then onto the previous entry."""
        if self._items and self._offsets[self.cursor] < self.scroll_y:
            self.scroll_to(y=self.scroll_y - 1, animate=False, immediate=True)
        else:
            self.cursor -= 1

    def action_line_down(self) -> None:
        """One row down: within a tall entry first, then onto the next entry."""
        height = self.scrollable_content_region.height or 1
        if self._items and self._offsets[self.cursor + 1] > self.scroll_y + height:
            self.scroll_to(y=self.scroll_y + 1, animate=False, immediate=True)
        else:
            self.cursor += 1

    def action_cursor_up(self) -> None:
        self.cursor -= 1

    def action_cursor_down(self) -> None:
        self.cursor += 1

    def action_page_up_items(self) -> None:
        height = self.scrollable_content_region.height or 1
        self.scroll_to(y=max(0, self.scroll_y - height), animate=False, immediate=True)
        self._cursor_to_view_top()

    def action_page_down_items(self) -> None:
        height = self.scrollable_content_region.height or 1
        self.scroll_to(y=self.scroll_y + height, animate=False, immediate=True)
        self._cursor_to_view_top()

    def _cursor_to_view_top(self) -> None:
        row = int(self.scroll_y)
        if self._items:
            index = self._item_at_row(min(row, self._offsets[-1] - 1))
            self.set_reactive(DocView.cursor, index)
            self.refresh()

    def action_first(self) -> None:
        self.move_to(0, top=True)

    def action_last(self) -> None:
        self.cursor = len(self._items) - 1

    def action_toggle_fold(self) -> None:
        if not self._items or not self._items[self.cursor].body:
            return
        self._unfolded ^= {self.cursor}
        self._relayout(self.cursor)
        self._scroll_cursor_visible()
        self.refresh()

    def action_toggle_all(self) -> None:
        foldable = {i for i, item in enumerate(self._items) if item.body}
        self._unfolded = set() if self._unfolded >= foldable and foldable else foldable
        self._layout()
        self._scroll_cursor_visible()
        self.refresh()

    def sections(self) -> list[tuple[int, str]]:
        """(item index, heading) of every section start."""
        return [(i, item.text) for i, item in enumerate(self._items) if item.anchor]

    def action_next_section(self) -> None:
        for index, _ in self.sections():
            if index > self.cursor:
                self.move_to(index, top=True)
                return

    def action_prev_section(self) -> None:
        before = [index for index, _ in self.sections() if index < self.cursor]
        if before:
            self.move_to(before[-1], top=True)

    def action_next_hit(self) -> None:
        self._step_hit(+1)

    def action_prev_hit(self) -> None:
        self._step_hit(-1)

    def _step_hit(self, step: int) -> None:
        if not self._hits:
            self.notify("No highlighted matches here: search with /", severity="warning", timeout=2)
            return
        if step > 0:
            after = [i for i in self._hits if i > self.cursor]
            target = after[0] if after else self._hits[0]
        else:
            before = [i for i in self._hits if i < self.cursor]
            target = before[-1] if before else self._hits[-1]
        self.move_to(target, top=True)
        self.post_message(self.HitMoved(self._hits.index(target), len(self._hits)))

    def on_click(self, event: Click) -> None:
        """A click moves the cursor; a click on an entry's fold mark (▸ / its row) folds or unfolds it."""
        row = int(self.scroll_y) + event.y
        if not self._items or not 0 <= row < self._offsets[-1]:
            return
        index = self._item_at_row(row)
        strips = self._strips(index)
        line = row - self._offsets[index]
        text = plain_rows(strips)[line] if line < len(strips) else ""
        marks = [found for found in (text.find("▸ …"), text.rfind("▾")) if found >= 0]
        self.cursor = index
        if self._items[index].body and marks and event.x >= min(marks) - 1:
            self.action_toggle_fold()


def _item_of_line(items: list[DocItem], line: int) -> int:
    spans = [
        (item.line, (item.end_line or item.line) - item.line, index)
        for index, item in enumerate(items)
        if item.line is not None and item.line <= line
    ]
    exact = [index for start, _, index in spans if start == line]
    if exact:
        return exact[0]
    covering = [(width, index) for start, width, index in spans if line <= start + width]
    if covering:
        return min(covering)[1]
    return max(spans)[2] if spans else 0
