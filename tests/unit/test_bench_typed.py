"""Every bench script is type-checked: they run as ``python bench/NAME.py`` and import one
another as top-level modules, so mypy's configuration names each one (a new script left out
would silently go unchecked)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_bench_script_is_listed_for_mypy() -> None:
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["mypy"]
    scripts = sorted(path.stem for path in (ROOT / "bench").glob("*.py"))
    assert "bench_recall" in scripts
    assert sorted(mypy["modules"]) == scripts
