"""Hook speed: each hook's whole process against a clean interpreter, on small and large stores.

    python bench/bench_hooks.py [--rounds 15] [--cache /tmp/mk-bench-hooks] [--sessions 2000 50000]

Every event runs with a real payload on stdin (captured from Claude Code 2.1.197), two ways:

- ``launcher``: the plugin's ``bin/memkeeper-hook EVENT`` from this source checkout, what
  Claude Code runs for a developer;
- ``wheel``: the same launcher as ``memkeeper install`` copies it, from a wheel of this
  checkout installed with pip into a fresh venv of ``python3`` (what a user has).

The baseline is ``python3 -I -c pass``: a clean interpreter, no site-packages, no
editable-install finder (the dev venv's own start-up costs twice that). Each store is a
generated project (``bench/gen_store.py --small-sessions N``), so a hook whose time grows
with the store shows it. Runs are interleaved (every command once per round, shuffled)
and printed as min/median/max with the median's ratio to the baseline. Background jobs
are off (``MEMKEEPER_NO_JOBS=1``): the hook's own time is measured. Stores and the wheel
venv are kept in ``--cache`` and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "capture_plugin" / "hook-inputs.jsonl"
LAUNCHER = REPO / "plugin" / "bin" / "memkeeper-hook"
EVENTS = ("PostToolUse", "UserPromptSubmit", "SessionStart", "Stop")
GOALS = {"PostToolUse": 1.3, "UserPromptSubmit": 1.5}


def payloads(project: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for line in FIXTURE.read_text("utf-8").splitlines():
        item = json.loads(line)
        if item["event"] in EVENTS and item["event"] not in found:
            stdin = dict(item["stdin"], cwd=str(project), session_id="bench-session-0001")
            found[item["event"]] = json.dumps(stdin).encode()
    return found


def make_store(cache: Path, sessions: int) -> Path:
    project = cache / f"store-{sessions}"
    if not (project / ".claude" / "memory" / "memory-index.json").exists():
        shutil.rmtree(project, ignore_errors=True)
        subprocess.run(
            [sys.executable, str(REPO / "bench" / "gen_store.py"), str(project)]
            + ["--small-sessions", str(sessions), "--archives", "40"],
            check=True,
        )
        config = {"memory": {"flushEvery": 10**9}}
        (project / ".claude" / "memory" / "config.json").write_text(json.dumps(config))
    return project


def wheel_launcher(cache: Path, python: str) -> Path:
    """A fresh venv with this checkout's wheel installed by pip, and its plugin copy's launcher."""
    venv = cache / "wheel-venv"
    home = cache / "wheel-home"
    launcher = home / ".claude" / "memkeeper-marketplace" / "plugins" / "memkeeper" / "bin" / "memkeeper-hook"
    stamp = venv / ".built-from"
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if launcher.exists() and stamp.exists() and stamp.read_text() == head:
        return launcher
    shutil.rmtree(venv, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)
    wheels = cache / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(REPO)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    wheel = next(wheels.glob("memkeeper-*.whl"))
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", str(wheel)], check=True, stderr=subprocess.DEVNULL
    )
    subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-P",
            "-c",
            "from memkeeper.plugin.install import write_marketplace as w; w()",
        ],
        env=dict(os.environ, HOME=str(home)),
        check=True,
    )
    stamp.write_text(head)
    return launcher


def timed(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv, input=stdin, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    return time.perf_counter() - start


def spread(values: list[float]) -> str:
    return f"{min(values) * 1000:6.1f} {statistics.median(values) * 1000:6.1f} {max(values) * 1000:6.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    parser.add_argument(
        "--cache", type=Path, default=Path("/tmp/mk-bench-hooks"), help="stores and venv kept here"
    )
    parser.add_argument("--sessions", type=int, nargs="+", default=[2000, 50000], help="store sizes")
    parser.add_argument("--no-wheel", action="store_true", help="skip the pip-installed wheel")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    # the interpreter itself: a version manager's python3 may be a shell script that execs it
    shim = shutil.which("python3") or "python3"
    python = subprocess.run(
        [shim, "-I", "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, check=True
    ).stdout.strip()
    launchers = {"launcher": LAUNCHER}
    if not args.no_wheel:
        launchers["wheel"] = wheel_launcher(args.cache, python)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMKEEPER", "VIRTUAL_ENV"))}
    # HOME beside the stores, never a store's project: a store is never kept in the home folder
    home = args.cache / "home"
    home.mkdir(exist_ok=True)
    env.update(MEMKEEPER_NO_JOBS="1", HOME=str(home))
    commands: dict[str, tuple[list[str], bytes, Path]] = {
        "python3 -I -c pass": ([python, "-I", "-c", "pass"], b"", REPO)
    }
    for sessions in args.sessions:
        project = make_store(args.cache, sessions)
        stdin = payloads(project)
        for how, launcher in launchers.items():
            for event in EVENTS:
                commands[f"{how} {sessions} {event}"] = (
                    ["/bin/sh", str(launcher), event],
                    stdin[event],
                    project,
                )
    names = list(commands)
    times: dict[str, list[float]] = {name: [] for name in names}
    for name in names:  # warm-up: page cache, counters, .pyc files
        argv, data, cwd = commands[name]
        timed(argv, data, cwd, env)
    rng = random.Random(0)
    for _ in range(args.rounds):
        rng.shuffle(names)
        for name in names:
            argv, data, cwd = commands[name]
            times[name].append(timed(argv, data, cwd, env))
    base = statistics.median(times["python3 -I -c pass"])
    print(
        f"hook whole process, ms min/median/max of {args.rounds} interleaved rounds; load {os.getloadavg()[0]:.1f}"
    )
    print(f"  python3 -I -c pass ({python}): {spread(times['python3 -I -c pass'])}")
    header = "".join(f"   {f'{n:,} sessions':>20} ratio" for n in args.sessions)
    for how in launchers:
        print(f"  {how:<8} {'event':<17}{header}")
        for event in EVENTS:
            cells = ""
            for sessions in args.sessions:
                values = times[f"{how} {sessions} {event}"]
                cells += f"   {spread(values)} {statistics.median(values) / base:5.2f}"
            goal = f"  (goal <= {GOALS[event]})" if event in GOALS else ""
            print(f"  {'':<8} {event:<17}{cells}{goal}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
