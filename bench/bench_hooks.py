"""Hook speed: each hook's whole process against a fresh venv's interpreter, on small and large stores.

    python bench/bench_hooks.py [--rounds 15] [--cache DIR] [--sessions 2000 50000] [--gb 1]
                                [--before OTHER_CHECKOUT] [--no-wheel] [--recall-sessions 2000]

Every event runs with a real payload on stdin (captured from Claude Code 2.1.197), through
what Claude Code runs:

- ``launcher``: the plugin's hooks.json of this checkout (``--plugin-dir plugin/``), its
  command and args as Claude Code spawns them;
- ``before`` (with ``--before DIR``): the same from another checkout (for example
  ``git worktree add --detach DIR main``), to compare two versions in one run. The bench
  points that checkout's launcher at its own package (a link tree in the cache, recorded in
  ``DIR/plugin/.memkeeper-python``) and this run's Python, so each side runs its own code;
- ``wheel``: the hooks.json of the plugin copy ``memkeeper install`` writes, from a wheel of
  this checkout installed with pip into a fresh venv (what a user has).

The baseline is ``python -I -c pass`` from a venv this run makes (``python3 -m venv``, nothing
installed), printed by path and version: a clean interpreter with its site step. Every
command runs once per round, the rounds shuffled, so the sides alternate and load drift
lands on all of them; min/median/max wall, the median CPU (the child's user + system) and
the median's ratio to the baseline's are printed, with the load.

A run that did not do its work prints no figure and exits 1, saying what it measured
nothing of: a launcher that found no memkeeper (SessionStart injected no memory in the
check before the rounds), a SessionStart or a recall hit that injected nothing in a round,
a PostToolUse or UserPromptSubmit whose count did not reach the store's counters.

Background jobs are off (``MEMKEEPER_NO_JOBS=1``): the hook's own time is measured. Each
store is generated (``bench/gen_store.py --small-sessions N``, or ``--size-gb G`` for
``--gb``) and starts with the hook counters real use leaves (as many sessions as the file
keeps). PostToolUse is timed twice: the common count and, as "fold due", the count that
folds the counters' log and decides the flush and rotation (``#due`` appended to the log
just before it). These stores have no search index, so their UserPromptSubmit rows are the counting
hook. UserPromptSubmit with recall is measured on one more store (``--recall-sessions``)
with its index built and an earlier session holding the answer, while a resident lookup
(the detached ``recall`` job of this checkout) serves it: a prompt that session answers
(it must be injected every round), an unrelated one, and recall off. Stores and the wheel
venv are kept in ``--cache`` and reused; the baseline venv is made anew and removed.
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
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))  # bench_prompt_recall, also under python -P
FIXTURE = REPO / "tests" / "fixtures" / "capture_plugin" / "hook-inputs.jsonl"
EVENTS = ("PostToolUse", "UserPromptSubmit", "SessionStart", "Stop")
#: The budget (issue: whole process, through the launcher, / a fresh venv's ``python -I -c pass``).
GOALS = {"PostToolUse": 2.0, "SessionStart": 5.0}
RECALL_GOAL = 2.5
#: PostToolUse when its count folds the counters' log (see core/log/counters.py): the hook that
#: decides a flush or a rotation. Timed with the log removed just before.
FOLD_ROW = "PostToolUse, fold due"
BASELINE = "fresh venv python -I -c pass"
RECALL_CASES = ("recall off", "recall on, resident: hit", "recall on, resident: unrelated")


class MeasuredNothing(Exception):
    """A side or a row did not do its work: no figure may be printed."""


def session_of(name: str) -> str:
    """The session id of one timed row (a UUID, as long as Claude Code's): each row counts on its own."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


def payload(project: Path, event: str, session: str) -> bytes:
    for line in FIXTURE.read_text("utf-8").splitlines():
        item = json.loads(line)
        if item["event"] == event:
            return json.dumps(dict(item["stdin"], cwd=str(project), session_id=session)).encode()
    raise SystemExit(f"no {event} payload in {FIXTURE}")


def seed_counters(project: Path) -> None:
    """The hook counters as a store in real use has them: as many sessions as the file keeps
    (core.counters.MAX_SESSIONS), each with its counts, and no log yet."""
    from memkeeper.core.log import counters

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


def session_counts(project: Path) -> dict[str, dict[str, int]]:
    """The sessions' counts in the store, the log's lines included (nothing written)."""
    from memkeeper.core.log import progress
    from memkeeper.core.store.paths import StorePaths

    sessions: dict[str, dict[str, int]] = progress.read_counters(StorePaths(project))["sessions"]
    return sessions


def fold_next(project: Path) -> None:
    """Make the next count fold the counters' log (FOLD_ROW), keeping the counts it holds."""
    from memkeeper.core.log import counters

    counters.fold_soon(str(project / ".claude" / "memory" / ".state"))


def make_store(cache: Path, size: str) -> Path:
    """The generated store of ``size`` (a session count, or ``NGB``), made once and kept."""
    project = cache / f"store-{size.lower()}"
    if not (project / ".claude" / "memory" / "memory-index.json").exists():
        shutil.rmtree(project, ignore_errors=True)
        how = (
            ["--size-gb", size[:-2]]
            if size.endswith("GB")
            else ["--small-sessions", size, "--archives", "40"]
        )
        subprocess.run([sys.executable, str(REPO / "bench" / "gen_store.py"), str(project), *how], check=True)
    config = {"memory": {"flushEvery": 10**9}}
    (project / ".claude" / "memory" / "config.json").write_text(json.dumps(config))
    return project


def wheel_plugin(cache: Path, python: str) -> Path:
    """A fresh venv with this checkout's wheel installed by pip; its plugin copy's folder."""
    venv, home = cache / "wheel-venv", cache / "wheel-home"
    plugin = home / ".claude" / "memkeeper-marketplace" / "plugins" / "memkeeper"
    stamp = venv / ".built-from"
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if plugin.exists() and stamp.exists() and stamp.read_text() == head:
        return plugin
    shutil.rmtree(venv, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)
    wheels = cache / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(REPO)],
        check=True,
        **quiet,  # type: ignore[call-overload]
    )
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    wheel = next(wheels.glob("memkeeper-*.whl"))
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(wheel)], check=True, **quiet)  # type: ignore[call-overload]
    write = "from memkeeper.plugin.install import write_marketplace as w; w()"
    subprocess.run(
        [str(venv / "bin" / "python"), "-P", "-c", write], env=dict(os.environ, HOME=str(home)), check=True
    )
    stamp.write_text(head)
    return plugin


