"""DocPane: the viewer (a title line over a :class:`DocView`) and what can be done with what it shows.

The pane loads a :class:`Target` in a thread worker through :func:`load_document`, opens
it where asked (a search hit's line, unfolded; memory.md at its newest section), keeps
its place across live refreshes, and acts on the open document: copy an entry, a
session id or its ``claude --resume`` command, open the file in ``$EDITOR`` or
``$PAGER``, export a session as Markdown, remove an entry into the trash, follow a
growing file. Store changes go up to the App (:class:`DocPane.RemoveRequested`).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from .. import keymap
from ..documents import load_document
from ..items import DocItem
from ..model import Document, Target
from ..reach import ReachesApp
from ..snapshot import file_signature
from ..text import literal
from .docview import DocView


@dataclass(frozen=True)
class OpenRequest:
    """Open ``target`` at source ``line`` with ``terms`` highlighted (from search)."""

    target: Target
    line: int | None = None
    terms: tuple[str, ...] = ()
    query: str = ""


class DocPane(ReachesApp, Vertical):
    """Title and document; loads in a worker, keeps its place, copies, edits, exports, removes."""

    BINDINGS = keymap.bindings("pane")
    """Keys of the viewer pane (they act on the open document and the cursor entry)."""

    @dataclass
    class Opened(Message):
        """A document is on screen (``document.target`` names it)."""

        pane: DocPane
        document: Document

    @dataclass
    class RemoveRequested(Message):
        """The user asked to move the entry at source lines ``start``…``end`` of ``target`` to the trash."""

        target: Target
        start: int
        end: int
        text: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.document: Document | None = None
        self._signature: tuple[int, int] | None = None
        self._serial = 0
        self.following = False

    def compose(self) -> ComposeResult:
        yield Static("", id="viewer-title", markup=False)
        yield DocView(id="doc")
        yield Static("", id="viewer-keys", markup=False)

    @property
    def view(self) -> DocView:
        return self.query_one(DocView)

    # -- loading ---------------------------------------------------------------------------

    def open(
        self, target: Target, *, keep_position: bool = False, request: OpenRequest | None = None
    ) -> None:
        """Load ``target`` (in a thread); ``request`` puts the cursor on a hit."""
        self._serial += 1
        if request is not None:
            # The tree's highlight event that follows must not load it a second time.
            self.document = Document(target, target.name)
        self._load_worker(target, self._serial, keep_position, request)

    def reset(self) -> None:
        """Forget the open document (another project is shown)."""
        self.document = None
        self._signature = None
        self.show_keys()

    def show_note(self, title: str, lines: list[str]) -> None:
        """Show a few lines of explanation instead of a document (a tier heading is selected)."""
        self.reset()
        self.view.set_items([DocItem(line, kind="muted") for line in lines])
        self.query_one("#viewer-title", Static).update(literal(title))

    def refresh_if_changed(self) -> None:
        """After a store change: reload the open document if its file changed (or it is derived)."""
        current = self.document
        if current is None:
            return
        if current.path is not None and not current.path.exists() and current.target.kind == "l1":
            self._show(self._gone(current), keep_position=False)
            return
        if (
            current.path is None
            or file_signature(current.path) != self._signature
            or current.target.kind in ("summary", "day")
        ):
            self.open(current.target, keep_position=True)

    @staticmethod
    def _gone(current: Document) -> Document:
        lines = [
            DocItem(f"{current.target.name} was forgotten: it is in the trash now.", kind="error"),
            DocItem("Restore it from the trash screen (t).", kind="muted"),
        ]
        return Document(current.target, f"{current.title} · forgotten", lines, None)

    @work(thread=True, exclusive=True, group="doc", exit_on_error=False, description="load document")
    def _load_worker(
        self, target: Target, serial: int, keep_position: bool, request: OpenRequest | None
    ) -> None:
        try:
            document = load_document(self.mk.paths, target, self.mk.snapshot)
        except Exception as exc:
            name = target.name or target.kind
            document = Document(target, name, [DocItem(f"Cannot read this: {exc}", kind="error")])
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
        if serial != self._serial or not self.is_attached:
            return  # the user moved on while this was loading
        self._signature = signature
        follow_end = keep_position and self.following
        self._show(document, keep_position=keep_position and not follow_end)
        doc = self.view
        if request is not None:
            doc.set_terms(request.terms or _words(request.query))
            doc.open_at_line(request.line)
            doc.focus()
        elif follow_end:
            doc.action_last()
        elif not keep_position and document.target.kind == "memory":
            doc.goto_last_section()
        self.show_keys()
        self.post_message(self.Opened(self, document))

    def _show(self, document: Document, *, keep_position: bool) -> None:
        self.document = document
        doc = self.view
        terms = doc.terms
        doc.set_items(document.items, keep_position=keep_position)
        doc.set_terms(terms if keep_position else ())
        self.set_title()

    def show_keys(self) -> None:
        """The keys that act on this document, on the line under it (otherwise only F1 lists them)."""
        kind = self.document.target.kind if self.document else None
        keys = [k for k, kinds in PANE_KEYS if kind is not None and (not kinds or kind in kinds)]
        self.query_one("#viewer-keys", Static).update(" · ".join(keys))

    def set_title(self, suffix: str = "") -> None:
        title = self.document.title if self.document else ""
        if self.following:
            title += "  [following]"
        if not self.view.markdown and self.document and self.document.target.kind == "l1":
            title += "  [raw]"
        self.query_one("#viewer-title", Static).update(literal(title + suffix))

    def on_doc_view_hit_moved(self, event: DocView.HitMoved) -> None:
        self.set_title(f"  [match {event.index + 1}/{event.count}]")

    # -- acting on what is shown -----------------------------------------------------------

    def _cursor_item(self) -> DocItem | None:
        doc = self.view
        return doc.items[doc.cursor] if doc.items else None

    def action_copy_entry(self) -> None:
        item = self._cursor_item()
        if item is None:
            self.notify("Nothing to copy here.", severity="warning", timeout=2)
            return
        text = item.text + (f"\n{item.body}" if item.body else "")
        self.mk.copy_text(text, "the entry")

    def _session_id(self) -> str | None:
        document = self.document
        if document is None or document.session is None:
            self.notify("Open an L1 session to copy its id.", severity="warning", timeout=3)
            return None
        return document.session

    def action_copy_session(self) -> None:
        session = self._session_id()
        if session is not None:
            self.mk.copy_text(session, "the session id")

    def action_copy_resume(self) -> None:
        session = self._session_id()
        if session is not None:
            self.mk.copy_text(f"claude --resume {session}", "the resume command")

    def _source_line(self) -> int | None:
        item = self._cursor_item()
        return item.line if item is not None else None

    def action_edit(self) -> None:
        if self.document is not None and self.document.path is not None:
            self.mk.open_external(self.document.path, self._source_line(), pager=False)
            self.refresh_if_changed()

    def action_page(self) -> None:
        if self.document is not None and self.document.path is not None:
            self.mk.open_external(self.document.path, self._source_line(), pager=True)

    def action_export(self) -> None:
        document = self.document
        if document is None or document.target.kind != "l1" or document.path is None:
            self.notify("Open an L1 session to export it.", severity="warning", timeout=3)
            return
        self.mk.export_session(document.path)

    def action_remove_entry(self) -> None:
        document = self.document
        item = self._cursor_item()
        if (
            document is None
            or item is None
            or document.target.kind not in ("memory", "archive")
            or item.line is None
        ):
            self.notify(
                "Put the cursor on a bullet or a section of memory.md or an archive to remove it.",
                severity="warning",
                timeout=3,
            )
            return
        end = item.end_line or item.line
        lines = [i.text for i in document.items if i.line is not None and item.line <= i.line <= end]
        self.post_message(self.RemoveRequested(document.target, item.line, end, "\n".join(lines)))

    def action_toggle_markdown(self) -> None:
        """Assistant answers drawn as Markdown, or raw as they were written."""
        markdown = not self.view.markdown
        self.view.set_markdown(markdown)
        self.notify(
            "Answers rendered as Markdown (M: raw)." if markdown else "Answers shown raw (M: Markdown).",
            timeout=2,
        )
        self.set_title()

    def action_follow(self) -> None:
        self.following = not self.following
        if self.following:
            self.view.action_last()
            self.notify("Following: new lines show as they are written (f stops).", timeout=3)
        self.set_title()


#: The pane's keys shown under the document, most useful first (a narrow pane cuts the last):
#: (label, the kinds of document it acts on; () all).
PANE_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("⏎ fold", ("l1",)),
    ("M raw", ("l1",)),
    ("x remove", ("memory", "archive")),
    ("e edit", ()),
    ("v pager", ()),
    ("f follow", ("memory", "l1")),
    ("y copy", ()),
)


def _words(query: str) -> tuple[str, ...]:
    from ..highlight import query_words

    return query_words(query)
