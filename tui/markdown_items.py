"""A Markdown file (memory.md, an archive, a named note) as viewer items: one source line, one item.

Headings are styled and navigable (``[`` / ``]``), bullets marked, code blocks kept
verbatim; each heading and bullet knows the source lines it spans, so it can be removed
into the trash on its own.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .items import DocItem, ItemKind

HEADING_RE = re.compile(r"^(#{1,6})\s+(.*)$")
BULLET_RE = re.compile(r"^(\s*)[-*+]\s+(.*)$")
LEVELS = {"h1": 1, "h2": 2, "h3": 3}
HEADINGS: tuple[ItemKind, ItemKind, ItemKind] = ("h1", "h2", "h3")


def markdown_items(text: str) -> list[DocItem]:
    """Markdown lines as items: headings styled and navigable, bullets, code blocks; 1 line = 1 item."""
    items: list[DocItem] = []
    in_code = False
    number = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip().startswith("```"):
            in_code = not in_code
            items.append(DocItem(line, kind="code", line=number))
        elif in_code:
            items.append(DocItem(line, kind="code", line=number))
        else:
            items.append(_line_item(line, number))
    while items and not items[-1].text.strip():
        items.pop()
    return _with_end_lines(items, number)


def _line_item(line: str, number: int) -> DocItem:
    heading = HEADING_RE.match(line)
    if heading:
        level = min(len(heading.group(1)), 3)
        return DocItem(heading.group(2), kind=HEADINGS[level - 1], line=number, anchor=level <= 2)
    bullet = BULLET_RE.match(line)
    if bullet:
        return DocItem(bullet.group(2), kind="bullet", prefix=bullet.group(1) + "• ", line=number)
    return DocItem(line, kind="text", line=number)


def _section_end(items: list[DocItem], index: int, last_line: int) -> int:
    """The last source line of the section that heading ``items[index]`` opens."""
    level = LEVELS[items[index].kind]
    for later in items[index + 1 :]:
        if later.kind in LEVELS and LEVELS[later.kind] <= level and later.line:
            return later.line - 1
    return last_line


def _with_end_lines(items: list[DocItem], last_line: int) -> list[DocItem]:
    """Give each heading the last line of its section and each bullet its own (for removal)."""
    out: list[DocItem] = []
    for index, item in enumerate(items):
        if item.kind in LEVELS and item.line is not None:
            item = replace(item, end_line=_section_end(items, index, last_line))
        elif item.kind == "bullet":
            item = replace(item, end_line=item.line)
        out.append(item)
    return out
