"""Incremental, idempotent, crash-safe refinement; hostile input; maintenance; CLI discovery."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from memkeeper.cli.main import main as cli_main
from memkeeper.core.capture import l1
from memkeeper.core.capture.l1_entries import read_l1
from memkeeper.core.capture.transcript import encode_project_dir, read_events
from memkeeper.core.store.paths import StorePaths
from tests.unit.l1.l1_kit import FIXTURES

SESSION = "5e551011-aaaa-bbbb-cccc-000000000001"


def _user(text: str, ts: str, session: str = SESSION, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "timestamp": ts,
        "sessionId": session,
        "uuid": ts,
        "message": {"role": "user", "content": text},
        **extra,
    }


def _assistant(text: str, ts: str, session: str = SESSION) -> dict[str, Any]:
    return {
        "type": "assistant",
        "timestamp": ts,
        "sessionId": session,
        "message": {"role": "assistant", "model": "m", "content": [{"type": "text", "text": text}]},
    }


def _line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def _write(path: Path, *records: dict[str, Any]) -> None:
    path.write_bytes(b"".join(_line(r) for r in records))


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def _texts(path: Path | None) -> list[str]:
    assert path is not None
    return [e.get("text", e.get("name", "")) for e in read_l1(path)]


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "cc" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    _write(
        path,
        _user("first prompt", "2026-03-01T10:00:00.000Z"),
        _assistant("first answer", "2026-03-01T10:00:01.000Z"),
    )
    return path


def test_incremental_idempotent_and_resume(store: StorePaths, transcript: Path) -> None:
    first = l1.refine_transcript(store, transcript)
    assert (first.new_entries, first.total_entries) == (2, 2)
    assert first.l1_path is not None and first.l1_path.name == "2026-03-01_100000_5e551011.l1.jsonl"
    again = l1.refine_transcript(store, transcript)
    assert (again.new_entries, again.total_entries, again.bytes_read) == (0, 2, 0)
    _append(transcript, _line(_user("resumed prompt", "2026-03-02T09:00:00.000Z")))
    resumed = l1.refine_transcript(store, transcript)
    assert resumed.l1_path == first.l1_path and resumed.new_entries == 1 and resumed.total_entries == 3
    assert _texts(first.l1_path) == ["first prompt", "first answer", "resumed prompt"]
    assert [p.name for p in store.sessions.iterdir()] == [first.l1_path.name]


def test_partial_last_line_is_left_for_next_time(store: StorePaths, transcript: Path) -> None:
    whole = _line(_user("half written prompt", "2026-03-01T10:00:02.000Z"))
    _append(transcript, whole[:25])
    result = l1.refine_transcript(store, transcript)
    assert result.new_entries == 2 and result.partial_tail and result.broken_lines == 0
    _append(transcript, whole[25:])
    result = l1.refine_transcript(store, transcript)
    assert result.new_entries == 1 and not result.partial_tail
    assert _texts(result.l1_path)[-1] == "half written prompt"


def test_complete_last_line_without_newline_is_read_once(store: StorePaths, transcript: Path) -> None:
    _append(transcript, _line(_user("no newline yet", "2026-03-01T10:00:02.000Z")).rstrip(b"\n"))
    assert l1.refine_transcript(store, transcript).new_entries == 3
    _append(transcript, b"\n" + _line(_user("next", "2026-03-01T10:00:03.000Z")))
    result = l1.refine_transcript(store, transcript)
    assert result.new_entries == 1
    assert _texts(result.l1_path) == ["first prompt", "first answer", "no newline yet", "next"]


def test_garbage_huge_and_non_utf8_lines(store: StorePaths, transcript: Path) -> None:
    huge = "x" * 3_000_000
    _append(
        transcript,
        b"not json at all\n"
        + b'{"type": "user", "message": {"content": "trunc\n'
        + b"\xff\xfe\x00garbage\n"
        + b"[1, 2, 3]\n"
        + _line({"type": "some-future-type", "sessionId": SESSION, "payload": {"a": 1}})
        + _line({"type": "progress", "data": {"type": "hook_progress"}})
        + _line(_user(huge, "2026-03-01T10:00:05.000Z"))
        + b'{"type":"user","timestamp":"2026-03-01T10:00:06.000Z","sessionId":"'
        + SESSION.encode()
        + b'","message":{"content":"caf\xe9"}}\n',
    )
    events, stats = read_events(transcript)
    assert stats.broken_lines == 4  # the 3 garbage lines and the JSON array
    assert stats.unknown_types["some-future-type"] == 1
    result = l1.refine_transcript(store, transcript)
    assert result.broken_lines == 4 and result.unknown_types == {"some-future-type": 1}
    texts = _texts(result.l1_path)
    assert texts[2] == huge
    assert texts[3] == "caf\ufffd"  # the invalid byte decoded as U+FFFD
    assert l1.refine_transcript(store, transcript).new_entries == 0


def test_lone_surrogate_escape_is_written_as_valid_json(store: StorePaths, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b'{"type":"user","timestamp":"2026-03-01T10:00:00Z","sessionId":"s1",'
        b'"message":{"content":"half \\ud83d pair"}}\n'
    )
    result = l1.refine_transcript(store, path)
    assert result.l1_path is not None
    line = result.l1_path.read_bytes()
    line.decode("utf-8")  # valid UTF-8
    assert json.loads(line)["text"] == "half \ud83d pair"


def test_killed_between_append_and_offset_update_is_rolled_back(
    store: StorePaths, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    l1.refine_transcript(store, transcript)
    _append(transcript, _line(_user("new one", "2026-03-01T11:00:00.000Z")))
    calls = {"n": 0}
    real_save = l1._save_state

    def dying_save(paths: StorePaths, session: str, state: dict[str, Any]) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the commit after the append
            raise KeyboardInterrupt("killed")
        real_save(paths, session, state)

    monkeypatch.setattr(l1, "_save_state", dying_save)
    with pytest.raises(KeyboardInterrupt):
        l1.refine_transcript(store, transcript)
    monkeypatch.setattr(l1, "_save_state", real_save)
    result = l1.refine_transcript(store, transcript)
    assert result.total_entries == 3
    assert _texts(result.l1_path) == ["first prompt", "first answer", "new one"]


def test_lost_state_is_reconciled_without_duplicates(store: StorePaths, transcript: Path) -> None:
    first = l1.refine_transcript(store, transcript)
    for state in (store.state / "l1").glob("*.json"):
        state.unlink()
    _append(transcript, _line(_user("after state loss", "2026-03-01T12:00:00.000Z")))
    result = l1.refine_transcript(store, transcript)
    assert result.reconciled and result.new_entries == 1 and result.l1_path == first.l1_path
    assert _texts(result.l1_path) == ["first prompt", "first answer", "after state loss"]


def test_unreadable_state_is_backed_up(store: StorePaths, transcript: Path) -> None:
    l1.refine_transcript(store, transcript)
    state = next((store.state / "l1").glob("*.json"))
    state.write_text("{broken", encoding="utf-8")
    result = l1.refine_transcript(store, transcript)
    assert result.new_entries == 0 and result.total_entries == 2
    assert any(p.name.startswith(state.name + ".unreadable") for p in store.backups.iterdir())


def test_l1_survives_transcript_deletion(store: StorePaths, transcript: Path) -> None:
    result = l1.refine_transcript(store, transcript)
    transcript.unlink()
    assert result.l1_path is not None and result.l1_path.exists()
    assert len(l1.entries_since(store, None)) == 2


def test_new_subagent_file_is_picked_up(store: StorePaths, transcript: Path) -> None:
    l1.refine_transcript(store, transcript)
    agent = transcript.with_suffix("") / "subagents" / "agent-abc123.jsonl"
    agent.parent.mkdir(parents=True)
    _write(agent, _user("sub task", "2026-03-01T10:00:02.000Z", isSidechain=True, agentId="abc123"))
    result = l1.refine_transcript(store, transcript)
    assert result.new_entries == 1
    entry = list(read_l1(result.l1_path))[-1]  # type: ignore[arg-type]
    assert entry["sidechain"] is True and entry["agentId"] == "abc123"
    compact = agent.parent / "agent-acompact-1.jsonl"
    _write(compact, _user("Your task is to create a detailed summary", "2026-03-01T10:00:03.000Z"))
    assert l1.refine_transcript(store, transcript).new_entries == 0


def test_js_written_files_without_trailing_newline_are_read(store: StorePaths) -> None:
    legacy = store.sessions / "2026-01-05_0930.l1.jsonl"
    legacy.write_text(
        '{"ts":"2026-01-05T09:30:00.000Z","role":"user","text":"a"}\n'
        '{"ts":"2026-01-05T09:31:00.000Z","role":"assistant","text":"b"}',
        encoding="utf-8",
    )
    assert [e["text"] for e in read_l1(legacy)] == ["a", "b"]
    (info,) = l1.list_l1(store)
    assert info.legacy and info.entries == 2 and info.messages == 2 and info.session_id is None


def test_entries_since_compares_instants(store: StorePaths, transcript: Path) -> None:
    l1.refine_transcript(store, transcript)
    _append(transcript, _line(_user("half second later", "2026-03-01T10:00:01.500Z")))
    l1.refine_transcript(store, transcript)
    newer = l1.entries_since(store, "2026-03-01T10:00:01Z")
    assert [e["text"] for e in newer] == ["half second later"]
    assert len(l1.entries_since(store, None)) == 3
    assert l1.entries_since(store, "2026-03-01T10:00:01.500Z") == []


def test_dedupe_moves_contained_copies_to_trash(store: StorePaths) -> None:
    a = '{"ts":"2026-01-05T09:30:00.000Z","role":"user","text":"a"}'
    b = '{"ts":"2026-01-05T09:31:00.000Z","role":"assistant","text":"b"}'
    (store.sessions / "2026-01-05_0930.l1.jsonl").write_text(f"{a}\n{b}", encoding="utf-8")
    (store.sessions / "2026-01-05_0931.l1.jsonl").write_text(a, encoding="utf-8")  # same first ts, contained
    (store.sessions / "2026-01-05_0932.l1.jsonl").write_text(f"{a}\n{b}", encoding="utf-8")  # equal size
    other = '{"ts":"2026-01-05T09:30:00.000Z","role":"user","text":"different"}'
    (store.sessions / "2026-01-05_0933.l1.jsonl").write_text(other, encoding="utf-8")
    dry = l1.dedupe_l1(store, dry_run=True)
    assert sorted(dry.removed) == ["2026-01-05_0931.l1.jsonl", "2026-01-05_0932.l1.jsonl"]
    assert len(list(store.sessions.iterdir())) == 4
    done = l1.dedupe_l1(store)
    assert sorted(done.removed) == sorted(dry.removed)
    assert sorted(p.name for p in store.sessions.iterdir()) == [
        "2026-01-05_0930.l1.jsonl",
        "2026-01-05_0933.l1.jsonl",
    ]
    from memkeeper.core.store.trash import list_trash, restore

    trashed = list_trash(store)
    assert sorted(item.name for item in trashed) == sorted(dry.removed)
    restore(store, trashed[0].id)  # a deduped file can be put back like a forgotten one
    assert trashed[0].name in {p.name for p in store.sessions.iterdir()}


def test_compress_keeps_everything_readable(store: StorePaths, transcript: Path) -> None:
    result = l1.refine_transcript(store, transcript)
    assert result.l1_path is not None
    old = time.time() - 40 * 86400
    os.utime(result.l1_path, (old, old))
    assert l1.compress(store, 60) == []
    assert l1.compress(store, 30) == [result.l1_path.name + ".gz"]
    packed = result.l1_path.with_name(result.l1_path.name + ".gz")
    assert not result.l1_path.exists() and packed.exists()
    assert packed.stat().st_mode & 0o777 == 0o600
    assert abs(packed.stat().st_mtime - old) < 2
    assert len(gzip.decompress(packed.read_bytes()).splitlines()) == 2
    assert [e["text"] for e in read_l1(packed)] == ["first prompt", "first answer"]
    (info,) = l1.list_l1(store)
    assert info.compressed and info.entries == 2
    # the session resumes after compression: new entries go to a new file, nothing is lost
    _append(transcript, _line(_user("much later", "2026-04-20T08:00:00.000Z")))
    resumed = l1.refine_transcript(store, transcript)
    assert resumed.new_entries == 1 and resumed.l1_path is not None
    assert resumed.l1_path.name == "2026-04-20_080000_5e551011.l1.jsonl"
    assert len(l1.entries_since(store, None)) == 3


def test_run_l1_job_options(store: StorePaths, transcript: Path) -> None:
    l1.run_l1_job(store, {"transcript_path": str(transcript), "session_id": SESSION})
    assert len(l1.entries_since(store, None)) == 2


def _claude_dir(home: Path, project: Path) -> Path:
    folder = home / ".claude" / "projects" / encode_project_dir(project)
    folder.mkdir(parents=True)
    return folder


def test_final_finds_newest_transcript_of_exactly_this_project(
    store: StorePaths, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = store.project
    mine = _claude_dir(home, project)
    other_project = tmp_path / "xproj"  # its encoded name contains "proj" as a substring
    theirs = _claude_dir(home, other_project)
    _write(
        theirs / "99999999-0000.jsonl",
        _user("someone else's", "2026-03-05T00:00:00Z", session="99999999-0000"),
    )
    _write(mine / "11111111-old.jsonl", _user("older", "2026-03-01T00:00:00Z", session="11111111-old"))
    _write(mine / "22222222-new.jsonl", _user("newest", "2026-03-02T00:00:00Z", session="22222222-new"))
    os.utime(mine / "11111111-old.jsonl", (1, 1))
    assert cli_main(["--project", str(project), "final"]) == 0
    assert "+1 entries" in capsys.readouterr().out
    assert [e["text"] for e in l1.entries_since(store, None)] == ["newest"]
    assert cli_main(["--project", str(project), "final", "--session", "11111111-old", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["newEntries"] == 1
    assert cli_main(["--project", str(project), "refine-all", "--json"]) == 0
    assert all(r["newEntries"] == 0 for r in json.loads(capsys.readouterr().out)["results"])
    assert cli_main(["--project", str(project), "sessions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(item["session"] for item in listed) == ["11111111-old", "22222222-new"]
    assert cli_main(["--project", str(tmp_path / "nothing-here"), "final"]) == 3
    assert "no transcript of this project" in capsys.readouterr().err


def test_cli_maintenance_commands(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    project = str(store.project)
    result = l1.refine_transcript(store, FIXTURES / "spotter_tool_heavy.jsonl")
    assert result.l1_path is not None
    assert cli_main(["--project", project, "sessions"]) == 0
    assert "d6e0bada" in capsys.readouterr().out
    assert cli_main(["--project", project, "dedupe-l1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["removed"] == []
    old = time.time() - 100 * 86400
    os.utime(result.l1_path, (old, old))
    assert cli_main(["--project", project, "compress", "--json"]) == 0  # default retentionDays
    assert json.loads(capsys.readouterr().out)["compressed"] == [result.l1_path.name + ".gz"]
    assert cli_main(["--project", project, "compress", "--days", "-1"]) == 2


def test_renamed_copy_of_the_session_adds_nothing(
    store: StorePaths, transcript: Path, tmp_path: Path
) -> None:
    l1.refine_transcript(store, transcript)
    copy = tmp_path / "backup-of-session.jsonl"
    copy.write_bytes(transcript.read_bytes())
    result = l1.refine_transcript(store, copy, SESSION)
    assert result.new_entries == 0 and result.reconciled and result.total_entries == 2


def test_old_layout_agent_file_beside_the_session(store: StorePaths, home: Path) -> None:
    folder = _claude_dir(home, store.project)
    main = folder / f"{SESSION}.jsonl"
    _write(
        main, _user("parent prompt", "2026-03-01T10:00:00.000Z"), _assistant("ok", "2026-03-01T10:00:01.000Z")
    )
    _write(
        folder / "agent-1a2b3c4d.jsonl",
        _user("agent prompt", "2026-03-01T10:00:02.000Z", isSidechain=True, agentId="1a2b3c4d"),
        _assistant("agent answer", "2026-03-01T10:00:03.000Z"),
    )
    from memkeeper.core.capture.transcript import list_transcripts, newest_transcript

    assert newest_transcript(store.project) == main
    assert len(list_transcripts(store.project, include_agents=True)) == 2
    results = l1.refine_all(store)
    assert sum(r.new_entries for r in results) == 4
    assert len({r.l1_path for r in results}) == 1  # the agent's work joins its session's file
    entries = l1.entries_since(store, None)
    assert [e["text"] for e in entries] == ["parent prompt", "ok", "agent prompt", "agent answer"]
    assert entries[2]["sidechain"] is True and entries[2]["agentId"] == "1a2b3c4d"
    assert sum(r.new_entries for r in l1.refine_all(store)) == 0


def test_a_line_too_large_to_keep_leaves_a_stub_entry_and_one_log_line(
    store: StorePaths, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line over MAX_LINE_BYTES (32 MB; lowered here) is never parsed, but L1 says it was there:
    what it was, its size, that it was too large; and the log says so once."""
    from memkeeper.core.capture import transcript as transcript_module

    monkeypatch.setattr(transcript_module, "MAX_LINE_BYTES", 2000)
    monkeypatch.setattr(transcript_module, "SKIP_CHUNK", 256)
    call = {
        "type": "assistant",
        "timestamp": "2026-03-01T10:00:02.000Z",
        "sessionId": SESSION,
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_big1", "name": "Write", "input": {"content": "w" * 9000}}
            ],
        },
    }
    result = {
        "type": "user",
        "sessionId": SESSION,
        "message": {
            "role": "user",
            "content": [{"tool_use_id": "toolu_big1", "type": "tool_result", "content": "r" * 9000}],
        },
        "timestamp": "2026-03-01T10:00:03.000Z",
    }
    big = [_line(call), _line(result), _line(_user("p" * 5000, "2026-03-01T10:00:04.000Z"))]
    attachment = _line({"type": "attachment", "sessionId": SESSION, "attachment": {"content": "a" * 9000}})
    after = _line(_user("after the big ones", "2026-03-01T10:00:05.000Z"))
    _append(transcript, b"".join(big) + attachment + after)  # a line L1 never keeps: no stub
    refined = l1.refine_transcript(store, transcript)
    assert refined.oversize_lines == 4
    entries = list(read_l1(refined.l1_path))  # type: ignore[arg-type]
    assert [e["role"] for e in entries] == ["user", "assistant", "tool", "tool_result", "user", "user"]
    tool, output, prompt = entries[2:5]
    assert tool["name"] == "Write" and tool["tool_use_id"] == "toolu_big1"
    assert output["tool_use_id"] == "toolu_big1" and output["ts"] == "2026-03-01T10:00:03.000Z"
    for stub, line, field in zip((tool, output, prompt), big, ("detail", "output", "text"), strict=True):
        assert stub["kind"] == "oversize" and stub["bytes"] == len(line)
        assert "too large to keep" in stub[field] and "www" not in stub[field]
    assert entries[5]["text"] == "after the big ones"
    log = (store.logs / "memkeeper.log").read_text("utf-8").splitlines()
    assert len([x for x in log if "too large" in x]) == 1 and transcript.name in log[-1]
    again = l1.refine_transcript(store, transcript)
    assert again.new_entries == 0 and len(
        (store.logs / "memkeeper.log").read_text("utf-8").splitlines()
    ) == len(log)
