"""Assistant answers are drawn as Markdown; M shows them raw, as written, and back."""

from __future__ import annotations

from textual.binding import Binding

from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.commands import palette_actions
from memkeeper.tui.modals.help import key_sections
from memkeeper.tui.widgets.doc_pane import DocPane
from memkeeper.tui.widgets.docview import DocView
from tests.functional.tui.scenes import SCENES, settle


def _answer_rows(doc: DocView) -> list[str]:
    index = doc.cursor
    return ["".join(segment.text for segment in strip).rstrip() for strip in doc._strips(index)]


async def test_answers_render_as_markdown_and_m_shows_them_raw(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await SCENES["markdown"][1](pilot)
        doc = app.screen.query_one(DocView)
        item = doc.items[doc.cursor]
        assert item.kind == "assistant" and "**3 modules**" in item.text
        rendered = _answer_rows(doc)
        assert any("3 modules" in row for row in rendered)
        assert not any("**" in row or "`" in row for row in rendered), rendered
        assert any("• app/main.py" in row for row in rendered), rendered  # a list, one row per bullet
        assert rendered[0].lstrip("┆ ").startswith(item.prefix.strip()[:5])  # the time leads the answer
        await pilot.press("M")
        await settle(pilot)
        raw = _answer_rows(doc)
        flat = " ".join(" ".join(raw).split())
        assert "**3 modules**" in flat and any(row.startswith("- `app/main.py`") for row in raw)
        assert doc.items[doc.cursor] is item  # the cursor stays on the answer
        assert "[raw]" in str(app.screen.query_one("#viewer-title").render())
        await pilot.press("M")
        await settle(pilot)
        assert _answer_rows(doc) == rendered


async def test_matches_are_highlighted_inside_rendered_markdown(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await SCENES["markdown"][1](pilot)
        doc = app.screen.query_one(DocView)
        answer = doc.cursor
        doc.set_terms(("worker",))
        await settle(pilot)
        assert answer in doc.hits
        match = doc.get_component_rich_style("docview--match")
        marked = [
            s.text
            for strip in doc._strips(answer)
            for s in strip
            if s.style and s.style.bgcolor == match.bgcolor
        ]
        assert marked == ["worker"]


def test_the_toggle_is_described_in_f1_and_the_palette(store: StorePaths) -> None:
    keys = {b.key: b.description for _, bindings in key_sections() for b in bindings}
    assert "Markdown" in keys["M"]
    assert any(isinstance(b, Binding) and b.action == "toggle_markdown" for b in DocPane.BINDINGS)
    app = MemkeeperApp(store, watch=False, prefs=False)
    assert any("Markdown" in name for name, _, _ in palette_actions(app))
