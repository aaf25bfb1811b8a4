"""Subagent work sits under the Task (Agent) call that started it, in the viewer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memkeeper.core.capture.l1 import refine_transcript
from memkeeper.core.capture.l1_entries import read_l1
from memkeeper.core.store.paths import StorePaths, ensure_store
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.l1_items import l1_items
from memkeeper.tui.model import Target
from memkeeper.tui.widgets.docview import DocView
from memkeeper.tui.widgets.tier_tree import TierTree
from tests.functional.tui.scenes import settle

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts" / "cc-2.1.197"
#: A real Claude Code 2.1.197 session whose Agent call ran a subagent (its own transcript
#: in ``<session>/subagents/``); the refiner writes the subagent's entries after the main ones.
WITH_AGENT = FIXTURES / "6876f8f4-be54-4338-8004-f55b6d64f5ad.jsonl"


def _real_store(tmp_path: Path) -> StorePaths:
    paths = StorePaths(tmp_path / "project")
    paths.project.mkdir()
    ensure_store(paths)
    refine_transcript(paths, WITH_AGENT)
    return paths


def test_a_real_subagent_is_nested_under_its_agent_call(tmp_path: Path) -> None:
    paths = _real_store(tmp_path)
    entries = list(read_l1(next(paths.sessions.glob("*.l1.jsonl"))))
    written = [bool(e.get("sidechain")) for e in entries]
    assert written == sorted(written), "the refiner writes the subagent's entries last"
    items = l1_items(entries)
    call = next(i for i, item in enumerate(items) if item.kind == "tool" and "Agent" in item.prefix)
    side = [i for i, item in enumerate(items) if item.sidechain]
    assert side == list(range(call + 1, call + 1 + len(side))) and len(side) == 2
    assert "2 subagent entries" in items[call].text
    assert "a7dd28e2" in items[call].body
    # After the subagent, the main conversation goes on.
    assert items[side[-1] + 1].kind == "assistant" and not items[side[-1] + 1].sidechain


def _entry(ts: str, role: str, **fields: Any) -> dict[str, Any]:
    return {"ts": f"2026-11-22T10:{ts}.000Z", "role": role, **fields}


def test_parallel_tasks_take_their_own_subagents_by_time_when_the_id_was_clipped() -> None:
    side_a = {"sidechain": True, "agentId": "aaaa1111"}
    side_b = {"sidechain": True, "agentId": "bbbb2222"}
    entries = [
        _entry("00:00", "user", text="two jobs"),
        _entry("00:01", "tool", name="Task", detail="job A", tool_use_id="t1"),
        _entry("00:05", "tool_result", tool_use_id="t1", output="A done … (clipped)"),
        _entry("00:06", "tool", name="Task", detail="job B", tool_use_id="t2"),
        _entry("00:09", "tool_result", tool_use_id="t2", output="B done … (clipped)"),
        _entry("00:10", "assistant", text="both done"),
        _entry("00:02", "user", text="do A", **side_a),
        _entry("00:03", "tool", name="Read", target="a.py", tool_use_id="r1", **side_a),
        _entry("00:04", "tool_result", tool_use_id="r1", **side_a),
        _entry("00:07", "user", text="do B", **side_b),
        _entry("00:08", "assistant", text="B answer", **side_b),
    ]
    order = [(item.text.split("  ")[0], item.sidechain) for item in l1_items(entries)]
    assert order == [
        ("two jobs", False),
        ("job A", False),
        ("do A", True),
        ("a.py", True),  # the subagent's own tool call keeps its result folded in
        ("job B", False),
        ("do B", True),
        ("B answer", True),
        ("both done", False),
    ]


def test_a_subagent_no_call_claims_stays_in_place_and_marked() -> None:
    entries = [
        _entry("00:00", "user", text="hello"),
        _entry("00:01", "user", text="orphan work", sidechain=True, agentId="cccc3333"),
        _entry("00:02", "assistant", text="bye"),
    ]
    items = l1_items(entries)
    assert [item.text for item in items] == ["hello", "orphan work", "bye"]
    assert "[subagent cccc3333]" in items[1].prefix


async def test_the_viewer_shows_the_subagent_under_its_call_and_a_hit_opens_its_entry(
    tmp_path: Path,
) -> None:
    paths = _real_store(tmp_path)
    name = next(paths.sessions.glob("*.l1.jsonl")).name
    app = MemkeeperApp(paths, watch=False, prefs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.query_one(TierTree).select_target(Target("l1", name))
        await settle(pilot)
        doc = app.screen.query_one(DocView)
        shown = doc.rendered_text()
        call = shown.index("Inspect repo")
        assert call < shown.index("SUBTASK") < shown.index("Tool ran fine")
        assert "┆" in shown.split("SUBTASK")[0].rsplit("\n", 1)[-1]  # drawn as nested
        # A search hit on the subagent's answer (its source line is the file's last) lands on it.
        last_line = max(item.line or 0 for item in doc.items)
        doc.goto_line(last_line)
        await pilot.pause()
        assert doc.items[doc.cursor].text.startswith("Subagent answer")
