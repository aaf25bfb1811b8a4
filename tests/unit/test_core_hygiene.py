"""Every core module keeps the house rules: it imports without Textual or Rich, uses postponed
annotations, and never prints (core returns values; the CLI, the TUI and the hook print)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import memkeeper.core

CORE = Path(memkeeper.core.__file__).resolve().parent
MODULES = sorted(
    ".".join(("memkeeper", "core", *path.relative_to(CORE).with_suffix("").parts)).removesuffix(".__init__")
    for path in CORE.rglob("*.py")
)
FRONT_END_PACKAGES = ("textual", "rich", "memkeeper.tui", "memkeeper.cli")


def _source(module: str) -> Path:
    parts = module.removeprefix("memkeeper.core").strip(".").split(".") if module != "memkeeper.core" else []
    folder = CORE.joinpath(*parts)
    return folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")


def test_every_core_module_is_listed() -> None:
    assert "memkeeper.core.store.paths" in MODULES and "memkeeper.core.search.engine" in MODULES
    assert all(_source(m).is_file() for m in MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_imports_without_a_front_end(module: str) -> None:
    code = (
        "import importlib, sys; importlib.import_module(sys.argv[1]);"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FRONT_END_PACKAGES[:2]!r}"
        f" or m.startswith({FRONT_END_PACKAGES[2:]!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", code, module], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("module", MODULES)
def test_postponed_annotations_and_no_print(module: str) -> None:
    tree = ast.parse(_source(module).read_text("utf-8"))
    future = [
        node
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(a.name == "annotations" for a in node.names)
    ]
    code = [
        node
        for node in tree.body
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ]
    assert future or not code, "missing `from __future__ import annotations`"
    prints = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    ]
    assert prints == [], f"print() at lines {prints}"
