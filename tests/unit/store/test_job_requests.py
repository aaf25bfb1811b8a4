"""Single-flight jobs: a request made while the job runs is run afterwards with its own options."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from memkeeper.core.store import jobs
from memkeeper.core.store.paths import StorePaths

#: Run in another process: asks for the job while this test's instance holds its lock.
ASK = (
    "import json, sys; from pathlib import Path; from memkeeper.core.store.jobs import run_job; "
    "from memkeeper.core.store.paths import StorePaths; "
    "print(run_job(StorePaths(Path(sys.argv[1])), 'recall', json.loads(sys.argv[2])))"
)


def ask_elsewhere(paths: StorePaths, options: dict[str, Any]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", ASK, str(paths.project), json.dumps(options)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "False", done.stdout + done.stderr  # busy: left as a request


def recording_runner(
    monkeypatch: pytest.MonkeyPatch, first_run: Callable[[StorePaths], None]
) -> list[dict[str, Any]]:
    """Every job kind runs a recorder (the options of each run, in order); ``first_run`` is what
    happens while the first run goes on."""
    seen: list[dict[str, Any]] = []

    def runner(paths: StorePaths, options: dict[str, Any]) -> None:
        seen.append(options)
        if len(seen) == 1:
            first_run(paths)

    monkeypatch.setattr(jobs, "resolve_runner", lambda kind: runner)
    return seen


def test_requests_made_while_the_job_runs_run_with_their_own_options(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = {"reason": "stop", "session_id": "aaaa"}
    count = {"reason": "count", "session_id": "bbbb", "transcript_path": "/t/bbbb.jsonl"}
    end = {"reason": "session-end", "session_id": "aaaa"}

    def two_requests_one_twice(paths: StorePaths) -> None:
        for options in (count, end, count):
            ask_elsewhere(paths, options)

    seen = recording_runner(monkeypatch, two_requests_one_twice)

    assert jobs.run_job(store, "recall", first) is True

    assert seen == [first, count, end]  # each once, in order, as asked (not the first's again)
    assert not (store.state / "job-recall.rerun").exists()


def test_an_older_versions_empty_flag_reruns_the_same_options(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = recording_runner(monkeypatch, lambda paths: (paths.state / "job-recall.rerun").touch())
    jobs.run_job(store, "recall", {"reason": "stop"})
    assert seen == [{"reason": "stop"}, {"reason": "stop"}]


def test_requests_past_the_rerun_limit_wait_for_the_next_instance(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    def too_many(paths: StorePaths) -> None:
        for n in range(jobs.MAX_RERUNS + 1):
            ask_elsewhere(paths, {"n": n})

    seen = recording_runner(monkeypatch, too_many)
    jobs.run_job(store, "recall", {})
    assert seen == [{}, *({"n": n} for n in range(jobs.MAX_RERUNS - 1))]
    left = (store.state / "job-recall.rerun").read_text("utf-8").splitlines()
    assert [json.loads(line) for line in left] == [{"n": jobs.MAX_RERUNS - 1}, {"n": jobs.MAX_RERUNS}]
