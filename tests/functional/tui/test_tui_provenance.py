"""The viewer says "from NAME" beside a section a teammate committed and in the title of a
session they added (a shared store, real git); nothing beside this machine's own."""

from __future__ import annotations

from pathlib import Path

from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.documents import load_document
from memkeeper.tui.model import Target
from memkeeper.tui.widgets.docview import DocView
from tests.functional.tui.scenes import settle
from tests.unit.store.test_provenance import needs_git, shared_store

pytestmark = needs_git


def test_the_document_model_marks_their_section_and_session(tmp_path: Path) -> None:
    paths = shared_store(tmp_path)
    items = load_document(paths, Target("memory")).items
    headings = {item.text: item.origin for item in items if item.kind == "h2"}
    assert headings == {"2026-11-29_0900": "from them", "2026-11-29_1000": "", "2026-11-29_1100": ""}
    assert load_document(paths, Target("l1", "2026-11-29_090000_abc.l1.jsonl")).title.endswith(" · from them")
    assert "from" not in load_document(paths, Target("l1", "2026-11-29_100000_def.l1.jsonl")).title


async def test_the_viewer_draws_from_name_beside_their_heading(tmp_path: Path) -> None:
    paths = shared_store(tmp_path)
    app = MemkeeperApp(paths, watch=False, prefs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        doc = app.screen.query_one(DocView)
        rows = {
            item.text: "".join(s.text for strip in doc._strips(index) for s in strip)
            for index, item in enumerate(doc.items)
            if item.kind == "h2"
        }
        assert "2026-11-29_0900  from them" in rows["2026-11-29_0900"], rows
        assert "from" not in rows["2026-11-29_1000"], rows
        origin = doc.get_component_rich_style("docview--origin")
        assert origin.italic and origin.color is not None  # (its style, from styles/widgets.tcss)
        theirs = next(index for index, item in enumerate(doc.items) if item.origin)
        styled = [
            s.text
            for strip in doc._strips(theirs)
            for s in strip
            if s.style and s.style.color == origin.color
        ]
        assert "from them" in "".join(styled)
