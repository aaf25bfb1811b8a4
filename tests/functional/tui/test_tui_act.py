"""Acting on what was found: copy, $EDITOR / $PAGER, export, remove an entry into the trash, regenerate."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.store.trash import list_trash
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.model import Target
from memkeeper.tui.screens.browse import BrowseScreen
from memkeeper.tui.screens.trash import TrashScreen
from memkeeper.tui.widgets.docview import DocView
from memkeeper.tui.widgets.tier_tree import TierTree
from tests.functional.tui.scenes import settle

SIZE = (80, 24)


def _doc(app: MemkeeperApp) -> DocView:
    return app.screen.query_one(DocView)


async def _open(app: MemkeeperApp, pilot: Pilot[None], target: Target) -> DocView:
    await settle(pilot)
    app.screen.query_one(TierTree).select_target(target)
    await settle(pilot)
    doc = _doc(app)
    doc.focus()
    return doc


def _session_with_agent(store: StorePaths) -> str:
    names = sorted(p.name for p in store.sessions.glob("*.l1.jsonl"))
    return next(n for n in names if '"sidechain"' in (store.sessions / n).read_text())


async def test_copy_entry_session_id_and_resume_command(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        doc = await _open(app, pilot, Target("memory"))
        await pilot.press("y")
        assert app.clipboard == doc.items[doc.cursor].text
        await pilot.press("R")  # not a session: says so, copies nothing new
        assert app.clipboard == doc.items[doc.cursor].text
        name = _session_with_agent(store)
        await _open(app, pilot, Target("l1", name))
        document = app.screen.query_one("DocPane").document  # type: ignore[attr-defined]
        assert document.session and name.split("_")[-1].split(".")[0] in document.session
        await pilot.press("i")
        assert app.clipboard == document.session
        await pilot.press("R")
        assert app.clipboard == f"claude --resume {document.session}"


@pytest.fixture
def recorder(tmp_path: Path) -> tuple[Path, Path]:
    """An $EDITOR that records its arguments (and appends a line to the file it is given)."""
    log = tmp_path / "editor.log"
    script = tmp_path / "record-editor"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "open(sys.argv[-1], 'a').write('\\n- [edited]: a line the editor wrote\\n')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


async def test_editor_and_pager_open_the_file_at_the_entry(
    store: StorePaths, recorder: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    script, log = recorder
    monkeypatch.setenv("EDITOR", str(script))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("PAGER", str(script))
    app = MemkeeperApp(store, watch=False)

    @contextlib.contextmanager
    def suspended() -> Iterator[None]:  # the headless driver cannot suspend; a terminal can (tmux test)
        yield

    monkeypatch.setattr(app, "suspend", suspended)
    async with app.run_test(size=SIZE) as pilot:
        doc = await _open(app, pilot, Target("memory"))
        line = doc.items[doc.cursor].line
        await pilot.press("e")
        await settle(pilot)
        assert log.read_text().split() == [str(store.memory)]  # unknown editors get no +line
        assert "a line the editor wrote" in store.memory.read_text()
        await settle(pilot)
        assert any("a line the editor wrote" in item.text for item in _doc(app).items)  # reloaded
        assert line is not None


def test_editor_argv_puts_known_editors_at_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from memkeeper.tui.store_actions import _editor_argv

    monkeypatch.setenv("EDITOR", "vim -u NONE")
    monkeypatch.delenv("VISUAL", raising=False)
    assert _editor_argv(Path("/x/memory.md"), 12, pager=False) == ["vim", "-u", "NONE", "+12", "/x/memory.md"]
    monkeypatch.setenv("PAGER", "less -R")
    assert _editor_argv(Path("/x/m.md"), 3, pager=True) == ["less", "-R", "+3", "/x/m.md"]


async def test_export_session_as_markdown(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        name = _session_with_agent(store)
        await _open(app, pilot, Target("l1", name))
        await pilot.press("ctrl+s")
        await settle(pilot)
    stem = name.split(".l1.jsonl")[0]
    exported = store.project / f"{stem}.md"
    text = exported.read_text()
    assert text.startswith(f"# Session {stem}") and "## You" in text and "### Claude" in text
    assert oct(os.stat(exported).st_mode & 0o777) == "0o600"


async def test_remove_a_bullet_into_the_trash_and_restore_it_with_enter(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        doc = await _open(app, pilot, Target("memory"))
        bullet = next(i for i, item in enumerate(doc.items) if item.kind == "bullet")
        text = doc.items[bullet].text
        shown = sum(item.text == text for item in doc.items)  # the demo may repeat a routine bullet
        doc.move_to(bullet)
        original = store.memory.read_text()
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("y")  # confirm
        await settle(pilot)
        assert store.memory.read_text().count(text) == original.count(text) - 1  # that bullet, not its twins
        trash = list_trash(store)
        assert trash[0].kind == "excerpt"
        await settle(pilot)
        assert sum(item.text == text for item in _doc(app).items) == shown - 1  # the viewer reloaded
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TrashScreen)
        await pilot.press("enter")  # Enter restores, as the title says
        await settle(pilot)
        assert store.memory.read_text() == original


async def test_remove_a_section_of_an_archive_marks_its_summary_stale(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        archive = next(a for a in app.snapshot.archives if a.summary_state == "ok")  # type: ignore[union-attr]
        doc = await _open(app, pilot, Target("archive", archive.name))
        section = next(i for i, item in enumerate(doc.items) if item.anchor)
        heading = doc.items[section]
        doc.move_to(section)
        await pilot.press("x", "y")
        await settle(pilot)
        text = store.archive(archive.name).read_text()
        assert f"## {heading.text}" not in text
        entry = next(e for e in read_index(store)["rotatedFiles"] if e["file"] == archive.name)
        assert entry["summaryGenerated"] is False


async def test_remove_refuses_outside_memory_and_archives(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        archive = app.snapshot.archives[0].name  # type: ignore[union-attr]
        await _open(app, pilot, Target("summary", archive))
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen) and not list_trash(store)


async def test_regenerate_an_existing_summary(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []

    def fake_generate(paths: StorePaths, archive: str, backend: str | None = None) -> object:
        made.append(archive)
        return type("S", (), {"generator": "extractive"})()

    monkeypatch.setattr("memkeeper.core.summaries.summary.generate_summary", fake_generate)
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        archive = next(a for a in app.snapshot.archives if a.summary_state == "ok")  # type: ignore[union-attr]
        app.screen.query_one(TierTree).select_target(Target("summary", archive.name))
        await settle(pilot)
        app.screen.query_one(TierTree).focus()
        await pilot.press("g")
        await settle(pilot)
    assert made == [archive.name]


async def test_follow_mode_keeps_the_end_of_a_growing_file_in_view(store: StorePaths) -> None:
    from memkeeper.core.store.atomic import append_text

    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        doc = await _open(app, pilot, Target("memory"))
        doc.move_to(0, top=True)
        await pilot.press("f")
        assert doc.cursor == len(doc.items) - 1
        append_text(store.memory, "\n- [follow]: a line written while following\n")
        app.reload_snapshot(frozenset({store.memory}))
        await settle(pilot)
        doc = _doc(app)
        assert doc.items[doc.cursor].text.endswith("a line written while following")
        assert "[following]" in str(app.screen.query_one("#viewer-title").render())
