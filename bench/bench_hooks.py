"""Hook speed: each hook's whole process against a clean interpreter, on small and large stores.

    python bench/bench_hooks.py [--rounds 15] [--cache /tmp/mk-bench-hooks] [--sessions 2000 50000]

Every event runs with a real payload on stdin (captured from Claude Code 2.1.197), two ways:

- ``launcher``: the plugin's ``bin/memkeeper.cmd EVENT`` from this source checkout, what
  Claude Code runs for a developer (``--plugin-dir plugin/``: ``/bin/sh`` finds the Python);
- ``wheel``: what the hooks.json of the plugin copy ``memkeeper install`` writes runs, from a
  wheel of this checkout installed with pip into a fresh venv of ``python3`` (what a user
  has): the recorded Python itself, in Claude Code's exec form (no shell).

The baseline is ``python -I -c pass`` from a fresh, empty venv of ``python3``: a clean
interpreter with its site step but no site-packages of note and no editable-install finder
(the dev venv's own start-up costs more, and a system ``python3`` whose site-packages hold
a ``.pth`` that imports something can cost three times as much, which would flatter the
hooks). ``python3 -I -S -c pass`` (no site step at all) and the system ``python3 -I -c
pass`` are printed beside it, and each hook's median has its ratio to both the baseline
and ``-I -S``. Wall and CPU time (the child's user + system) are both printed, so a busy
machine shows in the wall times more than in the CPU times. Each store is a
generated project (``bench/gen_store.py --small-sessions N``), so a hook whose time grows
with the store shows it. Runs are interleaved (every command once per round, shuffled)
and printed as min/median/max with the median's ratio to the baseline. Background jobs
are off (``MEMKEEPER_NO_JOBS=1``): the hook's own time is measured. Each run starts with the
store's hook counters as real use leaves them (as many sessions as the file keeps), and
times PostToolUse twice: the common count (one line appended to the counters' log) and, as
"fold due", the count that folds the log and decides the flush and rotation (the log is
removed just before it; with the default ``flushEvery`` of 10 one count in ten, or one in 64
with memory off, is that one). These stores have no
search index, so their UserPromptSubmit rows are the counting hook (recall on finds nothing
to look up). UserPromptSubmit with recall on is measured on one more store
(``--recall-sessions``, 2,000 by default) with its search index built and an earlier session
holding the answer, while a resident lookup serves it (the detached ``recall`` job, what
the hook starts when no MCP server serves the store): a prompt that earlier session answers
(injected every round: each round's session is new to it) and an unrelated one, beside the
same store's prompt with recall off, through both the launcher and the wheel's exec-form
hooks.json. ``bench/bench_prompt_recall.py`` adds the in-hook lookup (no resident server). Stores and the wheel venv are kept in ``--cache`` and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))  # bench_prompt_recall, also under python -P
FIXTURE = REPO / "tests" / "fixtures" / "capture_plugin" / "hook-inputs.jsonl"
LAUNCHER = REPO / "plugin" / "bin" / "memkeeper.cmd"
EVENTS = ("PostToolUse", "UserPromptSubmit", "SessionStart", "Stop")
GOALS = {"PostToolUse": 1.3, "UserPromptSubmit": 1.5}


#: The session every timed hook belongs to: a Claude Code session id (a UUID, as long as theirs).
SESSION = "0b6e4c2a-5f1d-4e8b-9a37-c1d2e3f40516"
#: PostToolUse when its count folds the counters' log (see core/counters.py): the hook that
#: decides a flush or a rotation. Timed with the log removed just before (a log without its
#: header is folded at once); the plain PostToolUse row is the common count, one line appended.
FOLD_ROW = "PostToolUse, fold due"


def payloads(project: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for line in FIXTURE.read_text("utf-8").splitlines():
        item = json.loads(line)
        if item["event"] in EVENTS and item["event"] not in found:
            stdin = dict(item["stdin"], cwd=str(project), session_id=SESSION)
            found[item["event"]] = json.dumps(stdin).encode()
    return found


def seed_counters(project: Path) -> None:
    """The hook counters as a store in real use has them: as many sessions as the file keeps
    (core.counters.MAX_SESSIONS), each with its counts, and no log yet."""
    from memkeeper.core import counters

    state = project / ".claude" / "memory" / ".state"
    state.mkdir(mode=0o700, parents=True, exist_ok=True)  # a store just generated has none yet
    for log in state.glob(counters.PENDING_FILE + "*"):
        log.unlink()
    rng = random.Random(11)
    sessions = {
        str(uuid.UUID(int=rng.getrandbits(128), version=4)): {
            "toolUses": rng.randrange(1, 400),
            "messages": rng.randrange(1, 60),
            "unflushed": rng.randrange(0, 10),
        }
        for _ in range(counters.MAX_SESSIONS)
    }
    data = {"toolUses": sum(entry["toolUses"] for entry in sessions.values()), "sessions": sessions}
    (state / "counters.json").write_text(json.dumps(data, separators=(",", ":")))


def drop_counters_log(project: Path) -> None:
    """Remove the counters' log, so the next count folds (FOLD_ROW)."""
    from memkeeper.core import counters

    (project / ".claude" / "memory" / ".state" / counters.PENDING_FILE).unlink(missing_ok=True)


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
    launcher = home / ".claude" / "memkeeper-marketplace" / "plugins" / "memkeeper" / "bin" / "memkeeper.cmd"
    stamp = venv / ".built-from"
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if launcher.exists() and stamp.exists() and stamp.read_text() == head + STAMP:
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
    stamp.write_text(head + STAMP)
    return launcher


