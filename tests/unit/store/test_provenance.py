"""core/sharing/provenance.py: who a section or session came from, read from real git; and no
git process at all when the store is not shared."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memkeeper.core.sharing import provenance
from memkeeper.core.sharing.share import store_gitattributes_text
from memkeeper.core.store.paths import StorePaths, ensure_store

needs_git = pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0, reason="git is not installed"
)

THEIRS = "\n## 2026-11-29_0900\n- [note]: theirs\n"
MINE = "\n## 2026-11-29_1000\n- [note]: mine\n"
UNCOMMITTED = "\n## 2026-11-29_1100\n- [note]: not committed yet\n"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def as_user(repo: Path, name: str) -> None:
    git(repo, "config", "user.name", name)
    git(repo, "config", "user.email", f"{name}@example.invalid")


def shared_store(tmp_path: Path) -> StorePaths:
    """A repository whose memory.md holds a section ``them`` committed, one ``me`` committed
    (the machine's user now) and one not committed yet; and a session ``them`` added."""
    git(tmp_path, "init", "-q")
    paths = StorePaths(tmp_path)
    ensure_store(paths)
    (paths.root / ".gitattributes").write_text(store_gitattributes_text(), "utf-8")
    as_user(tmp_path, "them")
    paths.memory.write_text(THEIRS, "utf-8")
    (paths.sessions / "2026-11-29_090000_abc.l1.jsonl").write_text(
        '{"role": "user", "text": "hi"}\n', "utf-8"
    )
    git(tmp_path, "add", "-f", str(paths.root / ".gitattributes"), str(paths.memory), str(paths.sessions))
    git(tmp_path, "commit", "-q", "-m", "them")
    as_user(tmp_path, "me")
    paths.memory.write_text(THEIRS + MINE, "utf-8")
    (paths.sessions / "2026-11-29_100000_def.l1.jsonl").write_text(
        '{"role": "user", "text": "yo"}\n', "utf-8"
    )
    git(tmp_path, "add", "-f", str(paths.memory), str(paths.sessions))
    git(tmp_path, "commit", "-q", "-m", "me")
    paths.memory.write_text(THEIRS + MINE + UNCOMMITTED, "utf-8")
    return paths


@needs_git
def test_sections_and_sessions_from_someone_else_are_named_mine_are_not(tmp_path: Path) -> None:
    paths = shared_store(tmp_path)
    authors = provenance.section_authors(paths, "memory.md")
    assert list(authors) == [2]  # the header line of their section only
    assert (authors[2].name, authors[2].email, authors[2].label()) == (
        "them",
        "them@example.invalid",
        "from them",
    )
    assert len(authors[2].commit) == 7 and authors[2].date.endswith("Z")
    assert provenance.entry_from(paths, "memory.md", 2) == authors[2]
    assert provenance.entry_from(paths, "memory.md", 1) == authors[2]  # the blank line before it
    assert provenance.entry_from(paths, "memory.md", 3) == authors[2]  # a line inside it
    assert provenance.entry_from(paths, "memory.md", 6) is None  # mine
    assert provenance.entry_from(paths, "memory.md", 9) is None  # not committed yet
    theirs = provenance.entry_from(paths, "sessions/2026-11-29_090000_abc.l1.jsonl", 1)
    assert theirs is not None and theirs.name == "them"
    assert provenance.entry_from(paths, "sessions/2026-11-29_100000_def.l1.jsonl", 1) is None


@needs_git
def test_answers_are_cached_until_the_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = shared_store(tmp_path)
    calls: list[list[str]] = []
    real = subprocess.run

    def counting(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        calls.append(argv)
        return real(argv, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(subprocess, "run", counting)
    assert provenance.section_authors(paths, "memory.md")
    blames = len([c for c in calls if "blame" in c])
    assert provenance.section_authors(paths, "memory.md") and provenance.entry_from(paths, "memory.md", 2)
    assert len([c for c in calls if "blame" in c]) == blames  # same mtime and size: no new blame
    with paths.memory.open("a", encoding="utf-8") as handle:
        handle.write("- one more line\n")
    assert provenance.section_authors(paths, "memory.md")
    assert len([c for c in calls if "blame" in c]) == blames + 1


def test_a_store_that_is_not_shared_runs_no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = StorePaths(tmp_path)
    ensure_store(paths)
    paths.memory.write_text(THEIRS, "utf-8")
    (paths.sessions / "2026-11-29_090000_abc.l1.jsonl").write_text("{}\n", "utf-8")

    def no_process(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("git was run for a store that is not shared")

    monkeypatch.setattr(subprocess, "run", no_process)
    monkeypatch.setattr(subprocess, "Popen", no_process)
    assert provenance.section_authors(paths, "memory.md") == {}
    assert provenance.entry_from(paths, "memory.md", 2) is None
    assert provenance.entry_from(paths, "sessions/2026-11-29_090000_abc.l1.jsonl", 1) is None


def test_blame_porcelain_is_read_line_by_line() -> None:
    sha, zero = "a" * 40, "0" * 40
    porcelain = (
        f"{sha} 1 1 2\nauthor Ann\nauthor-mail <ann@x>\nauthor-time 1795000000\nauthor-tz +0000\n"
        "summary s\nfilename memory.md\n\t## 2026-11-29_0900\n"
        f"{sha} 2 2\nauthor Ann\nauthor-mail <ann@x>\nauthor-time 1795000000\nfilename memory.md\n\t- a\n"
        f"{zero} 3 3 1\nauthor Not Committed Yet\nauthor-mail <not.committed.yet>\nauthor-time 1\n"
        "filename memory.md\n\t## 2026-11-29_1000\n"
    )
    lines = provenance.parse_blame(porcelain)
    date = datetime.fromtimestamp(1795000000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert lines[1] == ("header", provenance.Author("Ann", "ann@x", "aaaaaaa", date))
    assert lines[2][0] == "text"
    assert lines[3] == ("header", None)
