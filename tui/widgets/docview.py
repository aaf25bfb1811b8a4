"""DocView: a fast, foldable, searchable document view built on the Line API.

A document is a list of :class:`DocItem` (a Markdown line, a summary paragraph, one
L1 conversation entry). Only the wrapped rows are kept, and only the visible rows are
drawn, so a 100 KB memory file or an L1 session with thousands of entries stays fast.
Items may carry a folded body (tool calls and their results); the cursor item folds and
unfolds with Enter. Text is always literal: items hold plain strings, styled here by
kind through component classes, so themes apply and nothing in the text is markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.events import Click
from textual.message import Message

from .. import keymap
from ..items import DocItem
from .doc_render import plain_rows
from .doc_rows import DocRows


class DocView(DocRows, can_focus=True):
    """Scrollable document with a cursor item, folding, section jumps and hit highlighting (styled in
    ``styles/widgets.tcss``)."""

    BINDINGS = keymap.bindings("doc")
    """Keys of the document view (cursor, folding, sections, hits)."""

    @dataclass
    class HitMoved(Message):
        """The cursor moved to a hit (or there is none): ``index`` of ``count``, 0-based."""

        index: int
        count: int

    # -- movement --------------------------------------------------------------------------

    def move_to(self, index: int, *, top: bool = False) -> None:
        """Put the cursor on item ``index``; with ``top`` scroll it to the top of the view."""
        self.cursor = index
        if top and self._items:
            self._pin_cursor_top()

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
            self.set_reactive(DocRows.cursor, index)
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
