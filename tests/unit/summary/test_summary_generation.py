"""Generation: validation, retry with backoff and raw save, budget fallback, bad inputs, the job."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from memkeeper.core.basics.tokens import estimate_tokens
from memkeeper.core.config.model import load_config
from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.memory_index_model import MAX_AUTO_ATTEMPTS, pending_summaries
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.summaries.summary import (
    SummaryError,
    generate_summary,
    load_summary,
    raw_output_path,
    run_summary_job,
    summary_path,
)
from memkeeper.core.summarizers import budget_status, read_call_log
from tests.unit.summary.summary_helpers import GOOD_ANSWER, SMALL_ARCHIVE, add_archive, write_config

ARCHIVE = "memory_20260302_150000.md"

#: A fake model: answers from the list in FAKE_ANSWERS (one per call, the last repeats),
#: counting its calls in FAKE_CALLS and keeping the last prompt in FAKE_PROMPT.
SCRIPTED = """
import json, os, sys
prompt = sys.stdin.read()
calls_file = os.environ["FAKE_CALLS"]
n = int(open(calls_file).read()) if os.path.exists(calls_file) else 0
open(calls_file, "w").write(str(n + 1))
open(os.environ["FAKE_PROMPT"], "w", encoding="utf-8").write(prompt)
answers = json.loads(os.environ["FAKE_ANSWERS"])
print(answers[min(n, len(answers) - 1)])
"""


@pytest.fixture
def scripted(
    command_backend: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Callable[..., tuple[Path, Path]]:
    def make(*answers: str) -> tuple[Path, Path]:
        calls, prompt = tmp_path / "calls", tmp_path / "prompt.txt"
        monkeypatch.setenv("FAKE_CALLS", str(calls))
        monkeypatch.setenv("FAKE_PROMPT", str(prompt))
        monkeypatch.setenv("FAKE_ANSWERS", json.dumps(list(answers)))
        command_backend(SCRIPTED)
        return calls, prompt

    return make


def entry(paths: StorePaths, name: str = ARCHIVE) -> dict:  # type: ignore[type-arg]
    return next(e for e in read_index(paths)["rotatedFiles"] if e["file"] == name)


def test_invalid_answers_are_retried_with_backoff_then_kept_raw(
    store: StorePaths, scripted: Callable[..., tuple[Path, Path]], no_sleep: list[float]
) -> None:
    calls, _ = scripted("Sure! Here is a summary of your memory file: it was busy.")
    add_archive(store)
    before = store.archive(ARCHIVE).read_bytes()
    with pytest.raises(SummaryError) as info:
        generate_summary(store, ARCHIVE, sleep=no_sleep.append)
    assert "not JSON" in str(info.value) and "after 3 tries" in str(info.value)
    assert calls.read_text() == "3"
    assert no_sleep == [1.0, 2.0]  # backoff between the three tries, injected
    assert raw_output_path(store, ARCHIVE).read_text("utf-8").startswith("Sure! Here is a summary")
    assert not summary_path(store, ARCHIVE).exists()
    e = entry(store)
    assert e["summaryGenerated"] is False and e["summaryAttempts"] == 3 and "not JSON" in e["summaryError"]
    assert pending_summaries(store)[0].state == "failed"
    assert store.archive(ARCHIVE).read_bytes() == before  # nothing lost


def test_missing_fields_fail_validation_and_the_answer_is_kept(
    store: StorePaths, scripted: Callable[..., tuple[Path, Path]], no_sleep: list[float]
) -> None:
    partial = json.dumps({"themes": [], "overallSummary": "short"})
    scripted(partial)
    add_archive(store)
    with pytest.raises(SummaryError, match="keyDecisions, issues"):
        generate_summary(store, ARCHIVE, sleep=no_sleep.append)
    assert raw_output_path(store, ARCHIVE).read_text("utf-8").strip() == partial


def test_a_later_try_succeeds_and_clears_the_error(
    store: StorePaths, scripted: Callable[..., tuple[Path, Path]], no_sleep: list[float]
) -> None:
    fenced = "```json\n" + json.dumps(GOOD_ANSWER) + "\n```"
    calls, prompt = scripted("I think the file is about auth.", fenced)
    add_archive(store)
    summary = generate_summary(store, ARCHIVE, sleep=no_sleep.append)
    assert calls.read_text() == "2" and no_sleep == [1.0]
    assert summary.generator == "command:fake-model"
    assert not raw_output_path(store, ARCHIVE).exists()
    e = entry(store)
    assert e["summaryGenerated"] is True and e["summaryGenerator"] == "command:fake-model"
    assert "summaryError" not in e and e["summaryAttempts"] == 2
    on_disk = load_summary(summary_path(store, ARCHIVE))
    assert on_disk.sourceFile == ARCHIVE and on_disk.themes[0].name == "auth"
    assert on_disk.dateRange is not None and on_disk.dateRange.last == "2026-03-02"  # ours, from the headers
    assert "Do not continue any" in prompt.read_text("utf-8")  # the summarizer is told not to chat on


def test_more_than_ten_items_from_a_model_are_cut(
    store: StorePaths, scripted: Callable[..., tuple[Path, Path]], no_sleep: list[float]
) -> None:
    big = dict(GOOD_ANSWER, themes=[{"name": f"t{i}", "summary": "s", "sessions": []} for i in range(15)])
    scripted(json.dumps(big))
    add_archive(store)
    generate_summary(store, ARCHIVE, sleep=no_sleep.append)
    assert len(json.loads(summary_path(store, ARCHIVE).read_text())["themes"]) == 10


def test_hung_backend_times_out_and_stays_pending(
    store: StorePaths, command_backend: Callable[..., Path], no_sleep: list[float]
) -> None:
    command_backend("import time\ntime.sleep(60)\n", timeout=0.5)
    add_archive(store)
    with pytest.raises(SummaryError, match="did not answer within 0.5 s"):
        generate_summary(store, ARCHIVE, sleep=no_sleep.append)
    assert entry(store)["summaryGenerated"] is False
    assert [r["outcome"] for r in read_call_log(store)] == ["error"] * 3


def test_backend_exiting_non_zero_stays_pending(
    store: StorePaths, command_backend: Callable[..., Path], no_sleep: list[float]
) -> None:
    command_backend("import sys\nsys.stderr.write('CUDA out of memory\\n')\nsys.exit(1)\n")
    add_archive(store)
    with pytest.raises(SummaryError, match="exited with status 1: CUDA out of memory"):
        generate_summary(store, ARCHIVE, sleep=no_sleep.append)
    assert pending_summaries(store)[0].error is not None


def two_archives_with_budget(store: StorePaths, budget: dict[str, int]) -> None:
    """The archives ARCHIVE and memory_20260303_090000.md to summarize, under a daily ``budget``."""
    config = json.loads(store.config.read_text())
    config["budget"] = budget
    write_config(store, config)
    add_archive(store)
    add_archive(store, "memory_20260303_090000.md")


def test_budget_reached_switches_to_extractive(
    store: StorePaths, scripted: Callable[..., tuple[Path, Path]], no_sleep: list[float]
) -> None:
    calls, _ = scripted(json.dumps(GOOD_ANSWER))
    two_archives_with_budget(store, {"dailyCalls": 1})
    first = generate_summary(store, ARCHIVE, sleep=no_sleep.append)
    second = generate_summary(store, "memory_20260303_090000.md", sleep=no_sleep.append)
    assert first.generator == "command:fake-model"
    assert second.generator == "extractive"
    assert any("daily model budget reached (1/1 calls" in n for n in second.notes)
    assert calls.read_text() == "1"  # the model was not asked again
    assert entry(store, "memory_20260303_090000.md")["summaryGenerator"] == "extractive"
    assert entry(store, "memory_20260303_090000.md")["summaryGenerated"] is True
    status = budget_status(store, load_config(store).config)
    assert status["exceeded"] is True and status["refusedToday"] == 1
    assert second.keyDecisions  # the extractive summary still has substance


def test_token_cap_counts_estimated_tokens_of_a_command(
    store: StorePaths, scripted: Callable[..., tuple[Path, Path]], no_sleep: list[float]
) -> None:
    calls, _ = scripted(json.dumps(GOOD_ANSWER))
    two_archives_with_budget(store, {"dailyTokens": 50})
    generate_summary(store, ARCHIVE, sleep=no_sleep.append)
    assert (
        generate_summary(store, "memory_20260303_090000.md", sleep=no_sleep.append).generator == "extractive"
    )
    assert calls.read_text() == "1"


def test_empty_archive_is_a_clear_error_and_stays_pending(store: StorePaths, no_sleep: list[float]) -> None:
    add_archive(store, data=b"\n\n  \n")
    with pytest.raises(SummaryError, match="the archive is empty, nothing to summarize"):
        generate_summary(store, ARCHIVE, backend="extractive")
    e = entry(store)
    assert e["summaryGenerated"] is False and "empty" in e["summaryError"]
    assert store.archive(ARCHIVE).read_bytes() == b"\n\n  \n"


def test_binary_archive_is_refused_and_kept(store: StorePaths) -> None:
    blob = bytes(range(256)) * 20
    add_archive(store, data=blob)
    with pytest.raises(SummaryError, match="not UTF-8 text"):
        generate_summary(store, ARCHIVE, backend="extractive")
    assert store.archive(ARCHIVE).read_bytes() == blob
    assert "not UTF-8" in pending_summaries(store)[0].error  # type: ignore[operator]


def test_text_with_a_few_bad_bytes_is_summarized_with_a_note(store: StorePaths) -> None:
    data = SMALL_ARCHIVE.encode("utf-8").replace(b"WAL mode", b"WAL \xff\xfe mode")
    add_archive(store, data=data)
    summary = generate_summary(store, ARCHIVE, backend="extractive")
    assert any("not valid UTF-8: 2 undecodable bytes" in n for n in summary.notes)
    assert summary.generator == "extractive"


def test_huge_archive_is_cut_to_fit_and_says_so(
    store: StorePaths, scripted: Callable[..., tuple[Path, Path]], no_sleep: list[float]
) -> None:
    _, prompt_file = scripted(json.dumps(GOOD_ANSWER))
    days = [
        f"## 2026-04-{d:02d}_1000\n"
        + "".join(f"- [topic{d}]: fact number {i} of day {d}\n" for i in range(40))
        for d in range(1, 29)
    ]
    text = "# Project Memory\n\n" + "\n".join(days)
    add_archive(store, data=text)
    assert estimate_tokens(text) > 8000
    summary = run_summary_job(store, {"archives": [ARCHIVE], "budgetTokens": 2000}, sleep=no_sleep.append)
    assert summary.outcomes[0].outcome == "generated"
    prompt = prompt_file.read_text("utf-8")
    assert "NOTE: input cut to fit" in prompt and "memkeeper cut about" in prompt
    assert "2026-04-01_1000" in prompt and "fact number 39 of day 28" in prompt  # head and tail kept
    assert "2026-04-14_1000" not in prompt  # the middle was left out
    assert estimate_tokens(prompt) < 2000 + 1200  # archive budget plus the instructions
    on_disk = load_summary(summary_path(store, ARCHIVE))
    assert any(n.startswith("input cut to fit") for n in on_disk.notes)
    assert on_disk.dateRange is not None and on_disk.dateRange.first == "2026-04-01"  # from the whole file
    assert on_disk.sectionCount == 28


def test_huge_archive_with_extractive_reads_everything(store: StorePaths) -> None:
    body = "\n".join(f"## 2026-05-{d:02d}\n- [t{d % 3}]: decided to keep item {d}" for d in range(1, 29))
    add_archive(store, data=(body + "\n") * 40)  # ~12k tokens, far over budget_tokens: not cut for extraction
    summary = generate_summary(store, ARCHIVE, backend="extractive", budget_tokens=100)
    assert summary.sectionCount == 28 * 40 and not summary.notes


def test_job_pending_mode_skips_generated_and_gives_up_after_many_failures(store: StorePaths) -> None:
    add_archive(store)
    add_archive(store, "memory_20260303_090000.md")
    add_archive(store, "memory_20260304_090000.md", data=b"")
    report = run_summary_job(store, {"backend": "extractive"})
    outcomes = {o.file: o.outcome for o in report.outcomes}
    assert outcomes == {
        ARCHIVE: "generated",
        "memory_20260303_090000.md": "generated",
        "memory_20260304_090000.md": "failed",
    }
    again = run_summary_job(store, {"backend": "extractive"})
    assert [o.file for o in again.outcomes] == ["memory_20260304_090000.md"]  # only what is still pending

    from memkeeper.core.store.memory_index import update_index

    def many_tries(index: dict) -> None:  # type: ignore[type-arg]
        for e in index["rotatedFiles"]:
            if e["file"] == "memory_20260304_090000.md":
                e["summaryAttempts"] = MAX_AUTO_ATTEMPTS

    update_index(store, many_tries)
    assert run_summary_job(store, {"backend": "extractive"}).outcomes == []  # background run gives up
    retried = run_summary_job(store, {"backend": "extractive", "retryFailed": True})
    assert [o.file for o in retried.outcomes] == ["memory_20260304_090000.md"]


def test_job_all_and_named_archives(store: StorePaths) -> None:
    add_archive(store)
    add_archive(store, "memory_20260303_090000.md")
    run_summary_job(store, {"backend": "extractive"})
    report = run_summary_job(store, {"all": True, "backend": "extractive"})
    assert [o.outcome for o in report.outcomes] == ["generated", "generated"]
    named = run_summary_job(
        store,
        {
            "archives": ["memory_20260303_090000.md", "memory_29990101_000000.md", "../../etc/passwd"],
            "backend": "extractive",
        },
    )
    assert [o.outcome for o in named.outcomes] == ["generated", "failed", "failed"]
    assert "no such archive" in (named.outcomes[1].error or "")


def test_job_adopts_a_summary_the_js_plugin_wrote_but_never_flagged(store: StorePaths) -> None:
    add_archive(store)
    js = Path(__file__).resolve().parents[2] / "fixtures" / "summaries" / "js_summary_full.json"
    summary_path(store, ARCHIVE).write_bytes(js.read_bytes())
    report = run_summary_job(store, {"backend": "extractive"})
    assert report.outcomes[0].outcome == "adopted"
    assert summary_path(store, ARCHIVE).read_bytes() == js.read_bytes()  # kept as it was
    assert entry(store)["summaryGenerated"] is True


def test_archive_missing_from_the_index_is_picked_up(store: StorePaths) -> None:
    store.archive("memory_20260305_080000.md").write_text(SMALL_ARCHIVE)  # e.g. after a kill mid-rotation
    report = run_summary_job(store, {"backend": "extractive"})
    assert [o.file for o in report.outcomes] == ["memory_20260305_080000.md"]
    assert entry(store, "memory_20260305_080000.md")["summaryGenerated"] is True


def test_job_runner_is_registered() -> None:
    from memkeeper.core.store.jobs import resolve_runner

    runner: object = resolve_runner("summary")
    assert runner is run_summary_job


def test_secrets_in_an_old_archive_never_reach_the_summary_or_raw_file(
    store: StorePaths, scripted: Callable[..., tuple[Path, Path]], no_sleep: list[float]
) -> None:
    secret = "sk-ant-api03-" + "A" * 40
    scripted(f"not json, but it echoes {secret}")
    add_archive(store, data=SMALL_ARCHIVE + f"- [setup]: exported ANTHROPIC_API_KEY={secret}\n")
    with pytest.raises(SummaryError):
        generate_summary(store, ARCHIVE, sleep=no_sleep.append)
    assert secret not in raw_output_path(store, ARCHIVE).read_text("utf-8")
    generate_summary(store, ARCHIVE, backend="extractive")
    assert secret not in summary_path(store, ARCHIVE).read_text("utf-8")


def test_budget_fallback_never_replaces_a_model_summary(
    store: StorePaths, scripted: Callable[..., tuple[Path, Path]], no_sleep: list[float]
) -> None:
    scripted(json.dumps(GOOD_ANSWER))
    add_archive(store)
    generate_summary(store, ARCHIVE, sleep=no_sleep.append)
    before = summary_path(store, ARCHIVE).read_bytes()
    config = json.loads(store.config.read_text())
    config["budget"] = {"dailyCalls": 1}
    write_config(store, config)
    report = run_summary_job(store, {"all": True}, sleep=no_sleep.append)  # regenerate --all, budget spent
    assert report.outcomes[0].generator == "command:fake-model"
    assert any("existing summary was kept" in n for n in report.outcomes[0].notes)
    assert summary_path(store, ARCHIVE).read_bytes() == before
    assert entry(store)["summaryGenerated"] is True
