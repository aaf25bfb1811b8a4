"""Screens post messages up and the app calls down: no module of the TUI imports the app at run
time (so no import circle runs through it) and none calls it by name."""

from __future__ import annotations

import ast
from pathlib import Path

import memkeeper.tui

TUI = Path(memkeeper.tui.__file__).resolve().parent
#: The console script makes the app; nothing else may import it.
MAKERS = {"launch.py"}


def _type_only(tree: ast.Module) -> set[int]:
    """Line numbers inside ``if TYPE_CHECKING:`` blocks."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def test_no_tui_module_imports_the_app_at_run_time() -> None:
    found = []
    for path in sorted(TUI.rglob("*.py")):
        if path.name in MAKERS or path.name == "app.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typed = _type_only(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "memkeeper.tui.app"
                and node.lineno not in typed
            ):
                found.append(f"{path.relative_to(TUI)}:{node.lineno}")
    assert found == []


def test_no_screen_calls_the_app_by_name() -> None:
    for path in sorted(TUI.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "getattr(self.app" not in text, path.name
        assert "isinstance(self.app, MemkeeperApp)" not in text, path.name
