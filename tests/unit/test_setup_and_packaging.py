"""The setup script and the package declaration: a quiet setup, every data folder shipped on purpose."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: pyproject's package-dir: the folders that become memkeeper.* packages.
MAPPED = {
    "plugin": "memkeeper.plugin",
    "tui": "memkeeper.tui",
    "core": "memkeeper.core",
    "cli": "memkeeper.cli",
}


def declared() -> tuple[set[str], dict[str, list[str]]]:
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    return set(setuptools["packages"]), setuptools["package-data"]


def test_every_importable_folder_is_a_declared_package() -> None:
    """setuptools warns ("Package ... would be ignored", a 40-line block each) about any folder under a
    package that Python could import but `packages` does not list: the plugin's and the TUI's data folders
    are declared, with their own package-data."""
    packages, data = declared()
    for top, name in MAPPED.items():
        for folder in sorted(p for p in (REPO / top).rglob("*") if p.is_dir()):
            parts = folder.relative_to(REPO / top).parts
            if "__pycache__" in parts or not all(part.isidentifier() for part in parts):
                continue  # .claude-plugin, skills/memory-rotate: not importable names, shipped by the parent
            package = ".".join([name, *parts])
            assert package in packages, f"{folder.relative_to(REPO)} is not declared as {package}"
            has_data = any(not p.name.endswith((".py", ".pyc")) for p in folder.iterdir() if p.is_file())
            assert not has_data or package in data, f"{package} ships data files without package-data"


def test_both_commands_are_console_scripts() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    assert scripts == {"memkeeper": "memkeeper.cli.main:run", "memkeeper-tui": "memkeeper.tui.launch:main"}


def test_setup_says_nothing_when_the_venv_is_current() -> None:
    if not (REPO / ".venv" / ".memkeeper-installed").exists():
        pytest.skip("no .venv made by scripts/setup.py here")
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "setup.py"), "--run"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_setup_refuses_an_unknown_action() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "setup.py"), "--bogus"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.startswith("usage: scripts/setup.py")
