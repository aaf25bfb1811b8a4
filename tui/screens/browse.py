"""BrowseScreen: the tier tree, the viewer of the selection, the status line.

Messages come up from the tree (a target was highlighted, a day was expanded); the
screen loads documents and counts in thread workers and calls down into the widgets.
A live refresh (``show_snapshot``) rebuilds the tree in place and reloads the open
document only if its file changed, keeping cursor and scroll.
"""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header

from ...core.store.names import archive_of_summary, is_archive, is_l1, is_summary
from .. import keymap
from ..items import DocItem, ItemKind
from ..model import SessionCounts, StoreSnapshot, Target
from ..reach import ReachesApp
from ..snapshot import count_l1
from ..widgets.doc_pane import DocPane, OpenRequest
from ..widgets.docview import DocView
from ..widgets.status import StatusLine
from ..widgets.tier_tree import TierTree


def target_for_file(file: str) -> Target | None:
    """The tree target that shows a store file named ``file`` (as search hits name them)."""
    from ...core.store.paths import NAMED_MEMORY_FILES

    name = file.rsplit("/", 1)[-1]
    if name == "memory.md":
        return Target("memory")
    for key, value in NAMED_MEMORY_FILES.items():
        if name == value:
            return Target("named", key)
    if is_summary(name):
        return Target("summary", archive_of_summary(name))
    if is_archive(name):
        return Target("archive", name)
    if is_l1(name):
        return Target("l1", name)
    return None


