"""The L2 flush: watermark exactness (no double append, no skip), SKIP, fallback, privacy, crash recovery."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core import summarizers
from memkeeper.core.log import flush
from memkeeper.core.log.flush_positions import last_flush
from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import SESSION_43B, TRANSCRIPT_43B, write_config
from tests.l1_data import write_l1

SECTION_RE = re.compile(r"^## \d{4}-\d{2}-\d{2}_\d{4} \(local \d{2}-\d{2}_\d{4}\)$", re.MULTILINE)


def entry(second: int, role: str = "user", text: str | None = None, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"ts": f"2026-11-20T10:{second // 60:02d}:{second % 60:02d}.000Z", "role": role}
    if role in ("user", "assistant"):
        item["text"] = text or f"{role} message {second}"
    item.update(extra)
    return item


class FakeModel:
    """A summarizer that records what it was given and answers one bullet per chunk."""

    def __init__(self, answer: str | None = None) -> None:
        self.seen: list[list[str]] = []
        self.answer = answer

    def __call__(self, paths: StorePaths, entries: list[dict[str, Any]]) -> tuple[list[str] | None, str]:
        self.seen.append([e["ts"] for e in entries])
        if self.answer is not None:
            return flush.parse_bullets(self.answer), "fake"
        return [f"- [chunk]: {len(entries)} entries up to {entries[-1]['ts']}"], "fake"


def sections(paths: StorePaths) -> list[str]:
    return SECTION_RE.findall(paths.memory.read_text("utf-8")) if paths.memory.exists() else []


def test_flush_appends_once_and_moves_the_watermark(store: StorePaths) -> None:
    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", [entry(i) for i in range(5)])
    model = FakeModel()
    result = flush.flush_pending(store, summarize=model)
    assert (result.sections, result.entries) == (1, 5)
    assert read_index(store)["lastMemoryUpdateTs"] == entry(4)["ts"]
    assert "lastFlushAt" not in read_index(store) and last_flush(store)
    text = store.memory.read_text("utf-8")
    assert text.startswith("\n## ") and text.endswith("\n")
    assert "- [chunk]: 5 entries up to 2026-11-20T10:00:04.000Z" in text
    # Nothing new: nothing appended, the model is not even asked.
    again = flush.flush_pending(store, summarize=model)
    assert (again.sections, again.entries) == (0, 0)
    assert len(model.seen) == 1
    assert len(sections(store)) == 1


def test_new_entries_are_flushed_exactly_once_across_files(store: StorePaths) -> None:
    model = FakeModel()
    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", [entry(i) for i in range(3)])
    flush.flush_pending(store, summarize=model)
    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", [entry(i) for i in range(3, 6)])
    write_l1(store, "2026-11-20_100400_bbbbbbbb.l1.jsonl", [entry(i, "assistant") for i in range(6, 8)])
    flush.flush_pending(store, summarize=model)
    seen = [ts for chunk in model.seen for ts in chunk]
    assert seen == [entry(i)["ts"] for i in range(8)]  # in order, none twice, none skipped
    assert len(sections(store)) == 2


def test_skip_appends_nothing_but_moves_the_watermark(store: StorePaths) -> None:
    write_l1(
        store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", [entry(0, text="hi"), entry(1, "assistant", "hello")]
    )
    result = flush.flush_pending(store, summarize=FakeModel(answer="SKIP"))
    assert (result.sections, result.skipped, result.entries) == (0, 1, 2)
    assert not store.memory.exists() or store.memory.read_text() == ""
    assert read_index(store)["lastMemoryUpdateTs"] == entry(1)["ts"]


def test_large_backlog_is_chunked_without_splitting_equal_stamps(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(flush, "MAX_PROMPT_CHARS", 400)
    same = "2026-11-20T10:05:00.000Z"
    entries = [entry(i, text="x" * 80) for i in range(12)] + [
        dict(entry(0, text="y" * 80), ts=same) for _ in range(6)
    ]
    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", entries)
    model = FakeModel()
    result = flush.flush_pending(store, summarize=model, max_chunks=100)
    seen = [ts for chunk in model.seen for ts in chunk]
    assert sorted(seen) == sorted(e["ts"] for e in entries)
    assert len(model.seen) > 2 and result.sections == len(model.seen)
    for chunk in model.seen[:-1]:
        assert chunk[-1] != same  # a group of equal stamps is never cut
    assert not result.more


def test_a_moved_watermark_means_nothing_is_written(store: StorePaths) -> None:
    name = "2026-11-20_100000_aaaaaaaa.l1.jsonl"
    write_l1(store, name, [entry(0)])
    end = (store.sessions / name).stat().st_size
    assert flush.commit(store, {name: 0}, {name: end}, "\n## first\n- [a]: b\n")
    assert not flush.commit(store, {name: 0}, {name: end}, "\n## second\n- [a]: b\n")
    assert "second" not in store.memory.read_text()


def test_an_entry_reaching_l1_after_the_flush_passed_its_time_is_still_flushed(store: StorePaths) -> None:
    """The watermark is positional: a late entry (older ``ts``) is summarized, exactly once."""
    name = "2026-11-20_100000_aaaaaaaa.l1.jsonl"
    write_l1(store, name, [entry(10), entry(11)])
    model = FakeModel()
    flush.flush_pending(store, summarize=model)
    write_l1(store, "2026-11-20_090000_bbbbbbbb.l1.jsonl", [entry(1), entry(2)])  # a resumed old session
    write_l1(store, name, [entry(5)])  # late in the same file
    flush.flush_pending(store, summarize=model)
    flush.flush_pending(store, summarize=model)
    seen = sorted(ts for chunk in model.seen for ts in chunk)
    assert seen == sorted(entry(i)["ts"] for i in (1, 2, 5, 10, 11))  # every one, once
    assert read_index(store)["lastMemoryUpdateTs"] == entry(11)["ts"]  # the JS field never goes back


def test_positions_start_from_the_timestamp_watermark_of_an_older_store(store: StorePaths) -> None:
    from memkeeper.core.store.memory_index import update_index

    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", [entry(i) for i in range(6)])
    update_index(store, lambda index: index.__setitem__("lastMemoryUpdateTs", entry(3)["ts"]))
    model = FakeModel()
    flush.flush_pending(store, summarize=model)
    assert [ts for chunk in model.seen for ts in chunk] == [entry(4)["ts"], entry(5)["ts"]]


def test_kill_after_append_is_recovered_without_a_second_copy(store: StorePaths) -> None:
    section = flush.section_text(["- [crash]: written before the kill"])
    journal = {"expected": None, "watermark": entry(3)["ts"], "section": section, "generator": "fake"}
    (store.state / flush.JOURNAL).write_text(json.dumps(journal))
    store.memory.write_text(section)  # the append happened, the index write did not
    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", [entry(i) for i in range(4)])
    model = FakeModel()
    flush.flush_pending(store, summarize=model)
    assert store.memory.read_text().count("written before the kill") == 1
    assert model.seen == []  # those entries were already flushed
    assert read_index(store)["lastMemoryUpdateTs"] == entry(3)["ts"]
    assert not (store.state / flush.JOURNAL).exists()


def test_kill_before_append_is_completed(store: StorePaths) -> None:
    section = flush.section_text(["- [crash]: journal only"])
    journal = {"expected": None, "watermark": entry(1)["ts"], "section": section, "generator": "fake"}
    (store.state / flush.JOURNAL).write_text(json.dumps(journal))
    flush.recover_journal(store)
    assert store.memory.read_text().count("journal only") == 1
    assert read_index(store)["lastMemoryUpdateTs"] == entry(1)["ts"]


def test_bullets_are_privacy_filtered(store: StorePaths) -> None:
    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", [entry(0)])
    secret = "sk-ant-api03-" + "A" * 90
    flush.flush_pending(
        store,
        summarize=FakeModel(answer=f"- [keys]: The key is {secret}\n- [p]: <private>hidden</private> ok"),
    )
    text = store.memory.read_text()
    assert secret not in text and "hidden" not in text
    assert "[REDACTED:" in text and "[PRIVATE]" in text


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("SKIP", None),
        ("skip.", None),
        ("- [db]: Chose SQLite.\n- [ui]: Textual app.", ["- [db]: Chose SQLite.", "- [ui]: Textual app."]),
        (
            "Here you go:\n* [db] Chose SQLite\n1. plain fact",
            ["- [db]: Chose SQLite", "- [note]: plain fact"],
        ),
        ("```\n- [a]: b\n```", ["- [a]: b"]),
        ("I could not summarize this.", []),
    ],
)
def test_parse_bullets(answer: str, expected: list[str] | None) -> None:
    assert flush.parse_bullets(answer) == expected


def test_extractive_fallback_when_the_backend_fails(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(
        store,
        {"summarizer": {"backend": "command", "command": [sys.executable, "-c", "pass"], "minCallChars": 0}},
    )

    def failing(*_args: Any, **_kwargs: Any) -> Any:
        raise summarizers.BudgetExceeded("daily model budget reached")

    monkeypatch.setattr(summarizers, "complete", failing)
    entries = [
        entry(0, text="please add a search command"),
        entry(1, "tool", name="Edit", target="/repo/cli/search.py", diff="-a\n+b"),
        entry(2, "tool", name="Bash", cmd="pytest -q"),
        entry(3, "assistant", "Added the search command; all tests pass."),
    ]
    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", entries)
    result = flush.flush_pending(store)
    assert result.generators == ["extractive"]
    text = store.memory.read_text()
    assert "- [request]: The user asked: please add a search command" in text
    assert "- [files]: edited search.py; 2 tool calls (Edit ×1, Bash ×1)." in text
    assert "- [outcome]: Added the search command; all tests pass." in text
    assert "summarizer unavailable" in (store.logs / "memkeeper.log").read_text()


def test_flush_job_refines_the_real_transcript_and_uses_the_command_backend(
    store: StorePaths, tmp_path: Path
) -> None:
    """run_flush_job end to end: L1 from a real transcript, bullets from a summarizer process."""
    fake = tmp_path / "fake_model.py"
    fake.write_text(
        "import sys\n"
        "prompt = sys.stdin.read()\n"
        "assert 'conversation memory extractor' in prompt and 'USE_TOOL' in prompt\n"
        "print('- [mock]: The session ran echo through Bash (FAKEMODEL).')\n"
    )
    write_config(
        store,
        {"summarizer": {"backend": "command", "command": [sys.executable, str(fake)], "minCallChars": 0}},
    )
    flush.run_flush_job(
        store, {"transcript_path": str(TRANSCRIPT_43B), "session_id": SESSION_43B, "reason": "test"}
    )
    text = store.memory.read_text()
    assert len(sections(store)) == 1
    assert "- [mock]: The session ran echo through Bash (FAKEMODEL)." in text
    l1_files = list(store.sessions.glob("*_43b864ff.l1.jsonl"))
    assert len(l1_files) == 1
    runs = flush.read_runs(store)
    assert runs[-1]["reason"] == "test" and runs[-1]["sections"] == 1
    # A second run finds nothing new.
    flush.run_flush_job(store, {"transcript_path": str(TRANSCRIPT_43B), "session_id": SESSION_43B})
    assert len(sections(store)) == 1


def test_append_note(store: StorePaths) -> None:
    section = flush.append_note(store, "we ship on Fridays\n- [release]: tag from main")
    assert section.splitlines()[2:] == ["- [note]: we ship on Fridays", "- [release]: tag from main"]
    assert SECTION_RE.search(store.memory.read_text())
    with pytest.raises(ValueError):
        flush.append_note(store, "  \n ")


RACER = """
import sys, time
from pathlib import Path
from memkeeper.core.log import flush
from memkeeper.core.store.paths import StorePaths

