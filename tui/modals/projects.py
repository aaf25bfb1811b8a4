"""ProjectsModal: switch to another project that has a store (found from Claude Code transcripts)."""

from __future__ import annotations

from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from .. import keymap
from ..text import literal


class ProjectsModal(ModalScreen[Path | None]):
    """Lists projects with a store; dismisses with the chosen project directory."""

    BINDINGS = keymap.bindings("projects")
    """Keys of the project switcher (arrows and Enter pick)."""

    def __init__(self, current: Path) -> None:
        super().__init__()
        self._current = current
        self._projects: list[Path] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static("Projects with a memory store", classes="dialog-title")
            yield OptionList(id="projects")
            yield Static("looking in ~/.claude/projects …", id="projects-note", classes="dialog-note")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.find()

    @work(thread=True, exclusive=True, group="projects", exit_on_error=False, description="find projects")
    def find(self) -> None:
        from ...core.capture.projects import find_projects

        found = [info.project for info in find_projects()]
        self.app.call_from_thread(self._show, found)

    def _show(self, projects: list[Path]) -> None:
        if not self.is_attached:
            return
        if self._current not in projects:
            projects = [self._current, *projects]
        self._projects = projects
        options = self.query_one(OptionList)
        options.clear_options()
        for number, project in enumerate(projects):
            label = literal(f"{project.name}  ({home_relative(project)})")
            if project == self._current:
                label.append("  ← current", "bold")
            options.add_option(Option(label, id=str(number)))
        options.highlighted = projects.index(self._current)  # opens on the current project
        note = f"{len(projects)} project(s)" if projects else "no project with a store found"
        self.query_one("#projects-note", Static).update(note)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self._projects[int(event.option.id or 0)])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


def home_relative(path: Path) -> str:
    """``/home/me/src/x`` → ``~/src/x``: shorter, and the same on every machine for the same layout."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)
