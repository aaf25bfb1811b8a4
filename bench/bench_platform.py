"""The platform work's figures, before and after, alternated in one run.

    git archive REV core cli plugin tui pkg | (mkdir -p /tmp/before && tar -x -C /tmp/before)
    python bench/bench_platform.py --before /tmp/before [--runs 20]

``--before`` is a source tree of an older revision (its core/, cli/, plugin/, tui/ and its root's or pkg/'s __init__.py);
it and this checkout are each assembled into an importable ``memkeeper`` package, compiled
(``compileall``: neither side pays for compiling), and run through ``PYTHONPATH``. Prints, for each: the median wall time and child CPU
time of a fresh process taking and releasing a lock (``file_lock``), of the PostToolUse hook
(which takes the counters' lock when it folds), and of a summarizer call whose child starts a
grandchild in a session of its own holding stdout then exits (``run_with_timeout`` and
claude's ``stream_run``): how long the call took and whether the grandchild was left running.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable

LEAVER = """
import subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
with open(sys.argv[1], "w") as pidfile:
    pidfile.write(str(grandchild.pid))
sys.stdin.read()
print(sys.argv[2], flush=True)
"""


REPO = Path(__file__).resolve().parents[1]


def assemble(source: Path, into: Path) -> Path:
    """An importable, compiled ``memkeeper`` package (copies of ``source``'s folders) under ``into``."""
    import compileall
    import shutil

    package = into / "memkeeper"
    if (source / "pkg").is_dir():  # an older tree's; since the regrouping the root is the package
        shutil.copytree(source / "pkg", package)
    else:
        package.mkdir(parents=True)
        shutil.copy(source / "__init__.py", package / "__init__.py")
    for name in ("core", "cli", "plugin", "tui"):
        shutil.copytree(source / name, package / name, ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(package, quiet=1)
    return into


def env(path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMKEEPER"))}
    out["MEMKEEPER_NO_JOBS"] = "1"
    out["PYTHONPATH"] = str(path)
    return out


def timed(argv: list[str], path: Path, stdin: bytes = b"") -> tuple[float, float]:
    """(wall s, child CPU s) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, capture_output=True, env=env(path), timeout=300, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def alternated(
    label: str,
    argv: list[str],
    before: Path,
    after: Path,
    runs: int,
    stdin: bytes = b"",
    argv_after: list[str] | None = None,
) -> None:
    sides: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    for _ in range(runs):
        sides["before"].append(timed(argv, before, stdin))
        sides["after"].append(timed(argv_after or argv, after, stdin))
    cells = []
    for side, got in sides.items():
        wall = statistics.median(w for w, _ in got) * 1000
        cpu = statistics.median(c for _, c in got) * 1000
        cells.append(f"{side} {wall:6.1f} ms wall, {cpu:5.1f} ms CPU")
    ratio = statistics.median(c for _, c in sides["after"]) / max(
        statistics.median(c for _, c in sides["before"]), 1e-9
    )
    print(f"| {label} | {' | '.join(cells)} | {ratio:.2f}x |", flush=True)


def left_running(pidfile: Path) -> bool:
    try:
        pid = int(pidfile.read_text())
        with open(f"/proc/{pid}/stat") as stat:
            running = stat.read().split(") ")[1][0] != "Z"
    except (OSError, ValueError):
        return False
    if running:
        os.kill(pid, 9)
    return running


def stuck_child(base: Path, before: Path, after: Path) -> None:
    """A summarizer's child that exits leaving a setsid grandchild holding stdout."""
    script = base / "leaver.py"
    script.write_text(LEAVER)
    result = json.dumps({"type": "result", "result": "- [x]: done", "is_error": False})
    calls = {
        "run_with_timeout (command backend), timeout 20 s": (
            "from memkeeper.core.summarizers._process import run_with_timeout as run\n"
            "run([sys.executable, sys.argv[1], sys.argv[2], 'answer'], 'prompt', 20)\n"
        ),
        "claude stream_run, timeout 20 s": (
            "from memkeeper.core.summarizers.claude import stream_run\n"
            f"stream_run([sys.executable, sys.argv[1], sys.argv[2], {result!r}], 'prompt', 20, 20)\n"
        ),
    }
    for label, call in calls.items():
        cells = []
        for side, path in (("before", before), ("after", after)):
            pidfile = base / f"grandchild-{side}.pid"
            start = time.perf_counter()
            subprocess.run(
                [PY, "-P", "-c", "import sys\n" + call, str(script), str(pidfile)],
                env=env(path),
                capture_output=True,
                timeout=300,
                check=True,
            )
            took = time.perf_counter() - start
            cells.append(
                f"{side} {took:5.2f} s, grandchild {'LEFT RUNNING' if left_running(pidfile) else 'ended'}"
            )
        print(f"| {label} | {' | '.join(cells)} | |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="source tree of the older revision")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, {args.runs} runs each, alternated")
    with tempfile.TemporaryDirectory(prefix="bench-platform-") as folder:
        base = Path(folder)
        before = assemble(args.before.resolve(), base / "before")
        after = assemble(REPO, base / "after")
        for side, path in (("before", before), ("after", after)):
            where = subprocess.run(
                [PY, "-P", "-c", "import memkeeper.core.store.lock as m; print(m.__file__)"],
                env=env(path),
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            assert where.startswith(str(path)), (side, where)  # the assembled copy, not the installed one
        project = base / "project"
        project.mkdir()
        lock = str(base / "bench.lock")
        print("\n| what | before | after | after/before CPU |\n|---|---|---|---|")
        alternated(
            "file_lock taken and released, fresh process",
            [
                PY,
                "-P",
                "-c",
                "import sys\nfrom memkeeper.core.store.lock import file_lock\nwith file_lock(sys.argv[1]): pass",
                lock,
            ],
            before,
            after,
            args.runs,
        )
        if importlib.util.find_spec("filelock") is not None:  # (not a dependency: the alternative it was)
            alternated(
                "`import filelock` (before) against `import memkeeper.core.store.lock` (after), fresh process",
                [PY, "-P", "-c", "import filelock"],
                after,
                after,
                args.runs,
                argv_after=[PY, "-P", "-c", "import memkeeper.core.store.lock"],
            )
        else:
            print("| filelock | not installed here: its import not measured | | |")
        payload = json.dumps({"session_id": "b1", "cwd": str(project), "hook_event_name": "PostToolUse"})
        hook = [PY, "-P", "-m", "memkeeper.cli.main", "hook", "PostToolUse"]
        alternated(
            "PostToolUse hook (stdin read, counters lock)", hook, before, after, args.runs, payload.encode()
        )
        stuck_child(base, before, after)
    print(f"\nload average after {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
