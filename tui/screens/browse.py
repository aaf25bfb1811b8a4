"""BrowseScreen: the tier tree, the viewer of the selection, the status line.

Messages come up from the tree (a target was highlighted, a day was expanded); the
screen loads documents and counts in thread workers and calls down into the widgets.
A live refresh (``show_snapshot``) rebuilds the tree in place and reloads the open
document only if its file changed, keeping cursor and scroll.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from memkeeper.core.names import archive_of_summary, is_archive, is_l1, is_summary
from memkeeper.tui.loaders import (
    Document,
    SessionCounts,
    StoreSnapshot,
    Target,
    count_l1,
    file_signature,
    load_document,
)
from memkeeper.tui.text import literal
from memkeeper.tui.widgets.docview import DocView
from memkeeper.tui.widgets.status import StatusLine
from memkeeper.tui.widgets.tier_tree import TierTree

if TYPE_CHECKING:
    from memkeeper.tui.app import MemkeeperApp


@dataclass(frozen=True)
class OpenRequest:
    """Open ``target`` at ``line`` with ``query`` highlighted (from search)."""

    target: Target
    line: int | None = None
    query: str = ""


def target_for_file(file: str) -> Target | None:
    """The tree target that shows a store file named ``file`` (as search hits name them)."""
    from memkeeper.core.store import NAMED_MEMORY_FILES

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


class BrowseScreen(Screen[None]):
    """The main screen: tree on the left, viewer on the right."""

    BINDINGS = [
        Binding("slash", "search", "Search", id="browse.search"),
        Binding("p", "pending", "Pending", id="browse.pending"),
        Binding("s", "sections", "Sections", id="browse.sections"),
        Binding("d,delete", "forget", "Forget", id="browse.forget"),
        Binding("r", "rotate", "Rotate now", show=False, id="browse.rotate"),
        Binding("m", "migrate", "Migrate", show=False, id="browse.migrate"),
        Binding("t", "trash", "Trash", show=False, id="browse.trash"),
        Binding("o", "projects", "Projects", show=False, id="browse.projects"),
        Binding("w", "toggle_live", "Live refresh on/off", show=False, id="browse.live"),
        Binding("f5", "reload", "Reload", show=False, id="browse.reload"),
        Binding("escape", "clear_highlight", "Clear highlight", show=False, id="browse.clear"),
    ]
    """Keys of the browse screen (the footer shows the main ones; F1 lists all)."""

    def __init__(self) -> None:
        super().__init__()
        self._document: Document | None = None
        self._signature: tuple[int, int] | None = None
        self._pending_open: OpenRequest | None = None
        self._load_serial = 0

    @property
    def mk(self) -> MemkeeperApp:
        from memkeeper.tui.app import MemkeeperApp

        assert isinstance(self.app, MemkeeperApp)
        return self.app

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield StatusLine(id="status")
        with Horizontal(id="browse"):
            yield TierTree(id="tree")
            with Vertical(id="viewer"):
                yield Static("", id="viewer-title", markup=False)
                yield DocView(id="doc")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(TierTree).focus()
        if self.mk.snapshot is not None:
            self.show_snapshot(self.mk.snapshot, frozenset())
        else:
            self.load(Target("memory"))  # in parallel with the snapshot: first paint sooner
        self.query_one(StatusLine).live = self.mk.live

    # -- calls down from the app -----------------------------------------------------------

    def show_snapshot(self, snapshot: StoreSnapshot, changed: frozenset[Any]) -> None:
        """A fresh snapshot: rebuild the tree in place, refresh the status, reload a changed document."""
        self.query_one(StatusLine).show_snapshot(snapshot)
        tree = self.query_one(TierTree)
        tree.forget_counts({p.name for p in changed if is_l1(p.name)})
        tree.show_snapshot(snapshot)
        if not snapshot.exists:
            self._show_document(
                Document(
                    Target("none"), "no store", [literal_item("No memory store here: press o for projects.")]
                )
            )
            return
        if self._pending_open is not None:
            request, self._pending_open = self._pending_open, None
            self.open_request(request)
            return
        if self._document is None:
            if self._load_serial == 0:
                self.load(Target("memory"))
            return
        current = self._document
        if (
            current.path is None
            or file_signature(current.path) != self._signature
            or current.target.kind in ("summary", "day")
        ):
            self.load(current.target, keep_position=True)
        # Only sessions whose counts were dropped above (changed) or never taken: the
        # others of an open day are still right, and re-reading them on every hook write
        # would make each open day a full read of its files.
        uncounted = tree.uncounted(self._expanded_days())
        if uncounted:
            self.count_sessions(uncounted)

    def reset(self) -> None:
        """Forget the open document and the tree's state (another project is being shown)."""
        self._document = None
        self._signature = None
        self._pending_open = None
        self.query_one(TierTree).reset_state()

    def set_live(self, live: bool) -> None:
        self.query_one(StatusLine).live = live

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
        if event.target.kind in ("tier", "group"):
            return
        if self._document is not None and self._document.target == event.target:
            return
        self.load(event.target)

    @on(TierTree.DayExpanded)
    def _day_expanded(self, event: TierTree.DayExpanded) -> None:
        self.count_sessions(event.names)

    @on(DocView.HitMoved)
    def _hit_moved(self, event: DocView.HitMoved) -> None:
        self._update_title(f"  [hit {event.index + 1}/{event.count}]")

    # -- workers --------------------------------------------------------------------------

    def load(
        self, target: Target, *, keep_position: bool = False, request: OpenRequest | None = None
    ) -> None:
        """Load ``target`` into the viewer (in a thread)."""
        self._load_serial += 1
        self._load_worker(target, self._load_serial, keep_position, request)

    @work(thread=True, exclusive=True, group="doc", exit_on_error=False, description="load document")
    def _load_worker(
        self, target: Target, serial: int, keep_position: bool, request: OpenRequest | None
    ) -> None:
        snapshot = self.mk.snapshot
        try:
            document = load_document(self.mk.paths, target, snapshot)
        except Exception as exc:
            document = Document(
                target, target.name or target.kind, [literal_item(f"Cannot read this: {exc}", "error")]
            )
        signature = file_signature(document.path)
        self.app.call_from_thread(self._loaded, document, signature, serial, keep_position, request)

    def _loaded(
        self,
        document: Document,
        signature: tuple[int, int] | None,
        serial: int,
        keep_position: bool,
        request: OpenRequest | None,
    ) -> None:
        if serial != self._load_serial:
            return  # the user moved on while this was loading
        self._signature = signature
        self._show_document(document, keep_position=keep_position)
        doc = self.query_one(DocView)
        if request is not None:
            doc.set_query(request.query)
            doc.goto_first_hit(request.line)
            doc.focus()
        elif keep_position and doc.highlight_query:
            doc.set_query(doc.highlight_query)

    def _show_document(self, document: Document, *, keep_position: bool = False) -> None:
        self._document = document
        doc = self.query_one(DocView)
        doc.set_items(document.items, keep_position=keep_position)
        if not keep_position:
            doc.set_query("")
        self._update_title()

    def _update_title(self, suffix: str = "") -> None:
        title = self._document.title if self._document else ""
        self.query_one("#viewer-title", Static).update(literal(title + suffix))

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
        self._load_serial += 1
        self._document = Document(request.target, request.target.name)  # the highlight event must not reload
        self._load_worker(request.target, self._load_serial, False, request)

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
        if doc.highlight_query:
            doc.set_query("")
            self._update_title()

    def action_sections(self) -> None:
        from memkeeper.tui.modals.sections import SectionsModal

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

    def action_forget(self) -> None:
        node = self.query_one(TierTree).cursor_node
        target = node.data if node is not None else None
        if target is None or target.kind not in ("archive", "summary", "l1"):
            self.notify("Select an archive or an L1 session to forget.", severity="warning")
            return
        self.mk.forget(target)


def literal_item(text: str, kind: str = "muted") -> Any:
    from memkeeper.tui.widgets.docview import DocItem

    return DocItem(text, kind=kind)
