"""Foundation speed figures, measured side by side in one run.

1. Whole-process ``memkeeper check`` (the PostToolUse hook) against ``python -c pass``
   with the same interpreter, as a ratio of medians over interleaved runs (goal <= 1.3):
   the installed console script and ``python -m memkeeper.cli.main check``.
2. In-process rotation of a 100 KB memory.md (goal <= 20 ms median).

Usage: python bench/bench_foundation.py [--runs N] [--python PATH]

``--python`` measures the check against another interpreter, e.g. a venv where the
built wheel is installed (an editable install pays for its import hook in every
process, ``python -c pass`` included, which flatters the ratio).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _time_run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def bench_check(runs: int, python: str) -> list[tuple[str, float, float]]:
    project = Path(tempfile.mkdtemp(prefix="mk-bench-"))
    try:
        env = dict(os.environ)
        env["MEMKEEPER_NO_JOBS"] = "1"
        env["HOME"] = str(project)
        env.pop("CLAUDE_PROJECT_DIR", None)
        (project / ".claude" / "memory").mkdir(parents=True)
        (project / ".claude" / "memory" / "memory.md").write_text("## 2026-11-22_0100\n- [x]: small\n")
        script = Path(python).with_name("memkeeper")
        commands: dict[str, list[str]] = {"python -c pass": [python, "-c", "pass"]}
        if script.exists():
            commands["memkeeper check (console script)"] = [str(script), "check"]
        commands["python -m memkeeper.cli.main check"] = [python, "-m", "memkeeper.cli.main", "check"]
        times: dict[str, list[float]] = {name: [] for name in commands}
        for argv in commands.values():  # warm the page cache and .pyc files
            _time_run(argv, project, env)
        for _ in range(runs):
            for name, argv in commands.items():  # interleaved, so drift hits all alike
                times[name].append(_time_run(argv, project, env))
        base = statistics.median(times["python -c pass"])
        return [(name, statistics.median(t) * 1000, statistics.median(t) / base) for name, t in times.items()]
    finally:
        shutil.rmtree(project, ignore_errors=True)


def bench_rotation(runs: int) -> tuple[float, float]:
    os.environ["MEMKEEPER_NO_JOBS"] = "1"
    from memkeeper.core.log.rotation import rotate
    from memkeeper.core.store.paths import StorePaths, ensure_store

    line = "- [bench]: a line of the rolling memory, about as long as a flush bullet\n"
    content = (line * (100 * 1024 // len(line) + 1))[: 100 * 1024].encode()
    samples: list[float] = []
    for _ in range(runs):
        project = Path(tempfile.mkdtemp(prefix="mk-bench-rot-"))
        try:
            paths = StorePaths(project)
            ensure_store(paths)
            paths.memory.write_bytes(content)
            start = time.perf_counter()
            result = rotate(paths)
            samples.append((time.perf_counter() - start) * 1000)
            assert result is not None
        finally:
            shutil.rmtree(project, ignore_errors=True)
    return statistics.median(samples), max(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--python", default=sys.executable, help="interpreter for the check figures")
    args = parser.parse_args()
    rows = bench_check(args.runs, args.python)
    print(f"interpreter: {args.python}")
    rot_median, rot_max = bench_rotation(max(args.runs, 20))
    print(f"{'measure':<40} {'median':>10} {'ratio':>7}  goal")
    for name, ms, ratio in rows:
        goal = "" if name == "python -c pass" else "<= 1.3"
        print(f"{name:<40} {ms:>8.1f}ms {ratio:>7.2f}  {goal}")
    print(
        f"{'rotate 100 KB memory.md (in-process)':<40} {rot_median:>8.2f}ms {'':>7}  <= 20 ms (max {rot_max:.1f} ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
