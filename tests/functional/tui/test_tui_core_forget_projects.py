"""core.forget (trash + restore, index follows) and core.projects (stores found from transcripts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memkeeper.core.capture.projects import find_projects
from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.store.trash import ForgetError, forget_archive, forget_l1, list_trash, restore


def _archives(paths: StorePaths) -> list[str]:
    return [e["file"] for e in read_index(paths)["rotatedFiles"]]


def test_forget_archive_moves_files_and_index_entry_then_restore(store: StorePaths) -> None:
    name = _archives(store)[0]
    entry = read_index(store)["rotatedFiles"][0]
    summary = store.archive(name.replace(".md", ".summary.json"))
    assert summary.exists()
    item = forget_archive(store, name)
    assert not store.archive(name).exists() and not summary.exists()
    assert name not in _archives(store)
    assert [t.id for t in list_trash(store)] == [item.id]
    assert (store.trash / item.id / "manifest.json").stat().st_mode & 0o777 == 0o600
    restore(store, item.id)
    assert store.archive(name).exists() and summary.exists()
    assert entry in read_index(store)["rotatedFiles"]
    assert list_trash(store) == []


def test_forget_l1_and_restore(store: StorePaths) -> None:
    name = sorted(p.name for p in store.sessions.iterdir())[0]
    before = (store.sessions / name).read_bytes()
    item = forget_l1(store, name)
    assert not (store.sessions / name).exists()
    restore(store, item.id)
    assert (store.sessions / name).read_bytes() == before


def test_forget_refuses_bad_names_and_restore_refuses_overwrite(store: StorePaths) -> None:
    for bad in ("../x.l1.jsonl", "memory.md", "nope.txt"):
        with pytest.raises(ForgetError):
            forget_l1(store, bad)
        with pytest.raises(ForgetError):
            forget_archive(store, bad)
    name = sorted(p.name for p in store.sessions.iterdir())[0]
    item = forget_l1(store, name)
    (store.sessions / name).write_text("new\n")
    with pytest.raises(ForgetError, match="exists again"):
        restore(store, item.id)
    with pytest.raises(ForgetError):
        restore(store, "missing")


def test_find_projects_reads_cwd_from_transcripts(home: Path, store: StorePaths) -> None:
    projects = home / ".claude" / "projects"
    with_store = projects / "-work-ledgerline"
    without = projects / "-elsewhere"
    with_store.mkdir(parents=True)
    without.mkdir(parents=True)
    lines = [json.dumps({"type": "summary"}), json.dumps({"type": "user", "cwd": str(store.project)})]
    (with_store / "a.jsonl").write_text("\n".join(lines) + "\n")
    (without / "b.jsonl").write_text(json.dumps({"cwd": str(home / "nostore")}) + "\n")
    (projects / "-broken").mkdir()
    (projects / "-broken" / "c.jsonl").write_text("not json\n")
    found = find_projects()
    assert [p.project for p in found] == [store.project]


def test_find_projects_follows_claude_config_dir(
    home: Path, store: StorePaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_dir = tmp_path / "claude-config"
    folder = config_dir / "projects" / "-work-ledgerline"
    folder.mkdir(parents=True)
    (folder / "a.jsonl").write_text(json.dumps({"type": "user", "cwd": str(store.project)}) + "\n")
    assert find_projects() == []  # nothing under ~/.claude
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
    assert [p.project for p in find_projects()] == [store.project]


def test_forget_lines_removes_into_the_trash_and_restore_puts_them_back(store: StorePaths) -> None:
    from memkeeper.core.store.trash import ForgetError, forget_lines

    original = store.memory.read_text()
    lines = original.split("\n")
    number = next(n for n, line in enumerate(lines, 1) if line.startswith("- "))
    with pytest.raises(ForgetError):
        forget_lines(store, "memory.md", number, number, "words that are not on that line")
    item = forget_lines(store, "memory.md", number, number, lines[number - 1][2:])
    assert store.memory.read_text().split("\n").count(lines[number - 1]) == lines.count(lines[number - 1]) - 1
    assert [t.kind for t in list_trash(store)] == ["excerpt"]
    restore(store, item.id)
    assert store.memory.read_text() == original and list_trash(store) == []


def test_restoring_an_excerpt_twice_does_not_duplicate_it(store: StorePaths) -> None:
    """A restore killed after writing the file is completed without inserting the lines again."""
    from memkeeper.core.store import trash as forget

    store.memory.write_text("# m\n- same\n- same\n- other\n")
    original = store.memory.read_text()
    item = forget.forget_lines(store, "memory.md", 2, 2, "same")
    folder = store.trash / item.id
    manifest = forget._read_manifest(folder)
    assert manifest is not None
    forget._restore_excerpt(store, folder, manifest)  # written back, manifest still there (the kill)
    assert store.memory.read_text() == original
    restore(store, item.id)
    assert store.memory.read_text() == original


def test_forget_lines_of_an_archive_marks_its_summary_pending(store: StorePaths) -> None:
    from memkeeper.core.store.memory_index import read_index
    from memkeeper.core.store.trash import forget_lines

    entry = next(e for e in read_index(store)["rotatedFiles"] if e.get("summaryGenerated") is True)
    name = entry["file"]
    lines = store.archive(name).read_text().split("\n")
    number = next(n for n, line in enumerate(lines, 1) if line.startswith("- "))
    forget_lines(store, name, number, number, lines[number - 1][2:])
    again = next(e for e in read_index(store)["rotatedFiles"] if e["file"] == name)
    assert again["summaryGenerated"] is False