class BrowseScreen(ReachesApp, Screen[None]):
    """The main screen: tree on the left, viewer on the right."""

    BINDINGS = keymap.bindings("browse")
    """Keys of the browse screen (the footer shows the main ones; F1 lists all)."""

    def __init__(self) -> None:
        super().__init__()
        self._pending_open: OpenRequest | None = None
        self._opened_any = False
        self._titled: list[str] = []
        self._has_sections = False  # the open document has sections to jump to (s)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``s Sections`` is offered (and in the footer) only for a document that has sections."""
        if action == "sections":
            return self._has_sections
        return True

    @property
    def pane(self) -> DocPane:
        return self.query_one(DocPane)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield StatusLine(id="status")
        with Horizontal(id="browse"):
            yield TierTree(id="tree")
            yield DocPane(id="viewer")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(TierTree).focus()
        if self.mk.snapshot is not None:
            self.show_snapshot(self.mk.snapshot, frozenset())
        else:
            self.load(Target("memory"))  # in parallel with the snapshot: first paint sooner
        status = self.query_one(StatusLine)
        self.watch(self.app, "live", status.set_live, init=True)
        self.watch(self.app, "backend", status.set_backend, init=True)

    # -- calls down from the app -----------------------------------------------------------

    def show_snapshot(self, snapshot: StoreSnapshot, changed: frozenset[Any]) -> None:
        """A fresh snapshot: rebuild the tree in place, refresh the status, reload a changed document."""
        self.query_one(StatusLine).show_snapshot(snapshot)
        tree = self.query_one(TierTree)
        tree.forget_counts({p.name for p in changed if is_l1(p.name)})
        tree.show_snapshot(snapshot)
        if snapshot.sessions and [s.name for s in snapshot.sessions] != self._titled:
            self._titled = [s.name for s in snapshot.sessions]
            self.call_after_refresh(self._titles_worker)  # after the tree is drawn
        pane = self.pane
        if not snapshot.exists:
            items = [literal_item("No memory store here: press o for projects.")]
            pane.reset()
            pane.view.set_items(items)
            return
        if self._pending_open is not None:
            request, self._pending_open = self._pending_open, None
            self.open_request(request)
            return
        if pane.document is None:
            if not self._opened_any:
                self.load(Target("memory"))
            return
        pane.refresh_if_changed()
        # Only sessions whose counts were dropped above (changed) or never taken: the
        # others of an open day are still right, and re-reading them on every hook write
        # would make each open day a full read of its files.
        uncounted = tree.uncounted(self._expanded_days())
        if uncounted:
            self.count_sessions(uncounted)

    def reset(self) -> None:
        """Forget the open document and the tree's state (another project is being shown)."""
        self._pending_open = None
        self._opened_any = False
        self.pane.reset()
        self.query_one(TierTree).reset_state()

    def _expanded_days(self) -> list[str]:
        tree = self.query_one(TierTree)
        snapshot = tree.snapshot
        if snapshot is None:
            return []
        names: list[str] = []
        for tier in tree.root.children:
            for day in tier.children:
                if day.data is not None and day.data.kind == "day" and day.is_expanded:
                    names.extend(s.name for s in snapshot.days.get(day.data.name, []))
        return names

    # -- messages up from the widgets -----------------------------------------------------

    @on(TierTree.TargetSelected)
    def _target_selected(self, event: TierTree.TargetSelected) -> None:
        if event.target.kind == "tier" and event.target.name in TIERS_EXPLAINED:
            self.pane.show_note(*TIERS_EXPLAINED[event.target.name])
            return
        if event.target.kind in ("tier", "group"):
            return
        document = self.pane.document
        if document is not None and document.target == event.target:
            return
        self.load(event.target)

    @on(DocPane.Opened)
    def _opened(self, event: DocPane.Opened) -> None:
        has = bool(self.pane.view.sections())
        if has != self._has_sections:
            self._has_sections = has
            self.refresh_bindings()

    @on(TierTree.DayExpanded)
    def _day_expanded(self, event: TierTree.DayExpanded) -> None:
        self.count_sessions(event.names)

    # -- workers --------------------------------------------------------------------------

    def load(self, target: Target) -> None:
        """Load ``target`` into the viewer (in a thread)."""
        self._opened_any = True
        self.pane.open(target)

    @work(thread=True, exclusive=True, group="titles", exit_on_error=False, description="session titles")
    def _titles_worker(self) -> None:
        from ...core.capture.titles import session_titles

        titles = session_titles(self.mk.paths)
        self.app.call_from_thread(self.query_one(TierTree).set_titles, titles)

    def count_sessions(self, names: list[str]) -> None:
        self._count_worker(names)

    @work(thread=True, group="counts", exit_on_error=False, description="count L1 sessions")
    def _count_worker(self, names: list[str]) -> None:
        counts = count_l1(self.mk.paths, names)
        self.app.call_from_thread(self._counted, counts)

    def _counted(self, counts: dict[str, SessionCounts]) -> None:
        self.query_one(TierTree).set_counts(counts)

    # -- opening from search ----------------------------------------------------------------

    def open_request(self, request: OpenRequest) -> None:
        """Select ``request.target`` in the tree and open it at the hit, highlighted."""
        tree = self.query_one(TierTree)
        if tree.snapshot is None:
            self._pending_open = request
            return
        tree.select_target(request.target)
        self._opened_any = True
        self.pane.open(request.target, request=request)

    # -- actions ---------------------------------------------------------------------------

    def action_search(self) -> None:
        self.mk.open_search()

    def action_pending(self) -> None:
        self.mk.open_pending()

    def action_trash(self) -> None:
        self.mk.open_trash()

    def action_projects(self) -> None:
        self.mk.open_projects()

    def action_migrate(self) -> None:
        self.mk.open_migrate()

    def action_rotate(self) -> None:
        self.mk.rotate_now()

    def action_toggle_live(self) -> None:
        self.mk.toggle_live()

    def action_reload(self) -> None:
        self.mk.reload_snapshot()

    def action_clear_highlight(self) -> None:
        doc = self.query_one(DocView)
        if doc.terms:
            doc.set_terms(())
            self.pane.set_title()

    def action_sections(self) -> None:
        from ..modals.sections import SectionsModal

        doc = self.query_one(DocView)
        sections = doc.sections()
        if not sections:
            self.notify("This document has no sections.", severity="warning", timeout=2)
            return

        def jump(index: int | None) -> None:
            if index is not None:
                doc.move_to(index, top=True)
                doc.focus()

        self.app.push_screen(SectionsModal(sections, doc.cursor), jump)

    def action_activity(self) -> None:
        self.mk.open_activity()

    def action_sessions(self) -> None:
        self.mk.open_sessions()

    def action_settings(self) -> None:
        self.mk.open_settings()

    def action_regenerate(self) -> None:
        node = self.query_one(TierTree).cursor_node
        target = node.data if node is not None else None
        if target is None or target.kind not in ("archive", "summary"):
            self.notify("Select an archive or its summary to make its summary again.", severity="warning")
            return
        self.mk.regenerate(target.name)

    def action_forget(self) -> None:
        node = self.query_one(TierTree).cursor_node
        target = node.data if node is not None else None
        if target is None or target.kind not in ("archive", "summary", "l1"):
            self.notify("Select an archive or an L1 session to forget.", severity="warning")
            return
        self.mk.forget(target)


#: What each tier heading of the tree is, shown in the viewer when the heading is selected.
TIERS_EXPLAINED: dict[str, tuple[str, list[str]]] = {
    "l2": (
        "L2 · memory: what every session starts with",
        [
            "memory.md: short bullets about the work, written by the flush every few prompts and "
            "tool uses and when a session ends. Each new session of this project reads it.",
            "project.md, architecture.md, conventions.md: notes you keep yourself (memkeeper memory-set).",
            "archives: memory.md moved out whole when it passes its token limit; each gets an L3 summary.",
        ],
    ),
    "l3": (
        "L3 · summaries: one per archive",
        [
            "Themes, decisions and open issues of an archive, made in the background by the summarizer.",
            "✓ made · ○ pending · ✗ failed (p lists pending and failed ones; g makes one again).",
        ],
    ),
    "l1": (
        "L1 · sessions: every session as it happened",
        [
            "A copy of each Claude Code session of this project (prompts, answers, tool calls), by day.",
            "S lists them; deep search (F4 in search) looks through them too.",
        ],
    ),
}


def literal_item(text: str, kind: ItemKind = "muted") -> DocItem:
    return DocItem(text, kind=kind)
