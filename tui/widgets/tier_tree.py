"""TierTree: L2 (memory.md, notes, archives), L3 (summaries), L1 (sessions by day).

It is rebuilt from a :class:`StoreSnapshot` in place, keeping the cursor, the expanded
nodes and the scroll position, so a live refresh never loses the user's place. L1 days
start collapsed; their sessions are added when a day is expanded and their message and
tool counts are filled in later (:meth:`set_counts`) by a worker of the screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from .. import keymap
from ..model import SessionCounts, StoreSnapshot, Target
from ..text import fg_style, literal
from .tree_labels import (
    archive_label,
    day_label,
    l3_label,
    memory_label,
    session_label,
    summary_label,
)

#: Above this many archives, the archive and summary lists start folded and fill when expanded.
LAZY_LIMIT = 300

#: The first build adds this many L1 days (the newest, more than a terminal shows) before the
#: first frame and the older ones right after it: a store of years has over a thousand.
FIRST_DAYS = 150


class TierTree(Tree[Target]):
    """The store's tiers as a tree; posts :class:`TierTree.TargetSelected` when the cursor moves
    (styled in ``styles/widgets.tcss``)."""

    COMPONENT_CLASSES = {"tiertree--ok", "tiertree--pending", "tiertree--failed"}

    BINDINGS = keymap.bindings("tree")
    """Keys of the tier tree (Tree's own up/down/enter/space also apply)."""

    @dataclass
    class TargetSelected(Message):
        """The highlighted node changed to ``target``."""

        target: Target

    @dataclass
    class DayExpanded(Message):
        """An L1 day was expanded: its sessions need counts."""

        day: str
        names: list[str]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("store", id=id)
        self.show_root = False
        self.guide_depth = 2
        self._snapshot: StoreSnapshot | None = None
        self._counts: dict[str, SessionCounts] = {}
        self._titles: dict[str, str] = {}
        self._expanded: set[str] = {"tier:l2", "tier:l3", "tier:l1", "group:archives"}

    # -- building ---------------------------------------------------------------------------

    @property
    def snapshot(self) -> StoreSnapshot | None:
        return self._snapshot

    def show_snapshot(self, snapshot: StoreSnapshot) -> None:
        """Show ``snapshot``: labels updated in place when only sizes changed, else rebuilt.

        A rebuild keeps the cursor, the expanded nodes and the scroll position.
        """
        old = self._snapshot
        if old is not None and _same_files(old, snapshot):
            # Same files (a hook appended to memory.md or to a session): relabel, no rebuild.
            self._snapshot = snapshot
            self._relabel(snapshot)
            return
        cursor_key = (
            self.cursor_node.data.key
            if old is not None and self.cursor_node and self.cursor_node.data
            else None
        )
        if old is not None:
            self._expanded = self._collect_expanded()
        elif len(snapshot.archives) > LAZY_LIMIT:
            # A big store opens with its long lists folded: they are filled when expanded.
            self._expanded -= {"group:archives", "tier:l3"}
        scroll_y = self.scroll_y
        self._snapshot = snapshot
        self.clear()
        self._add_l2_l3(snapshot)
        self._add_l1(snapshot, FIRST_DAYS if old is None else None)
        self.call_after_refresh(self._restore_position, cursor_key, scroll_y)

    def _relabel(self, snapshot: StoreSnapshot) -> None:
        for node in self._all_nodes():
            if node.data == Target("memory"):
                node.set_label(memory_label(snapshot))
            elif node.data == Target("tier", "l3"):
                node.set_label(l3_label(snapshot))
            elif node.data is not None and node.data.kind == "l1" and node.data.name not in self._counts:
                node.set_label(self._session_label(node.data.name))

    def _add_l2_l3(self, snapshot: StoreSnapshot) -> None:
        root = self.root
        l2 = root.add(Text("L2 memory", style="bold"), data=Target("tier", "l2"), expand=True)
        l2.add_leaf(memory_label(snapshot), data=Target("memory"))
        for name in snapshot.named:
            l2.add_leaf(literal(f"{name}.md"), data=Target("named", name))
        archives = l2.add(
            Text(f"archives ({len(snapshot.archives)})"), data=Target("group", "archives"), allow_expand=True
        )
        l3 = root.add(l3_label(snapshot), data=Target("tier", "l3"), allow_expand=True)
        for group in (archives, l3):
            if group.data is not None and group.data.key in self._expanded:
                self._fill_group(group)
                group.expand()

    def _add_l1(self, snapshot: StoreSnapshot, first: int | None) -> None:
        """The L1 tier and its days, newest first; with ``first``, only that many before the
        next frame (the rest follow it, unless another snapshot was shown meanwhile)."""
        l1 = self.root.add(
            Text.assemble(("L1 sessions", "bold"), f" ({len(snapshot.sessions)})"),
            data=Target("tier", "l1"),
            expand="tier:l1" in self._expanded,
        )
        days = sorted(snapshot.days, reverse=True)
        now, later = (days, []) if first is None else (days[:first], days[first:])
        self._add_days(l1, snapshot, now)
        if later:
            self.call_after_refresh(self._add_days, l1, snapshot, later)

    def _add_days(self, l1: TreeNode[Target], snapshot: StoreSnapshot, days: list[str]) -> None:
        if snapshot is not self._snapshot:
            return  # rebuilt from a newer snapshot meanwhile
        for day in days:
            node = l1.add(
                day_label(self._counts, day, [s.name for s in snapshot.days[day]]),
                data=Target("day", day),
                allow_expand=True,
            )
            if f"day:{day}" in self._expanded:
                self._fill_day(node)
                node.expand()

    def _fill_group(self, node: TreeNode[Target]) -> None:
        """Add the archives (L2 group) or summaries (L3 tier) under ``node`` if not there yet."""
        if node.children or self._snapshot is None or node.data is None:
            return
        summaries = node.data == Target("tier", "l3")
        for archive in reversed(self._snapshot.archives):  # newest first
            if summaries:
                node.add_leaf(
                    summary_label(archive, self._snapshot, self._mark_style),
                    data=Target("summary", archive.name),
                )
            else:
                node.add_leaf(
                    archive_label(archive, self._snapshot, self._mark_style),
                    data=Target("archive", archive.name),
                )

    def _all_nodes(self) -> list[TreeNode[Target]]:
        nodes: list[TreeNode[Target]] = []
        stack: list[TreeNode[Target]] = [self.root]
        while stack:
            node = stack.pop()
            nodes.append(node)
            stack.extend(node.children)
        return nodes

    def _restore_position(self, cursor_key: str | None, scroll_y: float) -> None:
        self._restore_cursor(cursor_key)
        self.scroll_to(y=scroll_y, animate=False, immediate=True)

    def _collect_expanded(self) -> set[str]:
        expanded: set[str] = set()
        stack: list[TreeNode[Target]] = [self.root]
        while stack:
            node = stack.pop()
            if node.is_expanded and node.data is not None:
                expanded.add(node.data.key)
            stack.extend(node.children)
        return expanded

    def _restore_cursor(self, key: str | None) -> None:
        if key is None:
            key = Target("memory").key
        for line in range(self.last_line + 1):
            node = self.get_node_at_line(line)
            if node is not None and node.data is not None and node.data.key == key:
                self.move_cursor(node, animate=False)
                return

    def _fill_day(self, node: TreeNode[Target]) -> None:
        if node.children or self._snapshot is None or node.data is None:
            return
        for info in self._snapshot.days.get(node.data.name, []):
            node.add_leaf(self._session_label(info.name), data=Target("l1", info.name))

    def _session_label(self, name: str) -> Text:
        info = self._snapshot.session_named.get(name) if self._snapshot else None
        return session_label(
            name, info, self._counts.get(name), self._titles.get(name.removesuffix(".gz"), "")
        )

    def set_titles(self, titles: dict[str, str]) -> None:
        """Session titles (from :mod:`memkeeper.core.capture.titles`), keyed by file name without ``.gz``."""
        self._titles = titles
        for node in self._all_nodes():
            if node.data is not None and node.data.kind == "l1":
                node.set_label(self._session_label(node.data.name))

    def reset_state(self) -> None:
        """Drop the remembered snapshot, counts and expansion (a different store follows)."""
        self._snapshot = None
        self._counts = {}
        self._expanded = {"tier:l2", "tier:l3", "tier:l1", "group:archives"}
        self.clear()

    def set_counts(self, counts: dict[str, SessionCounts]) -> None:
        """Record session counts (from a worker) and refresh the labels that show them."""
        self._counts.update(counts)
        stack: list[TreeNode[Target]] = [self.root]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if node.data is None:
                continue
            if node.data.kind == "l1" and node.data.name in counts:
                node.set_label(self._session_label(node.data.name))
            elif node.data.kind == "day" and self._snapshot is not None:
                names = [s.name for s in self._snapshot.days.get(node.data.name, [])]
                if any(n in counts for n in names):
                    node.set_label(day_label(self._counts, node.data.name, names))

    def uncounted(self, names: list[str]) -> list[str]:
        """The sessions among ``names`` with no cached counts (new, or changed on disk)."""
        return [name for name in names if name not in self._counts]

    def forget_counts(self, names: set[str]) -> None:
        """Drop cached counts for sessions that changed on disk."""
        for name in names:
            self._counts.pop(name, None)

    def select_target(self, target: Target) -> bool:
        """Move the cursor to ``target`` (expanding its day or group); False if it is not in the tree."""
        if target.kind in ("archive", "summary"):
            wanted = Target("tier", "l3") if target.kind == "summary" else Target("group", "archives")
            for node in self._all_nodes():
                if node.data == wanted:
                    self._fill_group(node)
                    node.expand()
                    if node.parent is not None:
                        node.parent.expand()
        if target.kind == "l1" and self._snapshot is not None:
            info = self._snapshot.session_named.get(target.name)
            if info is not None:
                for tier in self.root.children:
                    for day in tier.children:
                        if day.data is not None and day.data == Target("day", info.day):
                            tier.expand()
                            self._fill_day(day)
                            day.expand()
        for line in range(self.last_line + 1):
            found = self.get_node_at_line(line)
            if found is not None and found.data == target:
                self.move_cursor(found, animate=False)
                return True
        # Not yet laid out (just expanded): search the nodes.
        for node in self._all_nodes():
            if node.data == target:
                self.call_after_refresh(self.move_cursor, node, animate=False)
                return True
        return False

    # -- events -----------------------------------------------------------------------------

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Target]) -> None:
        node = event.node
        if node.data in (Target("group", "archives"), Target("tier", "l3")):
            self._fill_group(node)
        if node.data is not None and node.data.kind == "day":
            self._fill_day(node)
            if self._snapshot is not None:
                names = [
                    s.name for s in self._snapshot.days.get(node.data.name, []) if s.name not in self._counts
                ]
                if names:
                    self.post_message(self.DayExpanded(node.data.name, names))

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Target]) -> None:
        if event.node.data is not None:
            self.post_message(self.TargetSelected(event.node.data))

    def action_expand_node(self) -> None:
        node = self.cursor_node
        if node is not None and node.allow_expand and not node.is_expanded:
            node.expand()

    def action_collapse_node(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded:
            node.collapse()
        elif node.parent is not None and node.parent is not self.root:
            self.move_cursor(node.parent, animate=False)

    def _mark_style(self, state: str) -> Style:
        if state not in ("ok", "pending", "failed"):
            return Style()
        return fg_style(self.get_component_rich_style(f"tiertree--{state}"))


def _same_files(old: StoreSnapshot, new: StoreSnapshot) -> bool:
    """Whether two snapshots list the same archives, notes and sessions (sizes may differ)."""
    return (old.archives, old.named) == (new.archives, new.named) and [s.name for s in old.sessions] == [
        s.name for s in new.sessions
    ]