def slow(paths, entries):
    time.sleep(0.5)  # both racers read the same watermark, then both try to commit
    return [f"- [race]: {len(entries)} entries by {sys.argv[2]}"], "fake"

result = flush.flush_pending(StorePaths(Path(sys.argv[1])), summarize=slow)
print(result.sections)
"""


def test_two_flushes_at_once_append_once(store: StorePaths, home: Path) -> None:
    import os
    import subprocess

    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", [entry(i) for i in range(4)])
    env = dict(os.environ, HOME=str(home), MEMKEEPER_NO_JOBS="1")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(store.project), name],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    outputs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert sorted(outputs) == ["0", "1"]
    assert len(sections(store)) == 1
    assert store.memory.read_text().count("- [race]: 4 entries") == 1


def test_planted_secrets_never_reach_the_store(store: StorePaths, tmp_path: Path) -> None:
    """Even a model that parrots the conversation cannot write a secret into memory.md."""
    secrets = [
        "sk-ant-api03-" + "Q" * 93,
        "ghp_" + "a1B2" * 9,
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-123456789012-1234567890123-" + "x" * 24,
    ]
    private = "my home address is 12 Secret Lane"
    transcript = tmp_path / "11111111-2222-3333-4444-555555555555.jsonl"
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "11111111-2222-3333-4444-555555555555",
            "timestamp": "2026-11-21T10:00:00.000Z",
            "message": {
                "role": "user",
                "content": f"deploy with {secrets[0]} and {secrets[1]} <private>{private}</private>",
            },
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "11111111-2222-3333-4444-555555555555",
            "timestamp": "2026-11-21T10:00:05.000Z",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": f"Using AWS key {secrets[2]} and Slack token {secrets[3]}; password=hunter2hunter2",
                    }
                ],
            },
        },
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    parrot = tmp_path / "parrot.py"
    parrot.write_text(
        "import sys\n"
        "text = sys.stdin.read().split('Conversation:', 1)[1]\n"
        "for line in text.strip().splitlines():\n"
        "    print('- [echo]: ' + line)\n"
    )
    write_config(
        store,
        {"summarizer": {"backend": "command", "command": [sys.executable, str(parrot)], "minCallChars": 0}},
    )
    flush.run_flush_job(
        store, {"transcript_path": str(transcript), "session_id": "11111111-2222-3333-4444-555555555555"}
    )
    assert "- [echo]: User: deploy with" in store.memory.read_text()
    for path in store.root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for planted in [*secrets, private, "hunter2hunter2"]:
                assert planted.encode() not in data, (path, planted)


def test_flush_job_finds_the_transcript_from_the_session_id(store: StorePaths) -> None:
    import shutil

    from memkeeper.core.capture.transcript import claude_projects_root

    folder = claude_projects_root() / "".join(c if c.isalnum() else "-" for c in str(store.project))
    folder.mkdir(parents=True)
    shutil.copy(TRANSCRIPT_43B, folder / TRANSCRIPT_43B.name)
    write_config(store, {"summarizer": {"backend": "extractive"}})
    flush.run_flush_job(store, {"session_id": SESSION_43B, "reason": "test"})
    assert len(list(store.sessions.glob("*_43b864ff.l1.jsonl"))) == 1
    assert "USE_TOOL: run echo" in store.memory.read_text()


def test_a_compressed_file_keeps_its_position(store: StorePaths) -> None:
    from memkeeper.core.capture.l1 import _gzip_file

    name = "2026-11-20_100000_aaaaaaaa.l1.jsonl"
    write_l1(store, name, [entry(i) for i in range(3)])
    model = FakeModel()
    flush.flush_pending(store, summarize=model)
    plain = store.sessions / name
    _gzip_file(plain, plain.with_name(name + ".gz"))
    plain.unlink(missing_ok=True)
    assert not plain.exists() and plain.with_name(name + ".gz").exists()
    flush.flush_pending(store, summarize=model)
    assert [ts for chunk in model.seen for ts in chunk] == [entry(i)["ts"] for i in range(3)]  # not again


# --- the flush summary names its session --------------------------------------------------


def test_a_summary_of_one_session_becomes_its_title(store: StorePaths) -> None:
    from memkeeper.core.capture import titles

    name = "2026-11-20_100000_aaaaaaaa.l1.jsonl"
    write_l1(store, name, [entry(0, text="hi"), entry(1, "assistant", "Hello, what shall we do?")])
    assert titles.session_titles(store) == {name: "hi"}
    answer = "- [upload retry]: The flaky S3 upload retry now backs off exponentially.\n- [style]: English commits."
    flush.flush_pending(store, summarize=FakeModel(answer=answer))
    want = "upload retry: The flaky S3 upload retry now backs off exponentially."
    assert titles.session_titles(store) == {name: want}
    assert titles.session_title(store, name) == want
    # The session goes on and is flushed again: the first summary keeps naming it.
    write_l1(store, name, [entry(0, text="hi"), entry(1, "assistant", "Hello"), entry(2, text="next")])
    flush.flush_pending(store, summarize=FakeModel(answer="- [docs]: The README was rewritten."))
    assert titles.session_titles(store) == {name: want}


def test_a_summary_of_several_sessions_names_none(store: StorePaths) -> None:
    from memkeeper.core.capture import titles

    write_l1(store, "2026-11-20_100000_aaaaaaaa.l1.jsonl", [entry(0, text="fix the upload retry")])
    write_l1(store, "2026-11-20_100500_bbbbbbbb.l1.jsonl", [entry(1, text="rename the settings page")])
    flush.flush_pending(store, summarize=FakeModel(answer="- [mixed]: Two things happened."))
    assert sorted(titles.session_titles(store).values()) == [
        "fix the upload retry",
        "rename the settings page",
    ]


def test_extractive_bullets_name_no_session(store: StorePaths) -> None:
    from memkeeper.core.capture import titles

    name = "2026-11-20_100000_aaaaaaaa.l1.jsonl"
    write_l1(
        store,
        name,
        [entry(0, text="fix the upload retry"), entry(1, "assistant", "Fixed: it backs off now.")],
    )

    def extractive(paths: StorePaths, entries: list[dict[str, Any]]) -> tuple[list[str] | None, str]:
        return ["- [outcome]: Fixed: it backs off now."], "extractive"

    flush.flush_pending(store, summarize=extractive)
    assert titles.session_titles(store) == {name: "fix the upload retry"}
