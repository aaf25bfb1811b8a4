"""Single-flight jobs: a request made while the job runs is run afterwards with its own options."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from memkeeper.core import jobs
from memkeeper.core.store import StorePaths

#: Run in another process: asks for the job while this test's instance holds its lock.
ASK = (
    "import json, sys; from pathlib import Path; from memkeeper.core.jobs import run_job; "
    "from memkeeper.core.store import StorePaths; "
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


def test_requests_made_while_the_job_runs_run_with_their_own_options(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = {"reason": "stop", "session_id": "aaaa"}
    count = {"reason": "count", "session_id": "bbbb", "transcript_path": "/t/bbbb.jsonl"}
    end = {"reason": "session-end", "session_id": "aaaa"}
    seen: list[dict[str, Any]] = []

    def runner(paths: StorePaths, options: dict[str, Any]) -> None:
        seen.append(options)
        if len(seen) == 1:  # two requests while the first run goes on, one of them twice
            ask_elsewhere(paths, count)
            ask_elsewhere(paths, end)
            ask_elsewhere(paths, count)

    monkeypatch.setattr(jobs, "resolve_runner", lambda kind: runner)

    assert jobs.run_job(store, "recall", first) is True

    assert seen == [first, count, end]  # each once, in order, as asked (not the first's again)
    assert not (store.state / "job-recall.rerun").exists()


def test_an_older_versions_empty_flag_reruns_the_same_options(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []

    def runner(paths: StorePaths, options: dict[str, Any]) -> None:
        seen.append(options)
        if len(seen) == 1:
            (paths.state / "job-recall.rerun").touch()

    monkeypatch.setattr(jobs, "resolve_runner", lambda kind: runner)
    jobs.run_job(store, "recall", {"reason": "stop"})
    assert seen == [{"reason": "stop"}, {"reason": "stop"}]


def test_requests_past_the_rerun_limit_wait_for_the_next_instance(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []

    def runner(paths: StorePaths, options: dict[str, Any]) -> None:
        seen.append(options)
        if len(seen) == 1:
            for n in range(jobs.MAX_RERUNS + 1):
                ask_elsewhere(paths, {"n": n})

    monkeypatch.setattr(jobs, "resolve_runner", lambda kind: runner)
    jobs.run_job(store, "recall", {})
    assert seen == [{}, *({"n": n} for n in range(jobs.MAX_RERUNS - 1))]
    left = (store.state / "job-recall.rerun").read_text("utf-8").splitlines()
    assert [json.loads(line) for line in left] == [{"n": jobs.MAX_RERUNS - 1}, {"n": jobs.MAX_RERUNS}]