def before_plugin(cache: Path, checkout: Path) -> Path:
    """``checkout``'s plugin folder, its launcher pointed at that checkout's own package (a link
    tree in the cache) and at this run's Python, as ``memkeeper install`` records them."""
    tree = cache / "before-package"
    shutil.rmtree(tree, ignore_errors=True)
    package = tree / "memkeeper"
    package.mkdir(parents=True)
    init = (
        checkout / "pkg" / "__init__.py"
    )  # an older checkout's; since the regrouping the root is the package
    (package / "__init__.py").symlink_to(init if init.exists() else checkout / "__init__.py")
    for part in ("core", "cli", "plugin", "tui"):
        (package / part).symlink_to(checkout / part, target_is_directory=True)
    plugin = checkout / "plugin"
    (plugin / ".memkeeper-python").write_text(f"{sys.executable}\n{tree}\n")
    return plugin


def hooks_json_argv(plugin: Path, event: str) -> list[str]:
    """The command and args the plugin's hooks.json gives ``event``, as Claude Code spawns them."""
    handler = json.loads((plugin / "hooks" / "hooks.json").read_text("utf-8"))["hooks"][event][0]["hooks"][0]
    command = handler["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
    if "args" not in handler:  # a command string (a checkout's launcher line): Claude Code runs it with sh -c
        return ["/bin/sh", "-c", command]
    return [command, *(part.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin)) for part in handler["args"])]


