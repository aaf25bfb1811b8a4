"""The store's boundary starts at the project's ``.claude``: a link there (or at ``.claude/memory``)
would move the whole store, so every command refuses in one line and every hook does nothing."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from memkeeper.core.store.paths import StorePaths, ensure_store
from tests.memkeeper_cli import run_hook, run_memkeeper

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "PreCompact", "SessionEnd")
#: Every command that uses a project's store, with the arguments it needs.
COMMANDS = (
    ("save", "a note"),
    ("status",),
    ("rotate",),
    ("reset",),
    ("memory-set", "project", "text"),
    ("memory-get", "project"),
    ("memory-list",),
    ("final",),
    ("dedupe-l1",),
    ("compress",),
    ("sessions",),
    ("summaries",),
    ("flush",),
    ("search", "anything"),
    ("reindex",),
    ("trash",),
    ("forget", "archive", "memory_20260101_000000.md"),
    ("check",),
)


def _tree_sum(folder: Path) -> str:
    """A checksum of every path, mode and content under ``folder`` (links not followed)."""
    digest = hashlib.sha256()
    for parent, dirs, files in sorted(os.walk(folder)):
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(parent, name)
            info = path.lstat()
            digest.update(f"{path.relative_to(folder)} {info.st_mode:o} {info.st_size}".encode())
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(params=[".claude", ".claude/memory"])
def linked(request: pytest.FixtureRequest, project: Path, home: Path) -> tuple[Path, Path, Path]:
    """A project whose ``.claude`` (or ``.claude/memory``) links to a folder with a store elsewhere:
    the project, the link, and the linked folder (a store in ``~/.claude/memory`` for the first)."""
    elsewhere = StorePaths(home)  # ~/.claude/memory: what `.claude -> ~/.claude` reaches
    ensure_store(elsewhere)
    elsewhere.memory.write_text("# Project memory\n\n- [x]: the user's own global notes\n", encoding="utf-8")
    if request.param == ".claude":
        (project / ".claude").symlink_to(home / ".claude")
        return project, project / ".claude", home / ".claude"
    (project / ".claude").mkdir()
    (project / ".claude" / "memory").symlink_to(elsewhere.root)
    return project, project / ".claude" / "memory", elsewhere.root


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_command_refuses_a_linked_claude_folder(
    linked: tuple[Path, Path, Path], command: tuple[str, ...]
) -> None:
    project, link, target = linked
    before = _tree_sum(target)
    done = run_memkeeper("--project", str(project), *command)
    assert _tree_sum(target) == before  # nothing outside changed
    # (``check`` is run by the JS-compatible hooks: it never fails the session)
    assert done.returncode == (0 if command[0] == "check" else 2), done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(link) in lines[0], done.stderr


@pytest.mark.parametrize("event", HOOK_EVENTS)
def test_every_hook_does_nothing_through_a_linked_claude_folder(
    linked: tuple[Path, Path, Path], event: str
) -> None:
    project, _link, target = linked
    before = _tree_sum(target)
    payload = {
        "session_id": "s-1",
        "cwd": str(project),
        "hook_event_name": event,
        "prompt": "what about x notes",
    }
    done = run_hook(event, payload)
    assert done.returncode == 0
    assert done.stdout == b""  # nothing of the linked store reaches the session
    assert _tree_sum(target) == before


def test_a_real_claude_folder_is_used_as_before(project: Path) -> None:
    (project / ".claude").mkdir()
    done = run_memkeeper("--project", str(project), "save", "a note")
    assert done.returncode == 0, done.stderr
    assert "a note" in (project / ".claude" / "memory" / "memory.md").read_text()
