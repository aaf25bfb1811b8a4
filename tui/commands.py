"""The command palette provider: every action of memkeeper-tui by name (Ctrl+P)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .reach import memkeeper_app

if TYPE_CHECKING:
    from textual.app import App


def palette_actions(app: App[Any]) -> list[tuple[str, str, Callable[[], object]]]:
    """(name, help, callback) for every action the palette offers (``app``: memkeeper's)."""
    mk = memkeeper_app(app)

    def browse_action(name: str) -> Callable[[], object]:
        def run() -> object:
            screen = mk.browse()
            if screen is None:
                return None
            if app.screen is not screen:
                app.pop_screen()
            return screen.run_action(name)

        return run

    def pane_action(name: str) -> Callable[[], object]:
        def run() -> object:
            from .widgets.doc_pane import DocPane

            panes = app.screen.query(DocPane)
            if not panes:
                app.notify("Open a document first.", severity="warning")
                return None
            return panes.first().run_action(name)

        return run

    return [
        ("Search", "Search every tier (/)", lambda: mk.open_search()),
        ("Pending summaries", "List pending and failed L3 summaries, regenerate them (p)", mk.open_pending),
        (
            "Regenerate summaries",
            "Open the pending screen to regenerate one or all (p, then g / a)",
            mk.open_pending,
        ),
        ("Rotate now", "Archive memory.md now and keep its tail (r)", mk.rotate_now),
        (
            "Migrate legacy memory.md",
            "Preview and run the split of an oversized memory.md (m)",
            mk.open_migrate,
        ),
        (
            "Forget selection",
            "Move the selected archive or L1 session to the trash (d)",
            browse_action("forget"),
        ),
        ("Sessions", "Find a session by title or date (S)", mk.open_sessions),
        (
            "Regenerate this summary",
            "Make the selected archive's L3 summary again (g)",
            browse_action("regenerate"),
        ),
        ("Copy entry", "Copy the viewer's cursor entry (y)", pane_action("copy_entry")),
        ("Copy session id", "Copy the open L1 session's id (i)", pane_action("copy_session")),
        (
            "Copy resume command",
            "Copy `claude --resume <id>` of the open session (R)",
            pane_action("copy_resume"),
        ),
        ("Open in editor", "Open the document in $EDITOR at the entry (e)", pane_action("edit")),
        ("Open in pager", "Open the document in $PAGER (v)", pane_action("page")),
        (
            "Export session as Markdown",
            "Write the open L1 session as a .md file (ctrl+s)",
            pane_action("export"),
        ),
        (
            "Remove entry",
            "Move the bullet or section under the cursor to the trash (x)",
            pane_action("remove_entry"),
        ),
        (
            "Markdown / raw answers",
            "Draw assistant answers as Markdown, or raw as written (M)",
            pane_action("toggle_markdown"),
        ),
        ("Follow", "Follow the open document as it grows, like tail -f (f)", pane_action("follow")),
        ("Activity", "Sessions, prompts and tools per day; memory growth; decisions (A)", mk.open_activity),
        ("Trash", "Restore forgotten archives, sessions and entries (t)", mk.open_trash),
        ("Switch project", "Open another project's store (o)", mk.open_projects),
        (
            "Settings",
            "Memory on/off, flush interval, summarizer, daily model budget, recall, this TUI (,)",
            mk.open_settings,
        ),
        ("Toggle live refresh", "Watch the store's files and refresh on change (w)", mk.toggle_live),
        ("Reload", "Re-read the store now (F5)", mk.reload_snapshot),
        ("Sections", "Jump to a section of the open document (s)", browse_action("sections")),
        ("Help", "Every key (F1)", mk.action_help),
    ]


class MemoryCommands(Provider):
    """memkeeper's actions in the command palette."""

    def _actions(self) -> list[tuple[str, str, Callable[[], object]]]:
        return palette_actions(self.app)

    async def discover(self) -> Hits:
        for name, help_text, callback in self._actions():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._actions():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