def fresh_python(python: str, where: Path) -> tuple[str, str]:
    """A venv of ``python`` made now with nothing installed: (its interpreter, its version line)."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(where)], check=True)
    interpreter = str(where / "bin" / "python")
    version = subprocess.run(
        [interpreter, "-I", "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return interpreter, version


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


def injected(out: bytes) -> bool:
    """The hook's stdout gives the model memory (``additionalContext``), not just a message."""
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and (data.get("hookSpecificOutput") or {}).get("additionalContext"):
            return True
    return False


def check_side(name: str, plugin: Path, project: Path, env: dict[str, str]) -> None:
    """Before any round: the side's SessionStart injects the store's memory, or it found no memkeeper."""
    argv = hooks_json_argv(plugin, "SessionStart")
    _wall, _cpu, out = timed(
        argv, payload(project, "SessionStart", session_of("check " + name)), project, env
    )
    if not injected(out):
        raise MeasuredNothing(
            f"{name}: {' '.join(argv)} injected no memory at SessionStart: the launcher found no memkeeper"
            " (or one that cannot import); every figure would time a hook that does nothing"
        )


def found_package(plugin: Path, env: dict[str, str]) -> str:
    """What the side's launcher finds: asked for ``--version`` the way its hooks.json runs a hook (an
    older checkout's ``lib/find-python.sh``: the python and package folder it finds)."""
    finder = plugin / "lib" / "find-python.sh"
    if finder.exists():
        script = f'root={plugin}; . "$root/lib/find-python.sh"; printf "%s | %s" "$py" "$pkg"'
        done = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, check=False)
        python, _, package = done.stdout.partition(" | ")
        return f"{python} | {package}" if python else "no Python with memkeeper found"
    argv = hooks_json_argv(plugin, "SessionStart")
    if argv[:2] == ["/bin/sh", "-c"]:  # a checkout's command string: its last word is the event
        argv = [*argv[:2], argv[2].rsplit(" ", 1)[0] + " --version"]
    else:
        argv = [*argv[:-1], "--version"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=60)
    answer = done.stdout.strip()
    return answer if answer.startswith("memkeeper ") else "no Python with memkeeper found"


Command = tuple[list[str], bytes, Path]


def side_commands(side: str, plugin: Path, sizes: list[tuple[str, Path]]) -> dict[str, Command]:
    commands: dict[str, Command] = {}
    for size, project in sizes:
        for event in (*EVENTS, FOLD_ROW):
            name = f"{side} {size} {event}"
            hook = event.split(",")[0]
            commands[name] = (
                hooks_json_argv(plugin, hook),
                payload(project, hook, session_of(name)),
                project,
            )
    return commands


def recall_store(cache: Path, sessions: int, env: dict[str, str]) -> Path:
    """The store of the recall rows: bench_prompt_recall's earlier session planted, its index built."""
    from bench_prompt_recall import add_earlier_session

    project = make_store(cache / "recall", str(sessions))
    root = project / ".claude" / "memory"
    if not (root / "sessions" / "2026-11-20_090000_earlier1.l1.jsonl").exists():
        add_earlier_session(root)
    # a hook never builds the index (recall would look up nothing): this checkout's reindex does
    subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(project), "reindex"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return project


def recall_commands(project: Path, plugins: dict[str, Path]) -> dict[str, Command]:
    from bench_prompt_recall import HIT, UNRELATED

    prompts = {RECALL_CASES[0]: HIT, RECALL_CASES[1]: HIT, RECALL_CASES[2]: UNRELATED}
    commands = {}
    for side, plugin in plugins.items():
        hook = hooks_json_argv(plugin, "UserPromptSubmit")
        for i, (case, text) in enumerate(prompts.items()):
            body = {"session_id": f"bench-{side}-{i}", "cwd": str(project), "prompt": text}
            commands[f"recall {side} {case}"] = (hook, json.dumps(body).encode(), project)
    return commands


