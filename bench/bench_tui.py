"""memkeeper-tui speed and memory: cold start to the first tree, keystroke → search results drawn, activity screen, peak RSS.

    python bench/bench_tui.py [PROJECT_DIR] [--runs 5] [--exact] [--cold]

PROJECT_DIR defaults to the search benchmark's 1 GB store at ``$TMPDIR/mk-bench-store`` when it
exists (made by ``bench/gen_store.py``); otherwise a smaller store is generated in a temporary
folder (and the output says so). Each run is a fresh process (headless app, 120×36):

- cold start as a user gets it: the console script ``memkeeper-tui PROJECT`` started in a
  120×36 pseudo-terminal (live refresh on), from the spawn until the bytes it wrote show the
  tree's L1 tier, memory.md's title and a bullet of it, with the CPU the process used by then;
  beside it ``python -I -S -c pass`` (a clean interpreter) and this venv's ``python -c pass``;
  byte-compiled, as an installed package runs. The headless runs below also report their first
  frame with the store and when their process went idle after it;
- keystroke: with deep on (L1 searched too), each query typed key by key into an empty search
  box, from each key until the first frame that shows its results is drawn (the first key is
  a one-letter query), and the process CPU time meanwhile; with ``--exact``, once more with
  exact mode on (F5: every word as a substring);
- with ``--cold`` (root, under the bench lock), the keystrokes only, each process started
  on an empty OS page cache (``sync; echo 3 > /proc/sys/vm/drop_caches``): the first keys as
  after a reboot, or right after a job that read or wrote gigabytes;
- peak RSS of that process (ru_maxrss) after it also opened the largest L1 session;
- activity screen (A), on a copy of the store whose big files are hard links (the screen keeps
  its per-file readings in the store's ``.state``, which starts with the session titles only,
  and the benchmark store stays untouched), once the app is idle after its first frame:
  from the key until the first frame that shows its first paint (totals and the memory-growth
  plot), the decisions listed, and every session counted (the full view); cold (no saved
  readings: the first open ever, the store's search index copied with it, as its jobs leave
  it), warm (a new process, readings saved by the cold one), and cold on a copy without the
  index (a store never indexed: every session is read), with the process CPU time meanwhile.

Goals (issue): first tree ≤ 1.0 s, keystroke ≤ 150 ms, activity screen ≤ 500 ms, peak memory ≤ 200 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_STORE = Path(tempfile.gettempdir()) / "mk-bench-store"
#: Typed key by key into an empty box with deep on: generator words, a planted one, Korean, and
#: words the generator never writes (held out), so the first key of each is a one-letter query.
QUERIES = ("rotation", "zephyr-7731", "검색", "lock", "kubernetes", "qzxv")

CHILD = r"""
import asyncio, json, resource, sys, time
T0 = float(sys.argv[2])
from memkeeper.tui.startup import hold_gc
hold_gc()  # as the console script does before it imports the app
from pathlib import Path
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.model import Target
from memkeeper.tui.screens.browse import BrowseScreen
from memkeeper.tui.screens.search import SearchScreen
from memkeeper.tui.widgets.docview import DocView
from textual.widgets import Input

paths = StorePaths(Path(sys.argv[1]))
queries = json.loads(sys.argv[3])
exact = len(sys.argv) > 4 and sys.argv[4] == 'exact'
out = {}

def store_shown():
    screen = app.screen
    return isinstance(screen, BrowseScreen) and app.snapshot is not None and screen.query_one(DocView).items

frames = []  # perf_counter() of each frame drawn

async def searches_done():
    # The search workers finished (not every worker: live refresh's watcher runs till the end).
    # (An empty list would mean every worker to wait_for_complete.)
    searches = [w for w in app.workers if w.group == "search"]
    if searches:
        await app.workers.wait_for_complete(searches)

def display(screen, update):
    # Headless Textual composes every frame but skips turning it into the bytes a terminal
    # gets: do that here, so each frame costs what it would in a terminal.
    if update is not None:
        update.render_segments(app.console)
        frames.append(time.perf_counter())
        if "first_frame" not in out and store_shown():  # the first frame with tree and memory.md
            out["first_frame"] = time.time() - T0
    draw(screen, update)

