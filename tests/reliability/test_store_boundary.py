"""The store never follows a symbolic link, and no store is made in /, $HOME or ~/.claude.

For each place a link can sit inside ``.claude/memory`` (each file and folder of the
store), a realistic store gets that link to a file or folder outside, then every kind of
operation runs on it: hooks (SessionStart, PostToolUse, SessionEnd), ``save``,
``memory-set``, ``rotate --force``, ``compress``, ``forget``, the flush and summary jobs,
``reindex``. Afterwards nothing outside has changed (content, mode, listing), the link is
still the same link, the CLI said so in one line, and ``doctor`` reports it.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from memkeeper.cli.main import main as cli_main
from memkeeper.core.store import boundary
from memkeeper.core.store.atomic import atomic_write_json
from memkeeper.core.store.jobs import run_job
from memkeeper.core.store.paths import StorePaths, ensure_store
from memkeeper.plugin import hook
from tests.reliability.links import link_in_place

SESSION = "5ec12e75-2222-4000-8000-000000000002"
L1_NAME = "2026-05-01_100000_5ec12e75.l1.jsonl"
ARCHIVE = "memory_20260501_100000.md"

#: name inside the store -> whether the outside target is a folder
PLACEMENTS: dict[str, bool] = {
    "memory.md": False,
    ARCHIVE: False,
    "memory_20260501_100000.summary.json": False,
    "memory-index.json": False,
    "config.json": False,
    "project.md": False,
    ".memkeeper.lock": False,
    ".search.sqlite3": False,
    "sessions": True,
    f"sessions/{L1_NAME}": False,
    ".trash": True,
    ".backups": True,
    ".state": True,
    ".state/counters.json": False,
    "logs": True,
    "logs/memkeeper.log": False,
}


def _fill(store: StorePaths) -> None:
    """A small store with every kind of file."""
    store.memory.write_text("## 2026-05-01\n- [decision]: use sqlite\n" * 40)
    (store.root / ARCHIVE).write_text("## 2026-04-01\n- [note]: archived\n")
    atomic_write_json(
        store.index, {"version": 1, "current": "memory.md", "rotatedFiles": [{"file": ARCHIVE}]}
    )
    atomic_write_json(store.config, {"summarizer": {"backend": "extractive"}})
    (store.sessions / L1_NAME).write_text(
        json.dumps({"ts": "2026-05-01T10:00:00.000Z", "role": "user", "text": "hello", "session": SESSION})
        + "\n"
    )
    old = 1_600_000_000
    os.utime(store.sessions / L1_NAME, (old, old))


def _outside(tmp_path: Path, folder: bool) -> Path:
    target = tmp_path / "outside" / ("dir" if folder else "file.txt")
    target.parent.mkdir(parents=True, exist_ok=True)
    if folder:
        target.mkdir()
        (target / "keep.txt").write_text("outside content\n")
        (target / L1_NAME).write_text('{"outside": true}\n')
        target.chmod(0o755)
    else:
        target.write_text("outside content\n")
        target.chmod(0o644)
    return target


def _snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    found: dict[str, tuple[int, bytes]] = {}
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        data = path.read_bytes() if stat.S_ISREG(info.st_mode) else b""
        found[str(path.relative_to(root.parent))] = (stat.S_IMODE(info.st_mode), data)
    return found


def _cli(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = cli_main(list(args))
    return code, err.getvalue()


def _hook(event: str, project: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    payload = {"session_id": SESSION, "cwd": str(project), "hook_event_name": event, "source": "startup"}
    monkeypatch.setattr(hook, "read_stdin", lambda: json.dumps(payload).encode())
    with redirect_stdout(io.StringIO()):
        return hook.main([event])


@pytest.mark.parametrize("placement", list(PLACEMENTS))
def test_a_link_in_the_store_is_never_followed(
    placement: str, store: StorePaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(store)
    target = _outside(tmp_path, PLACEMENTS[placement])
    link = link_in_place(store.root, placement, target)
    before = _snapshot(target.parent)
    project = str(store.project)

    for event in ("SessionStart", "PostToolUse", "Stop", "PreCompact", "SessionEnd"):
        assert _hook(event, store.project, monkeypatch) == 0
    errors: list[str] = []
    for args in (
        ("save", "remember this"),
        ("memory-set", "project", "the project"),
        ("rotate", "--force"),
        ("compress", "--days", "0"),
        ("forget", "session", L1_NAME),
        ("status",),
        ("reindex",),
    ):
        code, err = _cli("--project", project, *args)
        assert code != 0, args
        errors.append(err)
    for kind in ("flush", "summary", "l1"):
        with pytest.raises(boundary.StoreLinkError):
            run_job(store, kind, {"session_id": SESSION})

    assert _snapshot(target.parent) == before
    assert link.is_symlink() and os.readlink(link) == str(target)
    for err in errors:
        assert len(err.strip().splitlines()) == 1 and "symbolic link" in err and str(link) in err, err
    assert str(link) in boundary.store_links(store.root)
    code, out = _doctor(project)
    assert code != 0 and str(link) in out


def _doctor(project: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(out):
        code = cli_main(["--project", project, "doctor"])
    return code, out.getvalue()


def test_the_store_folder_itself_as_a_link_is_refused(tmp_path: Path, project: Path) -> None:
    target = _outside(tmp_path, True)
    (project / ".claude").mkdir()
    (project / ".claude" / "memory").symlink_to(target)
    before = _snapshot(target.parent)
    code, err = _cli("--project", str(project), "save", "note")
    assert code != 0 and "symbolic link" in err
    assert _snapshot(target.parent) == before


REFUSED: dict[str, Callable[[Path], Path]] = {
    "root": lambda home: Path("/"),
    "home": lambda home: home,
    "claude": lambda home: home / ".claude" / "projects" / "x",
}


@pytest.mark.parametrize("where", list(REFUSED))
def test_no_store_in_root_home_or_claude_folder(
    where: str, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = REFUSED[where](home)
    if where != "root":
        folder.mkdir(parents=True, exist_ok=True)
    before = sorted(p.name for p in folder.iterdir()) if where == "root" else []
    for event in ("SessionStart", "PostToolUse", "SessionEnd"):
        assert _hook(event, folder, monkeypatch) == 0
    assert not (folder / ".claude" / "memory").exists() or where == "claude"
    if where == "claude":
        assert not (folder / ".claude").exists()
    else:
        assert not (folder / ".claude" / "memory").exists()
    if where == "root":
        assert sorted(p.name for p in folder.iterdir()) == before
    code, err = _cli("--project", str(folder), "save", "note")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "no memory store" in err
    capsys.readouterr()
    monkeypatch.chdir(folder)
    assert cli_main(["check"]) == 0
    assert "no memory store" in capsys.readouterr().err
    assert not (folder / ".claude" / "memory").exists() or where == "home"


def test_a_project_folder_is_not_refused(project: Path, home: Path) -> None:
    assert boundary.refused_project(project) is None
    assert boundary.refused_project(home) == "the home folder"
    assert boundary.refused_project(home / ".claude") == "a folder inside ~/.claude"
    ensure_store(StorePaths(project))
    assert boundary.store_links(StorePaths(project).root) == []


def test_check_path_sees_links_above_the_file(store: StorePaths, tmp_path: Path) -> None:
    target = _outside(tmp_path, True)
    (store.root / "logs").rmdir()
    (store.root / "logs").symlink_to(target)
    with pytest.raises(boundary.StoreLinkError):
        boundary.check_path(store.root / "logs" / "memkeeper.log")
    boundary.check_path(store.root / "memory.md")  # no link on that path
    boundary.check_path(tmp_path / "outside" / "anything")  # not in a store: not checked
    assert sys.platform != "win32"


def test_session_start_never_reads_a_linked_session_file(
    store: StorePaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SessionStart does not list every L1 file for links; it reads the newest ones with
    O_NOFOLLOW, so a linked one (the newest, here) puts nothing of its target into the context."""
    _fill(store)
    target = tmp_path / "outside" / "theirs.l1.jsonl"
    target.parent.mkdir()
    outside = {"ts": "2026-05-03T10:00:00.000Z", "role": "user", "text": "OUTSIDE-MARKER", "session": "s3"}
    target.write_text(json.dumps(outside) + "\n")
    (store.sessions / "2026-05-03_100000_bbbbbbbb.l1.jsonl").symlink_to(target)
    payload = {"session_id": SESSION, "cwd": str(store.project), "hook_event_name": "SessionStart"}
    monkeypatch.setattr(hook, "read_stdin", lambda: json.dumps(payload).encode())
    out = io.StringIO()
    with redirect_stdout(out):
        assert hook.main(["SessionStart"]) == 0
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "OUTSIDE-MARKER" not in context