def set_recall(project: Path, name: str) -> None:
    """The recall store's config for this case, and no memory of the earlier rounds (a new session each)."""
    root = project / ".claude" / "memory"
    config = {"memory": {"flushEvery": 10**9}, "recall": {"enabled": not name.endswith(RECALL_CASES[0])}}
    (root / "config.json").write_text(json.dumps(config))
    for state in (root / ".state" / "recall").glob("bench-*"):
        state.unlink()


Figures = tuple[dict[str, list[float]], dict[str, list[float]], dict[str, int]]


def measure(rounds: int, commands: dict[str, Command], env: dict[str, str]) -> Figures:
    """Every command once per round, shuffled, after one warm-up round: walls, CPU times, injections."""
    names = list(commands)
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    injections: dict[str, int] = dict.fromkeys(names, 0)
    rng = random.Random(0)
    for round_ in range(rounds + 1):  # round 0 warms the page cache, counters and .pyc files
        if round_:
            rng.shuffle(names)
        for name in names:
            argv, data, cwd = commands[name]
            if name.startswith("recall "):
                set_recall(cwd, name)
            elif name.endswith(FOLD_ROW):
                fold_next(cwd)
            wall, cpu, out = timed(argv, data, cwd, env)
            if round_:
                walls[name].append(wall)
                cpus[name].append(cpu)
                injections[name] += injected(out)
    return walls, cpus, injections


def check_work(rounds: int, commands: dict[str, Command], injections: dict[str, int]) -> list[str]:
    """What each row should have done, every round (warm-up included for the counts): what it did not."""
    missing: list[str] = []
    counts: dict[Path, dict[str, dict[str, int]]] = {}
    for name, (_argv, _data, project) in commands.items():
        if name.endswith(("SessionStart", RECALL_CASES[1])) and injections[name] < rounds:
            missing.append(f"{name}: injected {injections[name]}/{rounds}")
        if name.startswith("recall ") or not name.endswith(("PostToolUse", FOLD_ROW, "UserPromptSubmit")):
            continue
        if project not in counts:
            counts[project] = session_counts(project)
        entry = counts[project].get(session_of(name), {})
        got = entry.get("messages" if name.endswith("UserPromptSubmit") else "toolUses", 0)
        if got != rounds + 1:
            missing.append(f"{name}: counted {got}/{rounds + 1}")
    return missing


def spread(values: list[float]) -> str:
    return f"{min(values) * 1000:6.1f} {statistics.median(values) * 1000:6.1f} {max(values) * 1000:6.1f}"


