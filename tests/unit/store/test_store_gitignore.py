"""The store's ``.gitignore``, one text in three modes, read by real git: a private store and a
shared one commit the memory and never the runtime state; ``off`` commits nothing; and the
pre-commit check's rule (:func:`is_committed`) agrees with what git does with the file."""

from __future__ import annotations

import subprocess

import pytest

from memkeeper.core.store.gitignore import (
    SESSIONS_LINE,
    Mode,
    gitignore_text,
    is_committed,
    write_gitignore,
)
from memkeeper.core.store.paths import StorePaths

pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0, reason="git is not installed"
)

MEMORY = [
    ".gitignore",
    "memory.md",
    "memory_20261101_090000.md",
    "memory_20261101_090000.summary.json",
    "memory-index.json",
    "project.md",
    "architecture.md",
    "conventions.md",
]
SESSIONS = ["sessions/2026-11-02_100000_s0000000.l1.jsonl", "sessions/2026-11-01_100000_s0000000.l1.jsonl.gz"]
RUNTIME = [
    ".state/counters.json",
    ".state/model-calls.jsonl",
    "logs/memkeeper.log",
    ".search.sqlite3",
    ".search.sqlite3-wal",
    ".memkeeper.lock",
    ".memkeeper-adopt.lock",
    ".set-aside/20261101_090000-abcdef/counters.json",
    ".trash/memory_20261001_090000.md",
    ".backups/doctor-20261101/memory.md",
    "config.json",
    "memory_20261101_090000.summary.raw.txt",  # a model's unusable answer: anything may be in it
    "delta_temp.txt",  # the JS plugin's delta, runtime state of the other writer
    "memory.md.tmp",
    "sessions/notes.txt",
]


def _staged(store: StorePaths) -> set[str]:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=store.project, capture_output=True, text=True, check=True)
        return done.stdout

    git("init", "-q")
    git("add", "-A")
    prefix = ".claude/memory/"
    return {path.removeprefix(prefix) for path in git("diff", "--cached", "--name-only").split()}


@pytest.mark.parametrize(
    ("mode", "sessions", "committed"),
    [
        ("private", False, MEMORY),
        ("shared", False, MEMORY),
        ("shared", True, MEMORY + SESSIONS),
        ("off", False, []),
    ],
)
def test_git_commits_what_the_mode_says_and_the_check_agrees(
    store: StorePaths, mode: Mode, sessions: bool, committed: list[str]
) -> None:
    for rel in MEMORY + SESSIONS + RUNTIME:
        path = store.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel != ".gitignore":
            path.write_text("x\n", encoding="utf-8")
    write_gitignore(store.root, mode, sessions)
    assert (store.root / ".gitignore").read_text("utf-8") == gitignore_text(mode, sessions)
    assert _staged(store) == set(committed)
    if mode != "off":  # (off commits nothing at all; the check's rule is the shared one)
        assert {rel for rel in MEMORY + SESSIONS + RUNTIME if is_committed(rel, sessions)} == set(committed)


def test_only_shared_with_sessions_lets_the_sessions_through() -> None:
    assert gitignore_text("private", sessions=True) == gitignore_text("private")
    assert SESSIONS_LINE not in gitignore_text("shared").splitlines()
    assert SESSIONS_LINE in gitignore_text("shared", sessions=True).splitlines()
    assert gitignore_text("off", sessions=True) == gitignore_text("off")
