"""The flush's content rules and extractive bullets, on real transcripts refined into L1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.capture.l1 import entries_since, refine_transcript
from memkeeper.core.log.flush_rules import extractive_bullets, is_command, plan_batch, typed_prompts
from memkeeper.core.store.paths import StorePaths

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
REAL = [
    FIXTURES / "spotter_tool_heavy.jsonl",
    FIXTURES / "cc-2.1.197" / "43b864ff-0cc4-405d-97b6-b0657afa9839.jsonl",
    FIXTURES / "cc-2.1.197" / "6876f8f4-be54-4338-8004-f55b6d64f5ad.jsonl",
]


def l1_of(store: StorePaths, transcript: Path) -> list[dict[str, Any]]:
    """The transcript refined into L1, read back as the flush reads it (oldest first)."""
    refine_transcript(store, transcript)
    return entries_since(store, None)


def u(text: str, ts: int = 0, **extra: Any) -> dict[str, Any]:
    return {"ts": f"2026-11-20T10:00:{ts:02d}.000Z", "role": "user", "text": text, **extra}


def a(text: str, ts: int = 1) -> dict[str, Any]:
    return {"ts": f"2026-11-20T10:00:{ts:02d}.000Z", "role": "assistant", "text": text}


@pytest.mark.parametrize("transcript", REAL, ids=lambda p: p.name[:12])
def test_every_typed_prompt_is_in_the_bullets_and_no_command(store: StorePaths, transcript: Path) -> None:
    entries = l1_of(store, transcript)
    bullets = extractive_bullets(entries) or []
    text = "\n".join(bullets)
    prompts = typed_prompts([e for e in entries if not e.get("sidechain")])
    assert prompts
    for prompt in prompts:
        assert " ".join(prompt.split())[:40] in text, (prompt, text)
    commands = [e["text"] for e in entries if is_command(e)]
    for command in commands:
        assert command.split()[0] + " " not in text and not text.endswith(command.split()[0])
    assert all(line.startswith("- [") for line in bullets)


def test_slash_commands_are_marked_in_l1(store: StorePaths) -> None:
    entries = l1_of(store, FIXTURES / "spotter_tool_heavy.jsonl")
    marked = [e for e in entries if e.get("kind") == "command"]
    assert [e["text"] for e in marked] == ["/mcp"]
    entries = l1_of(store, FIXTURES / "cc-2.1.197" / "43b864ff-0cc4-405d-97b6-b0657afa9839.jsonl")
    assert any(e.get("kind") == "command" and e["text"].startswith("/compact") for e in entries)


def test_commands_and_greetings_are_not_requests() -> None:
    entries = [u("hi"), u("/exit", 2), u("/clear", 3, kind="command"), u("!ls", 4), u("thanks!", 5)]
    assert typed_prompts(entries) == []
    assert extractive_bullets(entries) is None
    assert plan_batch(entries, final=True, min_chars=0) == "skip"


def test_repeated_prompts_are_kept_once_and_many_are_all_kept() -> None:
    prompts = [f"please rename the function number {i} in module_{i}.py to snake case" for i in range(12)]
    entries = [u(p, i) for i, p in enumerate(prompts)] + [u(prompts[0], 40)]
    text = "\n".join(extractive_bullets(entries) or [])
    assert text.count("function number 0 ") == 1
    for i in range(12):
        assert f"function number {i} " in text


def test_decisions_problems_fixes_and_files_are_recognised() -> None:
    entries = [
        u("the import of yaml fails on CI, fix it", 0),
        {"ts": "2026-11-20T10:00:01.000Z", "role": "tool", "name": "Bash", "cmd": "pytest -q"},
        {
            "ts": "2026-11-20T10:00:02.000Z",
            "role": "tool_result",
            "result": "error",
            "output": 'Traceback (most recent call last):\n  File "x.py", line 1\nModuleNotFoundError: No module named yaml',
        },
        {"ts": "2026-11-20T10:00:03.000Z", "role": "tool", "name": "Edit", "target": "/repo/pyproject.toml"},
        a("We decided to use tomllib instead of PyYAML. Fixed the import; the suite passes now.", 4),
    ]
    bullets = extractive_bullets(entries) or []
    text = "\n".join(bullets)
    assert "- [request]: The user asked: the import of yaml fails on CI, fix it" in text
    assert "- [problem]: ModuleNotFoundError: No module named yaml" in text
    assert "- [decision]: We decided to use tomllib instead of PyYAML." in text
    assert "- [fix]: Fixed the import; the suite passes now." in text
    assert "- [files]: edited pyproject.toml; 2 tool calls" in text


def test_plan_waits_while_the_session_goes_on_and_not_at_its_end() -> None:
    small = [u("add a --verbose flag to the export command", 0), a("Added --verbose to export.", 1)]
    assert plan_batch(small, final=False, min_chars=1500) == "wait"
    assert plan_batch(small, final=True, min_chars=1500) == "extractive"
    assert plan_batch(small, final=True, min_chars=0) == "model"
    big = [
        e for i in range(4) for e in (u(f"explain part {i} " + "x" * 1400, 2 * i), a("y " * 700, 2 * i + 1))
    ]
    assert plan_batch(big, final=False, min_chars=1500) == "model"
    reads = [{"ts": "2026-11-20T10:00:00.000Z", "role": "tool", "name": "Read", "target": "/a.py"}]
    assert plan_batch(reads, final=True, min_chars=1500) == "skip"  # an empty tool run