def report(args: argparse.Namespace, sides: list[str], sizes: list[str], figures: Figures, load: str) -> None:
    walls, cpus, injections = figures
    base, base_cpu = statistics.median(walls[BASELINE]), statistics.median(cpus[BASELINE])

    def row(label: str, name: str) -> str:
        """A measured row: its label, min/median/max wall, median CPU, both medians over the baseline's."""
        median, median_cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        return (
            f"    {label} {spread(walls[name])} {median_cpu * 1000:6.1f}"
            f" {median / base:6.2f} {median_cpu / base_cpu:6.2f}"
        )

    print(
        f"hook whole process, ms min/median/max of {args.rounds} interleaved rounds, median CPU ms; load {load}"
    )
    print(
        f"  {BASELINE:<34} {spread(walls[BASELINE])}  cpu {base_cpu * 1000:5.1f}  <- the baseline of the ratios"
    )
    print("  ratio: median wall / the baseline's; cpu: median CPU / the baseline's")
    for size in sizes:
        print(f"  {size} store{'':<25}   min median    max    cpu  ratio    cpu")
        for event in (*EVENTS, FOLD_ROW):
            goal = f"  (budget <= {GOALS[event]})" if event in GOALS else ""
            for side in sides:
                print(row(f"{side:<7} {event:<24}", f"{side} {size} {event}") + goal)
    if not args.recall_sessions:
        return
    print(f"  UserPromptSubmit, {args.recall_sessions:,} sessions + search index, resident lookup")
    for case in RECALL_CASES:
        goal = f"  (budget <= {RECALL_GOAL})" if case == RECALL_CASES[1] else ""
        for side in sides:
            name = f"recall {side} {case}"
            print(row(f"{side:<7} {case:<31}", name) + f"  injected {injections[name]}/{args.rounds}{goal}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "mk-bench-hooks")
    parser.add_argument("--sessions", type=int, nargs="*", default=[2000, 50000], help="store sizes")
    parser.add_argument("--gb", type=float, nargs="*", default=[], help="stores of this many GB of L1 too")
    parser.add_argument("--before", type=Path, help="another checkout, timed beside this one")
    parser.add_argument("--no-wheel", action="store_true", help="skip the pip-installed wheel")
    parser.add_argument(
        "--recall-sessions", type=int, default=2000, help="store of the recall rows (0: none)"
    )
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    # the interpreter itself: a version manager's python3 may be a shell script that execs it
    shim = shutil.which("python3") or "python3"
    python = subprocess.run(
        [shim, "-I", "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, check=True
    ).stdout.strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMKEEPER", "VIRTUAL_ENV"))}
    home = args.cache / "home"  # HOME beside the stores: a store is never kept in the home folder
    home.mkdir(exist_ok=True)
    env.update(MEMKEEPER_NO_JOBS="1", HOME=str(home))
    plugins = {"after" if args.before else "launcher": REPO / "plugin"}
    if args.before:
        plugins["before"] = before_plugin(args.cache, args.before.resolve())
    if not args.no_wheel:
        plugins["wheel"] = wheel_plugin(args.cache, python)
    sizes = [str(n) for n in args.sessions] + [f"{g:g}GB" for g in args.gb]
    projects = [(size, make_store(args.cache, size)) for size in sizes]
    with tempfile.TemporaryDirectory(prefix="baseline-venv-", dir=args.cache) as scratch:
        clean, version = fresh_python(python, Path(scratch) / "venv")
        print(f"baseline: {clean} (a venv made by this run from {python}), Python {version}")
        for side, plugin in plugins.items():
            print(f"{side}: {plugin} -> {found_package(plugin, env)}")
        try:
            figures, commands = run_rounds(args, plugins, projects, env, clean)
        except MeasuredNothing as exc:
            print(f"measured nothing: {exc}", file=sys.stderr)
            return 1
    load = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    missing = check_work(args.rounds, commands, figures[2])
    if missing:
        print("measured nothing: these rows did not do their work, so no figure is printed:", file=sys.stderr)
        for line in missing:
            print(f"  {line}", file=sys.stderr)
        return 1
    report(args, list(plugins), sizes, figures, load)
    return 0


def run_rounds(
    args: argparse.Namespace,
    plugins: dict[str, Path],
    projects: list[tuple[str, Path]],
    env: dict[str, str],
    clean: str,
) -> tuple[Figures, dict[str, Command]]:
    """Check every side, then time the rounds (the resident lookup of the recall rows running)."""
    for side, plugin in plugins.items():
        check_side(side, plugin, projects[0][1], env)
    commands: dict[str, Command] = {BASELINE: ([clean, "-I", "-c", "pass"], b"", REPO)}
    for _size, project in projects:
        seed_counters(project)
    for side, plugin in plugins.items():
        commands.update(side_commands(side, plugin, projects))
    if not args.recall_sessions:
        return measure(args.rounds, commands, env), commands
    from bench_prompt_recall import start_resident, stop_resident

    recall_project = recall_store(args.cache, args.recall_sessions, env)
    commands.update(recall_commands(recall_project, plugins))
    resident = start_resident(recall_project, env)
    try:
        return measure(args.rounds, commands, env), commands
    finally:
        stop_resident(recall_project, resident)


if __name__ == "__main__":
    sys.exit(main())
