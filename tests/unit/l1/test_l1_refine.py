"""Refinement of real transcripts: every one works, and counts agree with an independent scan."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.capture import l1
from memkeeper.core.capture.l1_entries import read_l1
from memkeeper.core.capture.transcript import read_events
from memkeeper.core.store.paths import StorePaths
from tests.unit.l1.l1_kit import BIG_TRANSCRIPT, FIXTURES, all_fixture_transcripts, shared_transcripts

JS_KEYS = {
    "user": ["ts", "role", "text"],
    "assistant": ["ts", "role", "text"],
    "tool": ["ts", "role", "name"],
    "tool_result": ["ts", "role", "tool_use_id", "result"],
}


def _entries(path: Path) -> list[dict[str, Any]]:
    return list(read_l1(path))


def _check_entry_shape(entry: dict[str, Any], session: str) -> None:
    role = entry["role"]
    assert list(entry)[: len(JS_KEYS[role])] == JS_KEYS[role]
    assert list(entry)[-1] == "session"
    assert entry["session"] == session
    if entry.get("sidechain"):
        assert entry["sidechain"] is True


@pytest.mark.parametrize("transcript", all_fixture_transcripts(), ids=lambda p: p.name[:20])
def test_every_fixture_transcript_refines(store: StorePaths, transcript: Path) -> None:
    result = l1.refine_transcript(store, transcript)
    assert result.broken_lines == 0
    assert result.l1_path is not None and result.l1_path.exists()
    assert result.new_entries == result.total_entries > 0
    raw = result.l1_path.read_bytes()
    assert raw.endswith(b"\n")
    for line in raw.splitlines():
        entry = json.loads(line)
        assert line.decode("utf-8") == json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        _check_entry_shape(entry, result.session_id)
    assert result.l1_path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("transcript", shared_transcripts(), ids=lambda p: p.name[:20])
def test_every_shared_transcript_refines(store: StorePaths, transcript: Path) -> None:
    result = l1.refine_transcript(store, transcript)
    assert result.broken_lines == 0
    assert result.total_entries > 0
    again = l1.refine_transcript(store, transcript)
    assert again.new_entries == 0 and again.total_entries == result.total_entries


def test_shared_transcripts_are_present_or_skipped() -> None:
    if not shared_transcripts():
        pytest.skip("shared transcripts are not beside the repository (../shared/transcripts)")
    assert len(shared_transcripts()) >= 8


def _independent_counts(paths: list[Path]) -> dict[str, Any]:
    """Typed prompts and tool calls counted by plain JSON scanning, without the parser."""
    prompts: list[str] = []
    tool_ids: list[str] = []
    result_ids: list[str] = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            content = (record.get("message") or {}).get("content")
            if record.get("type") == "user" and isinstance(content, str):
                if record.get("isMeta") or record.get("isCompactSummary"):
                    continue
                if content.startswith("<local-command") or "<command-name>" in content:
                    continue
                prompts.append(content.strip())
            if record.get("type") == "user" and isinstance(content, list):
                result_ids += [b["tool_use_id"] for b in content if b.get("type") == "tool_result"]
            if record.get("type") == "assistant" and isinstance(content, list):
                tool_ids += [b["id"] for b in content if b.get("type") == "tool_use"]
    return {"prompts": prompts, "tool_ids": tool_ids, "result_ids": result_ids}


def _check_counts(store: StorePaths, transcript: Path, subagents: list[Path]) -> None:
    expected = _independent_counts([transcript, *subagents])
    result = l1.refine_transcript(store, transcript)
    assert result.l1_path is not None
    entries = _entries(result.l1_path)
    user_texts = [e["text"] for e in entries if e["role"] == "user"]
    for prompt in expected["prompts"]:
        assert prompt in user_texts
    tools = [e for e in entries if e["role"] == "tool"]
    assert len(tools) == len(expected["tool_ids"])
    assert sorted(e["tool_use_id"] for e in tools) == sorted(expected["tool_ids"])
    results = [e for e in entries if e["role"] == "tool_result"]
    assert sorted(e["tool_use_id"] for e in results) == sorted(expected["result_ids"])
    sidechain_tools = [e for e in tools if e.get("sidechain")]
    assert len(sidechain_tools) == len(_independent_counts(subagents)["tool_ids"]) if subagents else True


def test_counts_match_independent_scan_on_fixture(store: StorePaths) -> None:
    _check_counts(store, FIXTURES / "spotter_tool_heavy.jsonl", [])


def test_counts_match_independent_scan_on_long_real_session(store: StorePaths) -> None:
    if not BIG_TRANSCRIPT.exists():
        pytest.skip("the 2.7 MB spotter transcript is not beside the repository (../shared/transcripts)")
    subagents = [BIG_TRANSCRIPT.with_suffix("") / "subagents" / "agent-aac57f5.jsonl"]
    _check_counts(store, BIG_TRANSCRIPT, subagents)
    entries = list(l1.entries_since(store, None))
    assert sum(1 for e in entries if e["role"] == "tool") == 254  # 242 in the session + 12 in its subagent
    assert sum(1 for e in entries if e["role"] == "user" and not e.get("sidechain")) >= 3


def test_typed_prompts_and_slash_commands_are_kept(store: StorePaths) -> None:
    transcript = FIXTURES / "cc-2.1.197" / "43b864ff-0cc4-405d-97b6-b0657afa9839.jsonl"
    result = l1.refine_transcript(store, transcript)
    assert result.l1_path is not None
    users = [e["text"] for e in _entries(result.l1_path) if e["role"] == "user"]
    assert users == [
        "USE_TOOL: run echo. Ünïcödé 日本語 🚀",
        "second prompt after resume",
        "/compact keep the secret word",
    ]
    raw = result.l1_path.read_text(encoding="utf-8")
    assert "日本語 🚀" in raw  # literal, not \u escapes
    assert "local-command" not in raw and "Caveat" not in raw and "continued from a previous" not in raw
    tool = next(e for e in _entries(result.l1_path) if e["role"] == "tool")
    assert tool == {
        "ts": tool["ts"],
        "role": "tool",
        "name": "Bash",
        "cmd": "echo hello-from-mock",
        "tool_use_id": "toolu_mock_4",
        "session": "43b864ff-0cc4-405d-97b6-b0657afa9839",
    }
    assert result.l1_path.name.endswith("_43b864ff.l1.jsonl")
    assert result.l1_path.name.startswith("2026-11-22_021204")


def test_subagent_work_is_marked_sidechain(store: StorePaths) -> None:
    transcript = FIXTURES / "cc-2.1.197" / "6876f8f4-be54-4338-8004-f55b6d64f5ad.jsonl"
    result = l1.refine_transcript(store, transcript)
    assert result.sources == 2
    assert result.l1_path is not None
    entries = _entries(result.l1_path)
    side = [e for e in entries if e.get("sidechain")]
    assert [e["role"] for e in side] == ["user", "assistant"]
    assert all(e["agentId"] == "a7dd28e2c92b56537" for e in side)
    assert side[0]["text"] == "SUBTASK: list nothing, just answer OK"
    main = [e for e in entries if not e.get("sidechain")]
    assert "sidechain" not in main[0] and "agentId" not in main[0]
    agent_call = next(e for e in main if e["role"] == "tool")
    assert agent_call["name"] == "Agent" and agent_call["params"] == "description,prompt,subagent_type"


def test_synthetic_error_reply_and_stop_feedback_are_not_entries(store: StorePaths) -> None:
    no_login = l1.refine_transcript(
        store, FIXTURES / "cc-2.1.197" / "c56e5787-4e8d-47c8-8015-046d6e485734.jsonl"
    )
    assert no_login.l1_path is not None
    assert [e["role"] for e in _entries(no_login.l1_path)] == ["user"]
    stop = l1.refine_transcript(store, FIXTURES / "cc-2.1.197" / "b92bc1cf-b647-42f6-b73d-79a1fec45e3d.jsonl")
    assert stop.l1_path is not None
    assert "Stop hook feedback" not in stop.l1_path.read_text(encoding="utf-8")


def test_old_1_0_format(store: StorePaths) -> None:
    transcript = FIXTURES / "claude_code_log_1_0.jsonl"
    events, stats = read_events(transcript)
    assert stats.broken_lines == 0
    assert [e.kind for e in events].count("summary") == 1
    result = l1.refine_transcript(store, transcript)
    assert result.l1_path is not None and result.l1_path.name == "2025-06-14_100000_test_ses.l1.jsonl"
    entries = _entries(result.l1_path)
    assert [e["role"] for e in entries].count("user") == 4
    edit = next(e for e in entries if e["role"] == "tool" and e["name"] == "Edit")
    assert edit["target"] == "/tmp/decorator_example.py" and "diff" not in edit  # old_string is empty
    assert edit["tool_use_id"] == "tool_001"
    bash_result = next(
        e for e in entries if e.get("tool_use_id") == "tool_002" and e["role"] == "tool_result"
    )
    assert bash_result["output"].startswith("Hello, Alice!")


def test_mixed_message_keeps_text_and_tool_use(store: StorePaths, tmp_path: Path) -> None:
    transcript = tmp_path / "mixed.jsonl"
    record = {
        "type": "assistant",
        "timestamp": "2026-01-01T00:00:00Z",
        "sessionId": "mixed-session",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "x"},
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Read",
                    "input": {"file_path": "/a.py", "offset": 10},
                },
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "Edit",
                    "input": {"file_path": "/a.py", "old_string": "a\nb\nc\nd", "new_string": "x"},
                },
                {
                    "type": "tool_use",
                    "id": "t3",
                    "name": "Write",
                    "input": {"file_path": "/b", "content": "é🚀"},
                },
                {"type": "tool_use", "id": "t4", "name": "Grep", "input": {"pattern": "foo"}},
            ],
        },
    }
    results = {
        "type": "user",
        "timestamp": "2026-01-01T00:00:01Z",
        "sessionId": "mixed-session",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "line"}]},
                {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": True},
                {"type": "tool_result", "tool_use_id": "t3", "content": ""},
                {"type": "tool_result", "tool_use_id": "t4", "content": "x" * 500},
            ],
        },
    }
    transcript.write_text(json.dumps(record) + "\n" + json.dumps(results) + "\n", encoding="utf-8")
    result = l1.refine_transcript(store, transcript)
    assert result.l1_path is not None
    entries = _entries(result.l1_path)
    assert [e["role"] for e in entries] == ["assistant"] + ["tool"] * 4 + ["tool_result"] * 4
    read, edit, write, grep = entries[1:5]
    assert read["lines"] == "10-110" and read["target"] == "/a.py"
    assert edit["diff"] == "-a\nb\nc\n+x"
    assert write["size"] == 3  # UTF-16 units, as JavaScript counts
    assert grep == {
        "ts": grep["ts"],
        "role": "tool",
        "name": "Grep",
        "pattern": "foo",
        "tool_use_id": "t4",
        "session": "mixed-session",
    }
    ok, err, empty, long = entries[5:]
    assert ok["output"] == "line" and err == {**err, "result": "error", "output": "boom"}
    assert "output" not in empty
    assert len(long["output"]) == 200


def test_copy_of_a_transcript_in_another_folder(store: StorePaths, tmp_path: Path) -> None:
    source = FIXTURES / "cc-2.1.197"
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    first = l1.refine_transcript(store, copy / "6876f8f4-be54-4338-8004-f55b6d64f5ad.jsonl")
    second = l1.refine_transcript(store, source / "6876f8f4-be54-4338-8004-f55b6d64f5ad.jsonl")
    assert first.l1_path == second.l1_path
    assert second.new_entries == 0