async def main():
    global app, draw
    # Live refresh on, as the console script starts it; the user's preferences neither read
    # nor written (deep search is on by default).
    app = MemkeeperApp(paths, prefs=False)
    draw, app._display = app._display, display
    shown = []  # perf_counter() when each answer for the latest query was put on the screen
    core_ms = []
    show_results = SearchScreen._show_results
    def showing(screen, results, elapsed_ms, serial):
        latest = serial == screen._serial and screen.is_attached  # else dropped, as it is stale
        show_results(screen, results, elapsed_ms, serial)
        if latest:
            shown.append(time.perf_counter())
            core_ms.append(elapsed_ms)
    SearchScreen._show_results = showing
    async with app.run_test(size=(120, 36)) as pilot:
        while "first_frame" not in out:
            await asyncio.sleep(0.002)
        await pilot.pause()  # and the process idle (what starts after the first frame is done)
        out["first_paint"] = time.time() - T0
        out["rss_first_paint_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        out["sessions"] = len(app.snapshot.sessions)
        out["archives"] = len(app.snapshot.archives)
        await pilot.press("slash")
        await pilot.pause()
        assert app.screen.state.deep  # L1 sessions are searched too
        if exact:  # every word as a substring (the F5 toggle)
            await pilot.press('f5')
            await pilot.pause()
            assert app.screen.state.exact
        search_box = app.screen.query_one(Input)
        keystrokes = []  # per query: ms from each key to its results drawn
        cores = []
        cpus = []
        for query in queries:
            if search_box.value:
                search_box.value = ""
                await searches_done()
                await pilot.pause()
            typed, core, cpu = [], [], []
            for char in query:
                before = len(shown)
                start, cpu_start = time.perf_counter(), time.process_time()
                # the key as the Input handles it (pilot.press adds its own ~70 ms of test overhead)
                search_box.insert_text_at_cursor(char)
                deadline = start + 60
                while len(shown) == before or frames[-1] < shown[-1]:
                    await asyncio.sleep(0.001)
                    if time.perf_counter() > deadline:
                        raise SystemExit(f"no results drawn within 60 s of the key {char!r} of {query!r}")
                # the first frame after the results were put in the list
                typed.append((next(t for t in frames if t > shown[-1]) - start) * 1000)
                cpu.append((time.process_time() - cpu_start) * 1000)
                await pilot.pause()
                core.append(core_ms[-1])
                await searches_done()
            keystrokes.append(typed)
            cores.append(core)
            cpus.append(cpu)
        out["keystroke_ms"] = keystrokes
        out["core_ms"] = cores
        out["keystroke_cpu_ms"] = cpus
        out["rss_after_search_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        await pilot.press("escape")
        if app.snapshot.sessions:
            biggest = max(app.snapshot.sessions, key=lambda s: s.size)
            start = time.perf_counter()
            app.screen.query_one("TierTree").select_target(Target("l1", biggest.name))
            doc = app.screen.query_one(DocView)
            while not (doc.items and doc.items[0].kind in ("user", "assistant", "tool", "tool_result", "muted")):
                await asyncio.sleep(0.002)
            await pilot.pause()
            out["open_l1_ms"] = (time.perf_counter() - start) * 1000
            out["open_l1_bytes"] = biggest.size
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

asyncio.run(main())
print(json.dumps(out))
"""


ACTIVITY_CHILD = r"""
import asyncio, json, sys, time
from memkeeper.tui.startup import hold_gc
hold_gc()  # as the console script does
from pathlib import Path
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.screens.activity import ActivityScreen
from memkeeper.tui.screens.browse import BrowseScreen
from memkeeper.tui.widgets.docview import DocView

out = {}
marks = {}

def display(screen, update):
    # Each frame as a terminal gets it (see CHILD); marks: the first frame that shows the
    # screen's first paint, its decisions, and every session counted.
    if update is not None:
        update.render_segments(app.console)
        shown = getattr(screen, "_shown", None)
        if isinstance(screen, ActivityScreen) and shown is not None:
            now = time.perf_counter()
            marks.setdefault("first", now)
            if shown.findings is not None:
                marks.setdefault("findings", now)
            if shown.counted is None:
                marks.setdefault("done", now)
    draw(screen, update)

async def main():
    global app, draw
    app = MemkeeperApp(StorePaths(Path(sys.argv[1])), watch=False, prefs=False)
    draw, app._display = app._display, display
    async with app.run_test(size=(120, 36)) as pilot:
        while not (isinstance(app.screen, BrowseScreen) and app.snapshot and app.screen.query_one(DocView).items):
            await asyncio.sleep(0.002)
        for _ in range(2):  # what starts after the first frame (titles, warm-ups) done too
            await app.workers.wait_for_complete()
            await pilot.pause()
        cpu, start = time.process_time(), time.perf_counter()
        app.open_activity()
        while "done" not in marks:
            await asyncio.sleep(0.002)
        out["cpu_ms"] = (time.process_time() - cpu) * 1000
        out.update({k: (v - start) * 1000 for k, v in marks.items()})
        await pilot.pause()
        out["findings_n"] = len(app.screen.findings)
        await app.workers.wait_for_complete()  # the readings are saved in .state

asyncio.run(main())
print(json.dumps(out))
"""


def activity_copy(project: Path, with_index: bool) -> Path:
    """A copy of the store for the activity screen: sessions, archives and summaries are hard
    links (only read), small files are copied, and ``.state`` starts empty. ``with_index``:
    the search index is copied too (a store whose jobs have run has one; the hard links keep
    its files current), else left out (a store never indexed)."""
    source = project / ".claude" / "memory"
    target = Path(tempfile.mkdtemp(prefix="mk-tui-activity-")) / "store"
    folder = target / ".claude" / "memory"

    def place(src: str, dst: str) -> None:
        name = os.path.basename(src)
        big = "/sessions/" in src or name.startswith("memory_")
        try:
            if big:
                os.link(src, dst)
                return
        except OSError:
            pass
        shutil.copy2(src, dst)

    shutil.copytree(
        source,
        folder,
        copy_function=place,
        ignore=shutil.ignore_patterns("search.db*", ".state", *(() if with_index else (".search.sqlite3*",))),
    )
    (folder / ".state").mkdir(mode=0o700)
    titles = source / ".state" / "titles.json"  # the session titles the store has (not timed here)
    if titles.is_file():
        shutil.copy2(titles, folder / ".state" / titles.name)
    return target


def child_report(args: list[str], env: dict[str, str]) -> Any:
    """Run ``python -c ARGS`` in a fresh process; the JSON report on its last line of output."""
    proc = subprocess.run([sys.executable, "-c", *args], capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"a timed process failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def time_activity(project: Path, env: dict[str, str]) -> list[dict[str, float]]:
    """Opens of the activity screen, each in a fresh process: the first ever (no saved readings)
    of the store with its search index, the next one (readings saved), and the first ever of
    the store without an index."""
    runs = []
    for with_index, opens in ((True, 2), (False, 1)):
        copy = activity_copy(project, with_index)
        try:
            for _ in range(opens):
                runs.append(child_report([ACTIVITY_CHILD, str(copy)], env))
        finally:
            shutil.rmtree(copy.parent, ignore_errors=True)
    return runs


def project_dir(arg: Path | None) -> tuple[Path, str]:
    if arg is not None:
        return arg, f"store: {arg}"
    if (DEFAULT_STORE / ".claude" / "memory").is_dir():
        return DEFAULT_STORE, f"store: the search benchmark's store {DEFAULT_STORE}"
    target = Path(tempfile.mkdtemp(prefix="mk-tui-bench-")) / "store"
    subprocess.run(
        [sys.executable, str(HERE / "gen_store.py"), str(target), "--size-gb", "0.1", "--archives", "200"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return (
        target,
        f"store: {DEFAULT_STORE} not found, generated a SMALLER store (0.1 GB L1, 200 archives) in {target}",
    )


def store_size(project: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(project / ".claude" / "memory"):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def python_startup(flags: list[str]) -> float:
    """An interpreter doing nothing: ``-I -S`` is a clean one (no site-packages, no
    editable-install finder); without flags, this venv's as its scripts start."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *flags, "-c", "pass"], check=True)
    return time.perf_counter() - start


def spread(values: list[float]) -> str:
    return f"{min(values):6.0f} {statistics.median(values):6.0f} {max(values):6.0f}"


def drop_caches() -> None:
    """Empty the OS page cache (Linux, root only): the store and its index read from disk again,
    as after a reboot or a job that read or wrote gigabytes. Run it under the bench lock."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as control:
            control.write("3\n")
    except OSError as exc:
        raise SystemExit(f"--cold needs root on Linux (/proc/sys/vm/drop_caches): {exc}") from exc


def run_children(
    project: Path, runs: int, env: dict[str, str], exact: bool = False, cold: bool = False
) -> list[dict[str, Any]]:
    """``runs`` fresh processes: first paint, typed queries, the largest session opened; with
    ``cold``, each started on an empty OS page cache."""
    results = []
    for _ in range(runs):
        if cold:
            drop_caches()
        t0 = time.time()
        mode = "exact" if exact else "ranked"
        results.append(child_report([CHILD, str(project), repr(t0), json.dumps(QUERIES), mode], env))
    return results


#: Terminal control sequences (CSI, OSC, DCS, charset and single-character escapes).
ESCAPES = re.compile(
    rb"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|P[^\x1b]*\x1b\\|[()][0-9A-B]|[=>78DEHMNOZc])"
)
#: What the first frame with the store shows, as text: the tree's L1 tier with its count, the
#: viewer's title over memory.md (its token count) and a bullet of it.
STORE_DRAWN = (b"L1 sessions (", b" tokens (", "•".encode())


@dataclass
class TerminalStart:
    """One start of the console script in a pseudo-terminal."""

    wall: float  # s from spawning until the store is on the terminal
    cpu: float  # s of CPU the process had used by then (user + system, clock-tick resolution)


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _drain(fd: int, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                if not os.read(fd, 65536):
                    return
            except OSError:
                return


def terminal_start(script: Path, project: Path, env: dict[str, str]) -> TerminalStart:
    """Start ``memkeeper-tui PROJECT`` as a user does, in a 120×36 pseudo-terminal, and time it
    until the bytes it wrote show the store (tree and memory.md); then press q."""
    import fcntl
    import pty
    import struct
    import termios

    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the console script, as a shell would start it
        os.execve(str(script), [str(script), str(project)], dict(env, TERM="xterm-256color"))
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    written = b""
    try:
        while time.perf_counter() - start < 60:
            if not select.select([fd], [], [], 0.05)[0]:
                continue
            try:
                written += os.read(fd, 65536)
            except OSError:
                break
            text = ESCAPES.sub(b"", written)
            if all(mark in text for mark in STORE_DRAWN):
                wall, cpu = time.perf_counter() - start, _cpu_seconds(pid)
                os.write(fd, b"q")
                _drain(fd, 5)
                return TerminalStart(wall, cpu)
        raise SystemExit(f"memkeeper-tui did not draw the store within 60 s; it wrote: {written[-2000:]!r}")
    finally:
        try:
            os.kill(pid, 15)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)


def print_start(results: list[dict[str, Any]], project: Path, env: dict[str, str], runs: int) -> None:
    script = Path(sys.executable).parent / "memkeeper-tui"
    starts = [terminal_start(script, project, env) for _ in range(runs)]
    clean = [python_startup(["-I", "-S"]) for _ in range(runs)]
    plain = [python_startup([]) for _ in range(runs)]
    ms = 1000
    print(f"start-up, {runs} fresh processes each, wall ms min/median/max:")
    print(f"  python -I -S -c pass:          {spread([t * ms for t in clean])}")
    print(f"  python -c pass (this venv):    {spread([t * ms for t in plain])}")
    print(
        f"  memkeeper-tui PROJECT in a terminal → store drawn (tree + memory.md):"
        f" {spread([s.wall * ms for s in starts])}   (goal ≤ 1000 ms;"
        f" {statistics.median(s.wall for s in starts) / statistics.median(clean):.0f}× python -I -S)"
    )
    print(f"    CPU of the process by then:  {spread([s.cpu * ms for s in starts])}")
    frames = [r["first_frame"] * ms for r in results]
    settled = [r["first_paint"] * ms for r in results]
    print(f"  headless app (the keystroke runs) → first frame with the store: {spread(frames)}")
    print(f"    … and its process idle:      {spread(settled)} (what starts after the first frame done)")


def print_keystrokes(results: list[dict[str, Any]], mode: str = "") -> None:
    keys = [k for r in results for typed in r["keystroke_ms"] for k in typed]
    cpu = [k for r in results for typed in r["keystroke_cpu_ms"] for k in typed]
    firsts = [r["keystroke_ms"][n][0] for r in results for n in range(len(QUERIES))]
    print(
        f"keystroke → results drawn, deep on (L1 included){mode}; each query typed key by key into an empty box,"
        " waiting for each key's results; ms min/median/max:"
    )
    print(f"  first keystroke (one letter): {spread(firsts)} over {len(firsts)} (goal ≤ 150 ms)")
    print(f"  every keystroke:              {spread(keys)} over {len(keys)} (goal ≤ 150 ms)")
    print(f"  CPU of the process per key:   {spread(cpu)}")
    for number, query in enumerate(QUERIES):
        ui = [k for r in results for k in r["keystroke_ms"][number]]
        core = [k for r in results for k in r["core_ms"][number]]
        print(f"  {query!r:>16}: {spread(ui)} drawn, of which {spread(core)} in core search()")
    slowest = sorted(
        (
            (drawn, r["core_ms"][number][i], query[: i + 1], run)
            for run, r in enumerate(results, 1)
            for number, query in enumerate(QUERIES)
            for i, drawn in enumerate(r["keystroke_ms"][number])
        ),
        reverse=True,
    )[:5]
    print(
        "  slowest keys (query so far, run): "
        + ", ".join(
            f"{text!r} ({run}) {drawn:.0f} ms, {core:.0f} in core" for drawn, core, text, run in slowest
        )
    )


def print_keys(project: Path, runs: int, env: dict[str, str], exact: bool, cold: bool) -> None:
    """Keystrokes alone, ranked (and exact); with ``cold``, the OS page cache dropped before each process."""
    if cold:
        print("cold: the OS page cache dropped (sync; echo 3 > /proc/sys/vm/drop_caches) before each process")
    for mode, label in ((False, ""), (True, ", exact words (F5)"))[: 2 if exact else 1]:
        results = run_children(project, runs, env, exact=mode, cold=cold)
        frames = spread([r["first_frame"] * 1000 for r in results])
        print(f"headless app → first frame with the store{', cold' if cold else ''}: {frames}")
        print_keystrokes(results, label + (", cold cache" if cold else ""))


def print_activity(project: Path, env: dict[str, str]) -> None:
    cold, warm, unindexed = time_activity(project, env)
    print(
        "activity screen (A), ms from the key: first useful paint (totals, growth plot) / decisions listed /"
        " every session counted; CPU ms of the process meanwhile (goal ≤ 500 ms):"
    )
    rows = (
        ("cold (first open, indexed)", cold),
        ("warm (new process)", warm),
        ("cold, store never indexed", unindexed),
    )
    for label, run in rows:
        print(
            f"  {label:26}{run['first']:7.0f} {run['findings']:7.0f} {run['done']:7.0f}"
            f"   cpu {run['cpu_ms']:6.0f}   ({run['findings_n']:,} decisions and issues)"
        )


def load_line(when: str) -> str:
    return f"load average (1, 5, 15 min) at the {when}: " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("project", type=Path, nargs="?", help="project directory holding .claude/memory")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes to time (default 5)")
    for flag, text in (
        ("--exact", "also type the queries in exact mode (F5)"),
        ("--activity-only", "time the activity screen only"),
        ("--keys-only", "time the keystrokes only (no start-up, activity or RSS rows)"),
        (
            "--cold",
            "keystrokes only, each process started on an empty OS page cache (root; under the bench lock)",
        ),
    ):
        parser.add_argument(flag, action="store_true", help=text)
    args = parser.parse_args(argv)
    project, note = project_dir(args.project)
    print(note)
    print(load_line("start"))
    print(f"store size on disk: {store_size(project) / 1e9:.2f} GB")
    env = dict(os.environ, MEMKEEPER_NO_JOBS="1")
    # Timed as installed: byte-compiled (pip compiles on install; a checkout's first run does).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    warm = (
        "import memkeeper.tui.launch, memkeeper.tui.app, memkeeper.tui.screens.search, memkeeper.core.search"
    )
    subprocess.run([sys.executable, "-c", warm], check=True, env=env)
    # The search index is derived data: build it once, outside the timings (the TUI would too).
    from memkeeper.core.search import refresh
    from memkeeper.core.store.paths import StorePaths

    start = time.time()
    refresh(StorePaths(project))
    print(f"search index refresh before timing: {time.time() - start:.1f} s")
    if args.activity_only:
        print_activity(project, env)
        print(load_line("end"))
        return 0
    if args.cold or args.keys_only:
        print_keys(project, args.runs, env, args.exact, args.cold)
        print(load_line("end"))
        return 0
    results = run_children(project, args.runs, env)
    first = results[0]
    print(f"L1 sessions: {first['sessions']:,}, archives: {first['archives']:,}")
    print_start(results, project, env, max(args.runs, 10))
    print_keystrokes(results)
    if args.exact:
        print_keystrokes(run_children(project, args.runs, env, exact=True), ", exact words (F5)")
    if "open_l1_ms" in first:
        opens = [r["open_l1_ms"] for r in results]
        print(
            f"open the largest L1 session:    {statistics.median(opens):7.0f} ms median "
            f"({first['open_l1_bytes'] / 1e6:.1f} MB file)"
        )
    print_activity(project, env)
    rss = [r["peak_rss_mb"] for r in results]
    print(
        f"peak RSS:                       {max(rss):7.0f} MB max (goal ≤ 200 MB); at first paint "
        f"{max(r['rss_first_paint_mb'] for r in results):.0f} MB, after the searches "
        f"{max(r['rss_after_search_mb'] for r in results):.0f} MB"
    )
    print(load_line("end"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
