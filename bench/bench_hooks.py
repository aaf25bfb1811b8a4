"""Hook speed figures: each hook event's whole-process time against ``python -c pass``.

Every event runs with a real payload on stdin (captured from Claude Code 2.1.197) in a
project with a realistic store, two ways:

- ``launcher``: ``plugin/bin/memkeeper-hook EVENT``, what Claude Code runs. In a source
  checkout (and after ``memkeeper install``) it knows where the package is and starts
  Python with ``-S``;
- ``cli``: ``python -m memkeeper.cli.main hook EVENT`` (normal start-up, site included).

Runs are interleaved (all commands once per round, in shuffled order) and the medians
compared with ``python -c pass`` of the same interpreter, so the ratio does not depend on
the machine. The goal is a ratio <= 1.3 for PostToolUse, the hottest path. Background
jobs are not started (``MEMKEEPER_NO_JOBS=1``): the hook's own time is measured.

Usage: python bench/bench_hooks.py [--rounds N]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "capture_plugin" / "hook-inputs.jsonl"
LAUNCHER = REPO / "plugin" / "bin" / "memkeeper-hook"
EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "PreCompact", "SessionEnd")


def payloads(project: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for line in FIXTURE.read_text("utf-8").splitlines():
        item = json.loads(line)
        if item["event"] in EVENTS and item["event"] not in found:
            stdin = dict(item["stdin"], cwd=str(project), session_id="bench-session-0001")
            found[item["event"]] = json.dumps(stdin).encode()
    return found


def make_store(project: Path) -> None:
    """memory.md of ~40 KB, a summarized archive, project notes, an L1 session."""
    root = project / ".claude" / "memory"
    (root / "sessions").mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"memory": {"flushEvery": 10**9}}))
    sections = [
        f"## 2026-11-{1 + i % 28:02d}_{i % 24:02d}00 (local 11-{1 + i % 28:02d}_{i % 24:02d}00)\n"
        f"- [topic-{i % 17}]: Fact number {i} about the search index, the TUI and the flush.\n"
        f"- [decision]: Decided to keep item {i} because it keeps the hook path lean.\n"
        for i in range(220)
    ]
    (root / "memory.md").write_text("\n".join(sections))
    (root / "project.md").write_text("memkeeper keeps long-term memory for Claude Code.\n" * 5)
    archive = "memory_20261101_000000.md"
    (root / archive).write_text("## 2026-10-01\n- old\n")
    (root / archive.replace(".md", ".summary.json")).write_text(
        json.dumps(
            {
                "overallSummary": "The team built the store and the hooks. " * 10,
                "keyDecisions": [{"decision": f"decision {i}", "reason": "speed"} for i in range(8)],
                "issues": [{"issue": f"issue {i}", "status": "open"} for i in range(6)],
            }
        )
    )
    index = {
        "version": 1,
        "current": "memory.md",
        "rotatedFiles": [
            {
                "file": archive,
                "rotatedAt": "2026-11-01T00:00:00.000Z",
                "tokens": 5,
                "bytes": 20,
                "summary": archive.replace(".md", ".summary.json"),
                "summaryGenerated": True,
            }
        ],
        "stats": {"totalRotations": 1, "lastRotation": "2026-11-01T00:00:00.000Z"},
        "counter": 0,
        "lastMemoryUpdateTs": "2026-11-21T09:00:00.000Z",
    }
    (root / "memory-index.json").write_text(json.dumps(index, indent=2))
    entries = [
        {
            "ts": f"2026-11-21T09:{i // 60:02d}:{i % 60:02d}.000Z",
            "role": "user" if i % 3 == 0 else "assistant",
            "text": f"message {i}",
        }
        for i in range(400)
    ]
    (root / "sessions" / "2026-11-21_090000_prevsess.l1.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in entries)
    )


def timed(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv, input=stdin, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=25, help="interleaved rounds (default 25)")
    args = parser.parse_args()
    # .pyc files as an installed package has them (the environment may forbid writing them).
    for folder in ("core", "cli", "plugin"):
        compileall.compile_dir(str(REPO / folder), quiet=1)
    project = Path(tempfile.mkdtemp(prefix="mk-bench-hooks-"))
    try:
        make_store(project)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMKEEPER"))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(HOME=str(project), MEMKEEPER_NO_JOBS="1", MEMKEEPER_PYTHON=sys.executable)
        stdin = payloads(project)
        commands: dict[str, tuple[list[str], bytes]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], b"")
        }
        launcher_env = dict(env)
        launcher_env.pop("MEMKEEPER_PYTHON")  # the launcher finds the checkout's venv and uses -S
        for event in EVENTS:
            commands[f"launcher {event}"] = (["/bin/sh", str(LAUNCHER), event], stdin[event])
            commands[f"cli {event}"] = (
                [sys.executable, "-m", "memkeeper.cli.main", "hook", event],
                stdin[event],
            )
        times: dict[str, list[float]] = {name: [] for name in commands}
        names = list(commands)
        for name in names:  # warm-up: page cache, counters file
            argv, data = commands[name]
            timed(argv, data, project, launcher_env if name.startswith("launcher") else env)
        rng = random.Random(0)
        for _ in range(args.rounds):
            rng.shuffle(names)
            for name in names:
                argv, data = commands[name]
                times[name].append(
                    timed(argv, data, project, launcher_env if name.startswith("launcher") else env)
                )
        base = statistics.median(times["python -c pass"])
        print(
            f"hook whole-process time, median of {args.rounds} interleaved rounds (python: {sys.executable})"
        )
        print(f"  python -c pass: {base * 1000:.1f} ms")
        print(f"  {'event':<18} {'launcher ms':>11} {'ratio':>6}   {'cli ms':>7} {'ratio':>6}")
        for event in EVENTS:
            launch = statistics.median(times[f"launcher {event}"])
            cli = statistics.median(times[f"cli {event}"])
            goal = "  (goal <= 1.3)" if event == "PostToolUse" else ""
            print(
                f"  {event:<18} {launch * 1000:>11.1f} {launch / base:>6.2f}   {cli * 1000:>7.1f} {cli / base:>6.2f}{goal}"
            )
        system = shutil.which("python3")
        if system and Path(system).resolve() != Path(sys.executable).resolve():
            print(
                f"  (python3 on PATH is {system}; the baseline above is the interpreter memkeeper runs with)"
            )
    finally:
        shutil.rmtree(project, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
