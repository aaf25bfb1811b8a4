"""Set up the development venv, and run the TUI or the tests from it: the one place for both, on every OS.

    python3 scripts/setup.py [--run|--test]    set up .venv (idempotent), always from constraints.txt:
        --run    only what running needs (the package and its runtime dependencies)
        (none)   the package, its runtime dependencies and the dev tools
        --test   also what the tests drive for real: tmux and the Claude Code CLIs
                 (pinned in .e2e/, newest tested in .e2e-newest/)
    python3 scripts/setup.py run [ARGS]     set up (--run), then memkeeper-tui on this folder's project
                                            (or a demo store when it has none); ARGS go to memkeeper-tui
    python3 scripts/setup.py test [ARGS]    set up (--test), then pytest; ARGS go to pytest

``bash scripts/run.sh`` and ``bash scripts/test.sh`` call it (as do ``scripts/run.ps1`` and
``scripts/test.ps1`` on Windows, or ``py scripts\\setup.py run|test``). Standard library only: it runs
before the venv exists.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / ".venv"
STAMP = VENV / ".memkeeper-installed"
CLAUDE_PINNED = "2.1.197"
CLAUDE_NEWEST = "2.1.332"
#: The folders of the package: a new or removed file needs the (strict) editable install again.
PACKAGE_FOLDERS = ("core", "cli", "plugin", "tui")
DEV_EXTRAS = "[dev,anthropic]"


def venv_python() -> Path:
    """The venv's interpreter (``bin/python``, or ``Scripts\\python.exe`` on Windows)."""
    for candidate in (VENV / "bin" / "python", VENV / "Scripts" / "python.exe"):
        if candidate.exists():
            return candidate
    return VENV / "bin" / "python"


def venv_script(name: str) -> Path:
    """A console script of the venv (``memkeeper-tui``, or ``memkeeper-tui.exe``)."""
    folder = venv_python().parent
    return next((p for p in (folder / name, folder / f"{name}.exe") if p.exists()), folder / name)


def wanted_stamp() -> str:
    """What the installed venv was made from: pyproject.toml, constraints.txt and the package's file list."""
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "constraints.txt", "__init__.py"):  # (the root is the package)
        digest.update((REPO / name).read_bytes())
    files = sorted(
        p.relative_to(REPO).as_posix()
        for folder in PACKAGE_FOLDERS
        for p in (REPO / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    digest.update("\n".join(files).encode())
    return digest.hexdigest()


def call(argv: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` of an argv list (no shell): the venv's, apt-get's or npm's."""
    return subprocess.run(argv, **options)  # noqa: S603 - argv list, no shell


def pip(*args: str) -> None:
    """``pip ARGS`` in the venv; its output is shown only when it fails (setuptools' notice that a strict
    editable install was made is not news to anyone running this)."""
    done = call(
        [str(venv_python()), "-m", "pip", *args], cwd=REPO, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
        raise SystemExit(f"setup: pip {' '.join(args)} failed (exit {done.returncode})")


def install_package(extras: str) -> None:
    """The strict editable install (build/__editable__.*/memkeeper/ is a tree of links to core/, cli/,
    plugin/ and tui/, which Python, mypy and import-linter all read the same way), skipped when the stamp
    says it is current. A dev install also serves --run; a --run install does not serve dev."""
    if not venv_python().exists():
        call([sys.executable, "-m", "venv", str(VENV)], check=True)
    want = wanted_stamp()
    have = STAMP.read_text("utf-8") if STAMP.exists() else ""
    if have in (f"{want} {extras}", f"{want} {DEV_EXTRAS}"):
        return
    pip("install", "--quiet", "--upgrade", "pip")
    for old in (REPO / "build").glob("__editable__.*"):
        shutil.rmtree(old)
    pip(
        "install",
        "--quiet",
        "-c",
        "constraints.txt",
        "-e",
        f".{extras}",
        "--config-settings",
        "editable_mode=strict",
    )
    STAMP.write_text(f"{want} {extras}", "utf-8")


def install_tmux() -> None:
    """tmux, for the TUI smoke tests in a real terminal (skipped where it cannot be had)."""
    if shutil.which("tmux"):
        return
    geteuid = getattr(os, "geteuid", None)
    apt = shutil.which("apt-get")
    if apt and geteuid is not None and geteuid() == 0:
        quiet = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        call([apt, "update", "-qq"], check=True, env=quiet)
        call([apt, "install", "-y", "-qq", "tmux"], check=True, env=quiet, stdout=subprocess.DEVNULL)
    else:
        print("setup: tmux is missing (the tmux smoke tests will be skipped)", file=sys.stderr)


def installed_claude(folder: Path) -> str | None:
    """The version of the Claude Code CLI npm installed in ``folder``, if any."""
    package = folder / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json"
    try:
        return str(json.loads(package.read_text("utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return None


def install_claude_clis() -> None:
    """The real Claude Code CLIs, pinned and newest, for the end-to-end plugin and summarizer tests (installed
    again when the version there is not the one named here)."""
    npm = shutil.which("npm")
    for folder, version in ((".e2e", CLAUDE_PINNED), (".e2e-newest", CLAUDE_NEWEST)):
        if installed_claude(REPO / folder) == version:
            continue
        if npm is None:
            print("setup: npm is missing (the end-to-end tests will be skipped)", file=sys.stderr)
            return
        call(
            [npm, "install", "--silent", "--no-save", "--no-audit", "--no-fund", "--prefix", folder,
             f"@anthropic-ai/claude-code@{version}"],
            check=True, cwd=REPO, stdout=subprocess.DEVNULL,
        )  # fmt: skip


def setup(mode: str) -> None:
    install_package("" if mode == "--run" else DEV_EXTRAS)
    if mode == "--test":
        install_tmux()
        install_claude_clis()


def hand_over(argv: list[str], cwd: Path) -> int:
    """Run ``argv`` in the foreground and return its exit code (Ctrl-C is its to handle, not ours)."""
    proc = subprocess.Popen(argv, cwd=cwd)  # noqa: S603 - our own venv's programs, argv list
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            continue


def main(argv: list[str]) -> int:
    here = Path.cwd()
    action = argv[0] if argv else ""
    if action == "run":
        setup("--run")
        project = Path(os.environ.get("MEMKEEPER_PROJECT") or here)
        tui = str(venv_script("memkeeper-tui"))
        if argv[1:]:
            return hand_over([tui, *argv[1:]], here)
        target = [str(project)] if (project / ".claude" / "memory").is_dir() else ["--demo"]
        return hand_over([tui, *target], here)
    if action == "test":
        setup("--test")
        return hand_over([str(venv_python()), "-m", "pytest", *argv[1:]], REPO)
    if action not in ("", "--run", "--test") or len(argv) > 1:
        print("usage: scripts/setup.py [--run|--test] | run [ARGS] | test [ARGS]", file=sys.stderr)
        return 2
    setup(action)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
