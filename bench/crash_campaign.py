"""Kill campaign: rotation, migration and restore SIGKILLed, the next ordinary operation recovers.

    python bench/crash_campaign.py [--trials-per-op 60] [--seed 5000]

Half the kills land at a named step of the operation (``MEMKEEPER_CRASH_AT``), half after
a seeded delay over its measured duration. After each kill the next ordinary operation
runs as a real process (a PostToolUse hook, ``migrate-legacy`` again, ``trash``), never
``doctor --repair``; then the store is checked (see ``tests/reliability/intent_kit.py``).
Prints one Markdown table; the goal is 0 in every column after "killed".
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling modules, also under python -P
import _checkout  # noqa: F401  (the tests package: the trials' kit)

from tests.reliability import intent_kit

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials-per-op", type=int, default=60)
    parser.add_argument("--seed", type=int, default=5000)
    args = parser.parse_args()
    os.environ["MEMKEEPER_NO_JOBS"] = "1"
    print(subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip())
    print()
    print(
        "| operation | trials | killed mid-way | kill points | bytes lost | duplicated lines "
        "| duplicate archives | other problems | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    failures: list[str] = []
    total = 0
    with tempfile.TemporaryDirectory(prefix="memkeeper-crash-") as tmp:
        base = Path(tmp)
        (base / "home").mkdir()
        os.environ["HOME"] = str(base / "home")
        for name, (duration_of, trial) in intent_kit.OPERATIONS.items():
            folder = base / name
            folder.mkdir()
            duration = duration_of(folder)
            started = time.monotonic()
            results = [trial(folder, args.seed + i, duration) for i in range(args.trials_per_op)]
            total += len(results)
            steps = Counter(r.kill if not r.kill.startswith("t=") else "timed" for r in results)
            bad = [r for r in results if not r.ok]
            failures += [f"{name} {r.kill}: {r.problems[:3]}" for r in bad[:5]]
            print(
                f"| {name} | {len(results)} | {sum(r.killed for r in results)} "
                f"| {', '.join(f'{k} ×{v}' for k, v in sorted(steps.items()))} "
                f"| {sum(r.bytes_lost for r in results)} | {sum(r.duplicated_lines for r in results)} "
                f"| {sum(r.duplicate_archives for r in results)} | {sum(len(r.problems) for r in results)} "
                f"| {time.monotonic() - started:.0f} |"
            )
    print(f"\n{total} trials; doctor never ran a repair.")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
