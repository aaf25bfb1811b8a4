"""Session titles: the first real typed prompt, cleaned; cached in .state/titles.json."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from memkeeper.cli.main import main as cli_main
from memkeeper.core.capture import l1, titles
from memkeeper.core.capture.l1_entries import read_l1
from memkeeper.core.store.paths import StorePaths
from tests.unit.l1.l1_kit import SHARED, shared_transcripts

SESSION = "7171e5e5-aaaa-bbbb-cccc-000000000001"
WRAPPERS = ("<command-", "<local-command", "<bash-", "<system-reminder", "<task-notification")


def _record(kind: str, content: Any, ts: str, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["model"] = "m"
    return {"type": kind, "timestamp": ts, "sessionId": SESSION, "uuid": ts, "message": message, **extra}


def _command(name: str, args: str = "", ts: str = "2026-03-01T10:00:00.000Z") -> dict[str, Any]:
    text = f"<command-name>{name}</command-name>\n<command-message>{name[1:]}</command-message>\n"
    text += f"<command-args>{args}</command-args>"
    return _record("user", text, ts)


def _refined(tmp_path: Path, store: StorePaths, *records: dict[str, Any]) -> Path:
    transcript = tmp_path / "cc" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(exist_ok=True)
    transcript.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    result = l1.refine_transcript(store, transcript)
    assert result.l1_path is not None
    return result.l1_path


def _title(tmp_path: Path, store: StorePaths, *records: dict[str, Any]) -> str:
    path = _refined(tmp_path, store, *records)
    return titles.title_from_entries(read_l1(path))


def _readable(title: str) -> bool:
    return bool(title.strip()) and not title.startswith("/") and not title.startswith(WRAPPERS)


# --- the shared real transcripts -------------------------------------------------------


def test_every_shared_transcript_gets_a_readable_title(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    transcripts = shared_transcripts()
    if not transcripts:
        pytest.skip("shared transcripts are not beside the repository (../shared/transcripts)")
    folders = {path.relative_to(SHARED).parts[0] for path in transcripts}
    assert folders == {"claude-code-2.1.197", "claude-code-log", "spotter"}
    names: dict[str, str] = {}
    for transcript in transcripts:
        result = l1.refine_transcript(store, transcript)
        assert result.l1_path is not None, transcript
        names[result.l1_path.name] = f"{transcript.relative_to(SHARED).parts[0]}/{transcript.name}"
    found = titles.session_titles(store)
    assert set(found) == set(names)
    with capsys.disabled():
        print("\nshared transcript titles:")
        for name, title in sorted(found.items()):
            print(f"  {names[name]:<64} {title}")
    for name, title in found.items():
        assert _readable(title), (names[name], title)
        assert len(title) <= titles.TITLE_CHARS
        assert "  " not in title and "\n" not in title
    sources = {
        json.loads((store.state / titles.TITLES_FILE).read_text())["files"][n]["source"] for n in found
    }
    assert sources == {"prompt"}  # each has a typed prompt: none fell back
    # the spotter session opens with a plugin command whose arguments are the request
    assert found["2026-02-10_215453_491e126e.l1.jsonl"].startswith(
        "websearch to learn how to fastest setup credo"
    )
    # the long spotter session has "/compact and continue" second; its first request names it
    assert found["2026-02-12_141157_ae4a77f8.l1.jsonl"].startswith("Work on bead spotter-4te.")


# --- sessions that start with something other than a prompt -----------------------------


def test_slash_commands_and_their_output_are_skipped(tmp_path: Path, store: StorePaths) -> None:
    title = _title(
        tmp_path,
        store,
        _command("/clear"),
        _record("user", "<local-command-stdout></local-command-stdout>", "2026-03-01T10:00:01.000Z"),
        _command("/model", "opus", "2026-03-01T10:00:02.000Z"),
        _record(
            "user",
            "<local-command-stdout>Set model to opus</local-command-stdout>",
            "2026-03-01T10:00:03.000Z",
        ),
        _command("/compact", "keep the details of the migration plan", "2026-03-01T10:00:04.000Z"),
        _record("user", "/exit", "2026-03-01T10:00:05.000Z"),
        _record("user", "[Request interrupted by user]", "2026-03-01T10:00:06.000Z"),
        _record("user", "  Why does   the\nlogin test time out on CI?  ", "2026-03-01T10:00:07.000Z"),
    )
    assert title == "Why does the login test time out on CI?"


def test_a_custom_command_with_words_names_the_session(tmp_path: Path, store: StorePaths) -> None:
    title = _title(
        tmp_path,
        store,
        _command("/review-pr", "fix the flaky upload retry"),
        _record("user", "and the docs too", "2026-03-01T10:00:05.000Z"),
    )
    assert title == "fix the flaky upload retry"
    assert titles.prompt_title("/deploy prod") is None  # too few words to name anything


def test_a_compact_summary_is_not_a_title(tmp_path: Path, store: StorePaths) -> None:
    summary = (
        "This session is being continued from a previous conversation that ran out of context. "
        "The conversation is summarized below: Analysis: the user asked for a cache layer."
    )
    title = _title(
        tmp_path,
        store,
        {
            "type": "system",
            "subtype": "compact_boundary",
            "timestamp": "2026-03-01T09:59:00.000Z",
            "sessionId": SESSION,
        },
        _record("user", summary, "2026-03-01T10:00:00.000Z", isCompactSummary=True),
        _record("user", summary, "2026-03-01T10:00:01.000Z"),  # as older files kept it: plain user text
        _record("user", "continue with the cache invalidation", "2026-03-01T10:00:02.000Z"),
    )
    assert title == "continue with the cache invalidation"


def test_image_only_prompts_are_skipped(tmp_path: Path, store: StorePaths) -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    title = _title(
        tmp_path,
        store,
        _record("user", [image], "2026-03-01T10:00:00.000Z"),
        _record("user", [{"type": "text", "text": "[Image #1]"}, image], "2026-03-01T10:00:01.000Z"),
        _record(
            "user",
            [{"type": "text", "text": "[Image #2] what is wrong in this chart?"}, image],
            "2026-03-01T10:00:02.000Z",
        ),
    )
    assert title == "what is wrong in this chart?"


def test_a_session_of_tool_results_only_still_gets_a_readable_title(
    tmp_path: Path, store: StorePaths
) -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "make test"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    path = _refined(
        tmp_path,
        store,
        _record("assistant", [use], "2026-03-01T10:00:00.000Z"),
        _record("user", [result], "2026-03-01T10:00:01.000Z"),
        _record("user", "<local-command-stdout>done</local-command-stdout>", "2026-03-01T10:00:02.000Z"),
    )
    assert [e["role"] for e in read_l1(path)] == ["tool", "tool_result"]
    title, source = titles.title_with_source(read_l1(path))
    assert (title, source) == ("tools only: Bash", "tools")
    assert titles.title_from_entries([]) == titles.EMPTY_TITLE


def test_long_prompts_are_cut_at_a_word_boundary() -> None:
    text = "Please refactor the payment reconciliation service so that the nightly job " + "retries " * 20
    title = titles.prompt_title(text)
    assert title is not None and title.endswith("…") and len(title) <= titles.TITLE_CHARS
    assert title[:-1] == title[:-1].rstrip() and text.startswith(title[:-1])
    assert text[len(title) - 1] == " "  # cut before a word, not inside one
    assert titles.prompt_title("<system-reminder>x</system-reminder>fix the build") == "fix the build"
    assert titles.prompt_title("! git status") is None
    assert titles.prompt_title("<bash-stdout>ok</bash-stdout>") is None
    assert titles.prompt_title("[Pasted text #1 +20 lines]") is None


# --- the cache -----------------------------------------------------------------------------


def test_titles_are_cached_keyed_by_file_name_and_follow_the_file(tmp_path: Path, store: StorePaths) -> None:
    path = _refined(
        tmp_path, store, _record("assistant", [{"type": "text", "text": "Hello."}], "2026-03-01T10:00:00Z")
    )
    assert titles.session_titles(store) == {path.name: "Hello."}  # no prompt yet: the reply names it
    cache = json.loads((store.state / titles.TITLES_FILE).read_text())
    assert cache["files"][path.name]["source"] == "assistant"
    with open(path, "a", encoding="utf-8") as handle:  # the session goes on: a prompt arrives
        handle.write(json.dumps({"ts": "2026-03-01T10:01:00Z", "role": "user", "text": "add a retry"}) + "\n")
    assert titles.session_titles(store) == {path.name: "add a retry"}
    assert titles.session_title(store, f"sessions/{path.name}") == "add a retry"
    # compressed, it keeps its key and title; removed, it leaves the cache
    with open(path, "rb") as source, gzip.open(f"{path}.gz", "wb") as target:
        shutil.copyfileobj(source, target)
    path.unlink()
    assert titles.session_titles(store) == {path.name: "add a retry"}
    assert titles.session_title(store, path.name + ".gz") == "add a retry"
    Path(f"{path}.gz").unlink()
    assert titles.session_titles(store) == {}
    assert json.loads((store.state / titles.TITLES_FILE).read_text())["files"] == {}


def test_an_unreadable_cache_is_backed_up_and_rebuilt(tmp_path: Path, store: StorePaths) -> None:
    path = _refined(tmp_path, store, _record("user", "tune the query planner", "2026-03-01T10:00:00Z"))
    (store.state / titles.TITLES_FILE).write_text("{not json", encoding="utf-8")
    assert titles.session_titles(store, write=False) == {path.name: "tune the query planner"}
    assert (store.state / titles.TITLES_FILE).read_text() == "{not json"  # a reader only reads
    titles.refresh_titles(store)
    assert json.loads((store.state / titles.TITLES_FILE).read_text())["files"][path.name]["title"]
    assert [p.name for p in store.backups.iterdir() if p.name.startswith(titles.TITLES_FILE)]


def test_the_l1_job_stores_the_title_and_sessions_shows_it(
    tmp_path: Path, store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "cc" / f"{SESSION}.jsonl"
    transcript.parent.mkdir()
    transcript.write_text(
        json.dumps(_record("user", "migrate the queue to redis", "2026-03-01T10:00:00Z")) + "\n"
    )
    l1.run_l1_job(store, {"transcript_path": str(transcript), "session_id": SESSION})
    cache = json.loads((store.state / titles.TITLES_FILE).read_text())
    assert [v["title"] for v in cache["files"].values()] == ["migrate the queue to redis"]
    assert cli_main(["--project", str(store.project), "sessions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [item["title"] for item in listed] == ["migrate the queue to redis"]
    assert cli_main(["--project", str(store.project), "sessions"]) == 0
    assert "migrate the queue to redis" in capsys.readouterr().out
