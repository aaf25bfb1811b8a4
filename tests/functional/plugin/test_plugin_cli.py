"""The plugin's CLI commands: ``hook`` (fast path and argparse), ``flush``, ``save``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memkeeper.cli.main import main
from memkeeper.core.log import progress
from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import payload_for, write_config
from tests.l1_data import write_l1
from tests.memkeeper_cli import run_memkeeper


def test_hook_through_the_cli_fast_path(store: StorePaths, home: Path) -> None:
    env = dict(os.environ, HOME=str(home), MEMKEEPER_NO_JOBS="1")
    tool = json.dumps(payload_for("PostToolUse", store.project, session_id="cli-1"))
    done = run_memkeeper("hook", "PostToolUse", stdin=tool, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert progress.read_counters(store)["sessions"]["cli-1"]["toolUses"] == 1
    helped = run_memkeeper("hook", "--help", env=env)
    assert helped.returncode == 0 and "PostToolUse" in helped.stdout


def test_flush_command(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(store, {"summarizer": {"backend": "extractive"}})
    assert main(["--project", str(store.project), "flush"]) == 3
    assert "Nothing new to flush." in capsys.readouterr().out
    write_l1(
        store,
        "2026-11-20_100000_aaaaaaaa.l1.jsonl",
        [
            {"ts": "2026-11-20T10:00:00.000Z", "role": "user", "text": "rename the config key"},
            {
                "ts": "2026-11-20T10:00:09.000Z",
                "role": "assistant",
                "text": "Renamed flushEvery in the docs.",
            },
        ],
    )
    assert main(["--project", str(store.project), "flush", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["entries"] == 2 and result["sections"] == 1 and result["generators"] == ["extractive"]
    assert "- [request]: The user asked: rename the config key" in store.memory.read_text()


def test_save_command(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project", str(store.project), "save", "the", "release", "is", "on", "Friday"]) == 0
    assert "- [note]: the release is on Friday" in store.memory.read_text()
    assert main(["--project", str(store.project), "save", " "]) == 2
    assert "nothing to save" in capsys.readouterr().err