STAMP = " exec-form boot"  # a venv built by an older bench (a shell launcher in hooks.json) is rebuilt


def hooks_json_argv(launcher: Path, event: str) -> list[str]:
    """The command and args the plugin's hooks.json gives ``event``, as Claude Code spawns them."""
    plugin = launcher.parent.parent
    handler = json.loads((plugin / "hooks" / "hooks.json").read_text("utf-8"))["hooks"][event][0]["hooks"][0]
    if "args" not in handler:  # a checkout's command string: Claude Code runs it with the shell
        return ["/bin/sh", "-c", handler["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))]
    return [
        part.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
        for part in [handler["command"], *handler.get("args", [])]
    ]


def clean_python(cache: Path, python: str) -> str:
    """The interpreter of a fresh venv of ``python`` with nothing installed: the baseline."""
    venv = cache / "clean-venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


def timed(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str]) -> tuple[float, float, bytes]:
    """(wall, CPU, stdout) of one process; CPU is the child's user + system time in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        argv, input=stdin, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def spread(values: list[float]) -> str:
    return f"{min(values) * 1000:6.1f} {statistics.median(values) * 1000:6.1f} {max(values) * 1000:6.1f}"


BASELINE = "venv python -I -c pass"
BARE = "python3 -I -S -c pass"
SYSTEM = "python3 -I -c pass"


RECALL_CASES = ("recall off", "recall on, resident: hit", "recall on, resident: unrelated")


def _index_current(path: Path) -> bool:
    """The cached store's index exists and is of this code's schema (an older one is rebuilt by a
    search or a job, never by a hook: timed against it, recall would look up nothing)."""
    import sqlite3

    from memkeeper.core.search import schema

    if not path.exists():
        return False
    conn = sqlite3.connect(path)
    try:
        return schema.schema_version(conn) == schema.SCHEMA_VERSION
    finally:
        conn.close()


def recall_store(cache: Path, sessions: int, env: dict[str, str]) -> Path:
    """The store of the recall rows: bench_prompt_recall's earlier session planted, its index built (kept)."""
    from bench_prompt_recall import add_earlier_session

    project = make_store(cache / "recall", sessions)
    root = project / ".claude" / "memory"
    if not _index_current(root / ".search.sqlite3"):  # a hook never builds it: recall would find nothing
        add_earlier_session(root)
        subprocess.run(
            [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(project), "reindex"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return project


def recall_commands(project: Path, launchers: dict[str, Path]) -> dict[str, tuple[list[str], bytes, Path]]:
    """The recall rows: each case through each launcher, as its plugin's hooks.json runs it."""
    from bench_prompt_recall import HIT, UNRELATED

    prompts = {RECALL_CASES[0]: HIT, RECALL_CASES[1]: HIT, RECALL_CASES[2]: UNRELATED}
    commands = {}
    for how, launcher in launchers.items():
        hook = hooks_json_argv(launcher, "UserPromptSubmit")
        for i, (name, text) in enumerate(prompts.items()):
            payload = {"session_id": f"bench-{how}-{i}", "cwd": str(project), "prompt": text}
            commands[f"recall {how} {name}"] = (hook, json.dumps(payload).encode(), project)
    return commands


def set_recall(project: Path, name: str) -> None:
    """The recall store's config for this case, and no memory of the earlier rounds (a new session each)."""
    root = project / ".claude" / "memory"
    config = {"memory": {"flushEvery": 10**9}, "recall": {"enabled": not name.endswith(RECALL_CASES[0])}}
    (root / "config.json").write_text(json.dumps(config))
    for state in (root / ".state" / "recall").glob("bench-*"):
        state.unlink()


def report(
    args: argparse.Namespace,
    launchers: dict[str, Path],
    walls: dict[str, list[float]],
    cpus: dict[str, list[float]],
    pythons: dict[str, str],
    injected: dict[str, int],
) -> None:
    base, bare = statistics.median(walls[BASELINE]), statistics.median(walls[BARE])
    base_cpu = statistics.median(cpus[BASELINE])
    print(
        f"hook whole process, ms min/median/max of {args.rounds} interleaved rounds, then median CPU ms;"
        f" load {os.getloadavg()[0]:.1f}"
    )
    for name, python in pythons.items():
        note = "  <- the baseline of the ratios" if name == BASELINE else ""
        print(
            f"  {name:<24} {spread(walls[name])}  cpu {statistics.median(cpus[name]) * 1000:5.1f}"
            f"  ({python}){note}"
        )
    print("  ratio: median wall / baseline's; -S: / python3 -I -S's; cpu: median CPU / baseline's")
    print("  (no search index in these stores: their UserPromptSubmit is the counting hook; recall below)")
    for how in launchers:
        for sessions in args.sessions:
            print(f"  {how} {sessions:,} sessions{'':<7}   min median    max    cpu  ratio    -S    cpu")
            for event in (*EVENTS, FOLD_ROW):
                wall, cpu = walls[f"{how} {sessions} {event}"], cpus[f"{how} {sessions} {event}"]
                median, median_cpu = statistics.median(wall), statistics.median(cpu)
                goal = f"  (goal <= {GOALS[event]})" if event in GOALS else ""
                goal = "  (1 count in flushEvery, or in 64)" if event == FOLD_ROW else goal
                print(
                    f"    {event:<22} {spread(wall)} {median_cpu * 1000:6.1f} {median / base:6.2f}"
                    f" {median / bare:5.2f} {median_cpu / base_cpu:6.2f}{goal}"
                )
    if not args.recall_sessions:
        return
    for how in launchers:
        print(
            f"  {how}, UserPromptSubmit, {args.recall_sessions:,} sessions + search index, resident lookup"
            f"{'':<2} min median    max    cpu  ratio    -S    cpu  injected"
        )
        for case in RECALL_CASES:
            name = f"recall {how} {case}"
            wall, cpu = walls[name], cpus[name]
            median, median_cpu = statistics.median(wall), statistics.median(cpu)
            goal = "  (goal <= 1.5)" if case != RECALL_CASES[0] else ""
            print(
                f"    {case:<32} {spread(wall)} {median_cpu * 1000:6.1f} {median / base:6.2f}"
                f" {median / bare:5.2f} {median_cpu / base_cpu:6.2f}  {injected[name]}/{args.rounds}{goal}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    parser.add_argument(
        "--cache", type=Path, default=Path("/tmp/mk-bench-hooks"), help="stores and venv kept here"
    )
    parser.add_argument("--sessions", type=int, nargs="+", default=[2000, 50000], help="store sizes")
    parser.add_argument("--no-wheel", action="store_true", help="skip the pip-installed wheel")
    parser.add_argument(
        "--recall-sessions", type=int, default=2000, help="store size of the recall rows (0: none)"
    )
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
    clean = clean_python(args.cache, python)
    commands: dict[str, tuple[list[str], bytes, Path]] = {
        BASELINE: ([clean, "-I", "-c", "pass"], b"", REPO),
        BARE: ([python, "-I", "-S", "-c", "pass"], b"", REPO),
        SYSTEM: ([python, "-I", "-c", "pass"], b"", REPO),
    }
    for sessions in args.sessions:
        project = make_store(args.cache, sessions)
        seed_counters(project)
        stdin = payloads(project)
        for how, launcher in launchers.items():
            for event in EVENTS:
                commands[f"{how} {sessions} {event}"] = (
                    hooks_json_argv(launcher, event),
                    stdin[event],
                    project,
                )
            commands[f"{how} {sessions} {FOLD_ROW}"] = (
                hooks_json_argv(launcher, "PostToolUse"),
                stdin["PostToolUse"],
                project,
            )
    resident = None
    if args.recall_sessions:
        from bench_prompt_recall import start_resident, stop_resident

        recall_project = recall_store(args.cache, args.recall_sessions, env)
        commands.update(recall_commands(recall_project, launchers))
        resident = start_resident(recall_project, env)
    try:
        walls, cpus, injected = measure(args.rounds, commands, env)
    finally:
        if resident is not None:
            stop_resident(recall_project, resident)
    report(args, launchers, walls, cpus, {BASELINE: clean, BARE: python, SYSTEM: python}, injected)
    return 0


def measure(
    rounds: int, commands: dict[str, tuple[list[str], bytes, Path]], env: dict[str, str]
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, int]]:
    """Every command once per round, shuffled, after one warm-up round: walls, CPU times, outputs seen."""
    names = list(commands)
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    injected: dict[str, int] = dict.fromkeys(names, 0)
    rng = random.Random(0)
    for round_ in range(rounds + 1):  # round 0 warms the page cache, counters and .pyc files
        if round_:
            rng.shuffle(names)
        for name in names:
            argv, data, cwd = commands[name]
            if name.startswith("recall "):
                set_recall(cwd, name)
            elif name.endswith(FOLD_ROW):
                drop_counters_log(cwd)
            wall, cpu, out = timed(argv, data, cwd, env)
            if round_:
                walls[name].append(wall)
                cpus[name].append(cpu)
                injected[name] += bool(out.strip())
    return walls, cpus, injected


if __name__ == "__main__":
    sys.exit(main())
