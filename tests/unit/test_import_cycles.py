"""No import cycle anywhere in the package (core, the CLI, the plugin, the TUI), module by module.

import-linter's ``acyclic_siblings`` contract (pyproject.toml) finds cycles between the modules and
subpackages of each core package, but not one through a package's own ``__init__``: a backend
importing its package, which imports the backend, is a cycle only this test sees. Imports in a
function and under ``TYPE_CHECKING`` count: each is an arrow a reader follows. No cycle is
allowed, not even one the contract's ``ignore_imports`` would let through.
"""

from __future__ import annotations

import grimp
import pytest


def cycles(graph: grimp.ImportGraph, prefix: str) -> list[list[str]]:
    """The strongly connected components of more than one module among the modules named
    ``prefix`` or below it (Tarjan's algorithm)."""
    modules = sorted(m for m in graph.modules if m == prefix or m.startswith(prefix + "."))
    inside = set(modules)
    arrows = {m: sorted(graph.find_modules_directly_imported_by(m) & inside) for m in modules}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in arrows[module]:
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in modules:
        if module not in order:
            visit(module)
    return found


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("memkeeper", cache_dir=None)


# The whole package (a cycle between two of its folders too), then each folder, to say where.
@pytest.mark.parametrize(
    "package", ["memkeeper", "memkeeper.core", "memkeeper.cli", "memkeeper.plugin", "memkeeper.tui"]
)
def test_no_import_cycle_between_modules(graph: grimp.ImportGraph, package: str) -> None:
    assert any(module.startswith(package + ".") for module in graph.modules)  # its modules are seen
    assert cycles(graph, package) == []


def test_a_cycle_through_a_package_init_is_found() -> None:
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.backend", "pkg.other"):
        graph.add_module(module)
    graph.add_import(importer="pkg", imported="pkg.backend")
    graph.add_import(importer="pkg.backend", imported="pkg")
    graph.add_import(importer="pkg.other", imported="pkg.backend")
    assert cycles(graph, "pkg") == [["pkg", "pkg.backend"]]
