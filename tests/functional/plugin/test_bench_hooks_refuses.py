"""bench/bench_hooks.py prints no figure for a run that did not do its work: in a clone whose
memkeeper lives in a venv elsewhere (the launcher finds no memkeeper), and for a row whose
count never reached the store."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memkeeper.core.store.paths import StorePaths

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench"))
pytest.importorskip("resource", reason="the bench times its children with resource (POSIX only)")

import bench_hooks  # noqa: E402  (a bench script, imported from its folder)


def test_in_a_clone_whose_memkeeper_lives_elsewhere_it_measures_nothing(tmp_path: Path) -> None:
    clone = tmp_path / "clone"  # what a clone holds of what the bench runs: no .venv beside it
    for part in ("bench", "plugin"):
        shutil.copytree(
            REPO / part, clone / part, ignore=shutil.ignore_patterns("__pycache__", ".memkeeper-python")
        )
    shutil.copy(REPO / "__init__.py", clone / "__init__.py")  # a checkout's root is the package
    fixture = Path("tests") / "fixtures" / "capture_plugin" / "hook-inputs.jsonl"
    (clone / fixture).parent.mkdir(parents=True)
    shutil.copy(REPO / fixture, clone / fixture)
    argv = [sys.executable, str(clone / "bench" / "bench_hooks.py"), "--sessions", "20", "--rounds", "1"]
    argv += ["--recall-sessions", "0", "--no-wheel", "--cache", str(tmp_path / "cache")]
    # the bench's own Python has memkeeper (a venv elsewhere); the PATH the launcher sees does not
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "measured nothing" in done.stderr and "found no memkeeper" in done.stderr
    assert "ratio" not in done.stdout and "PostToolUse" not in done.stdout  # no figure printed
    assert "baseline:" in done.stdout and "no Python with memkeeper found" in done.stdout


def test_a_row_whose_count_did_not_reach_the_store_is_named(store: StorePaths) -> None:
    project = store.project
    counted, lost = "after 20 PostToolUse", "after 20 UserPromptSubmit"
    sessions = {bench_hooks.session_of(counted): {"toolUses": 3, "messages": 0, "unflushed": 3}}
    store.counters.write_text(json.dumps({"toolUses": 3, "sessions": sessions}))
    commands = {name: (["true"], b"", project) for name in (counted, lost, "after 20 SessionStart")}
    injections = {counted: 0, lost: 0, "after 20 SessionStart": 1}
    assert bench_hooks.check_work(2, commands, injections) == [
        f"{lost}: counted 0/3",
        "after 20 SessionStart: injected 1/2",
    ]


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        (b'{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "memory"}}\n', True),
        (b'{"systemMessage": "memkeeper is not installed where this plugin can find it"}\n', False),
        (b"", False),
    ],
)
def test_only_memory_given_to_the_model_counts_as_injected(out: bytes, expected: bool) -> None:
    assert bench_hooks.injected(out) is expected
