"""Benchmark search on a (large) store against ripgrep and grep, side by side in one run.

    python bench/gen_store.py /tmp/mk1g --size-gb 1
    python bench/gen_store.py /tmp/mk50k --small-sessions 50000 --archives 100
    python bench/bench_search.py /tmp/mk1g [--runs 3] [--keep-index]

Prints, for the store given: the first index build (MB/s, with progress on stderr), the
index size in pages in use, a refresh of the unchanged store in process (min/median/max),
an incremental update, in-process query latency, and then, query by query, the whole
``memkeeper search --deep`` process against ``rg -nF`` and ``grep -rnF`` over the same
files and a clean interpreter (``python -I -c pass`` of a fresh venv this bench makes, the floor of
any Python command), each as min/median/max of ``--runs`` runs alternated side by side (each round
runs every side once, in a turning order), with the median CPU time beside (the stable figure on a
loaded machine). A side that errored on a query (memkeeper exit other than 0 or 3, no results; rg
or grep exit >= 2) gets no
figure for it, no ratio, and the bench exits 1. The queries are the generator's planted words, its vocabulary, path-like
words, words it never writes, one- and two-letter words, Korean and queries with no hit, in
two sets: the ones the search was tuned against, and HELD_OUT, never tuned against (report
both). memkeeper runs with its modules compiled, as pip installs it. Goals: at 1 GB memkeeper >= 3x ripgrep at the
median; at 50,000 small sessions not slower than ripgrep on any query; refresh of an
unchanged store <= 10 ms in process; build >= 20 MB/s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_build (a first build), also under python -P

from memkeeper.cli.output import EXIT_NOTHING
from memkeeper.core.store.paths import StorePaths

#: (query, kind): kind says where the words come from. The search was tuned against these.
QUERIES: list[tuple[str, str]] = [
    ("zephyr-7731", "planted"),
    ("quokka_ledger", "planted"),
    ("무지개다리", "planted"),
    ("rotation", "vocabulary"),
    ("pydantic", "vocabulary"),
    ('"stale lock files"', "vocabulary"),
    ("core/flush.py", "vocabulary"),
    ("마이그레이션", "vocabulary"),
    ("검색", "two letters"),
    ("db", "two letters"),
    ("a", "one letter"),
    ("x", "one letter"),
    ("kubernetes", "never written"),
    ("segfault", "never written"),
    ("deadline exceeded", "never written"),
    ("쿠버네티스", "never written"),
    ("qzxv-nothing-9931", "no hit"),
    ('"rotation lock zebra"', "no hit"),
]

#: Held out: chosen before the last round of tuning and never tuned against (report them apart).
HELD_OUT: list[tuple[str, str]] = [
    ("tui/app.py", "path"),
    ("core/search/engine.py", "path"),
    ("watcher", "vocabulary"),
    ("how is the daily budget checked", "question"),
    ('"daily budget"', "vocabulary"),
    ("세션", "two letters"),
    ("ok", "two letters"),
    ("e", "one letter"),
    ("grafana", "never written"),
    ("stack overflow", "never written"),
    ("rotaton", "typo"),
    ("zzyq-void-4417", "no hit"),
]


def grep_pattern(query: str) -> str:
    """What a person would grep for: the phrase, else the longest word."""
    if query.startswith('"'):
        return query.strip('"')
    return max(query.split(), key=len)


def text_bytes(root: Path) -> int:
    total = 0
    for folder in (root, root / "sessions"):
        for entry in os.scandir(folder):
            if (
                entry.is_file()
                and not entry.name.startswith(".")
                and (entry.name.endswith((".md", ".summary.json", ".l1.jsonl", ".l1.jsonl.gz")))
            ):
                total += entry.stat().st_size
    return total


def spread(values: list[float]) -> str:
    """min/median/max in milliseconds."""
    return f"{min(values) * 1000:7.1f} {statistics.median(values) * 1000:7.1f} {max(values) * 1000:7.1f}"


def timed(run: Callable[[], object], runs: int) -> list[float]:
    out: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        out.append(time.perf_counter() - t0)
    return out


def build(paths: StorePaths) -> None:
    from bench_build import build_progress, measured

    from memkeeper.core.search import reindex

    timing, stats = measured(lambda: reindex(paths, build_progress(5)))
    mb = stats.bytes_read / 1e6
    print(
        f"first build: {mb:.0f} MB, {stats.files_read:,} files, {stats.docs_added:,} entries in {timing.wall:.1f} s "
        f"= {mb / timing.wall:.1f} MB/s  (goal >= 20 MB/s)"
    )
    print(
        f"  CPU: writer {timing.cpu_self:.1f} s ({mb / max(timing.cpu_self, 1e-9):.1f} MB per CPU-second), "
        f"reader pool {timing.cpu_children:.1f} s"
    )


def in_process(paths: StorePaths, runs: int) -> None:
    from memkeeper.core.search import indexer, refresh, schema, search

    conn, _notes = schema.open_index(paths.search_db)
    print(f"index size: {indexer.live_bytes(conn) / 1e6:.0f} MB in pages in use")

    def unchanged() -> None:
        with indexer.writer(paths, 5):
            indexer.refresh_locked(paths, conn)

    unchanged()
    print(f"refresh, nothing changed (ms min/median/max): {spread(timed(unchanged, 50))}  (goal <= 10 ms)")
    sessions = sorted(paths.sessions.glob("*.l1.jsonl"))
    source = max(sessions[-50:], key=lambda p: p.stat().st_size)
    new = paths.sessions / "2099-01-01_000000_benchnew.l1.jsonl"
    shutil.copyfile(source, new)
    t0 = time.perf_counter()
    inc = refresh(paths)
    print(
        f"incremental update, one new session of {new.stat().st_size / 1e3:.0f} KB: "
        f"{(time.perf_counter() - t0) * 1000:.0f} ms ({inc.files_read} file read)"
    )
    new.unlink()
    refresh(paths)
    conn.close()
    # The index trusts the sessions folder's time only once it is 2 s old: a search right after
    # a session file came or went checks every file (timed here once, then waited out).
    t0, c0 = time.perf_counter(), time.process_time()
    search(paths, "zzz-settle-0", deep=True)
    print(
        f"search just after a session file was removed (every file checked): "
        f"{(time.perf_counter() - t0) * 1000:.0f} ms, CPU {(time.process_time() - c0) * 1000:.0f} ms"
    )
    time.sleep(3)
    print(
        "in-process search --deep, ms: the first search of the query in this process (its words not"
        " yet looked up: a TUI's first keystroke), then min/median/max of the runs after it; CPU median"
    )
    for label, queries in (("tuned", QUERIES), ("held out", HELD_OUT)):
        print(f"  {label}:")
        for query, kind in queries:
            t0 = time.perf_counter()
            search(paths, query, deep=True)
            first = time.perf_counter() - t0
            cpu: list[float] = []

            def one(q: str = query, out: list[float] = cpu) -> None:
                c0 = time.process_time()
                search(paths, q, deep=True)
                out.append(time.process_time() - c0)

            times = timed(one, runs)
            print(
                f"    {query!r:34} {kind:14} first {first * 1000:7.1f}  then {spread(times)}"
                f"  CPU {statistics.median(cpu) * 1000:7.1f}"
            )


def run_process(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """Wall and CPU (user + system) seconds of one process, its output read from a pipe, and its exit code."""
    start = time.perf_counter()
    # a pipe, not /dev/null: GNU grep stops at the first match when its output is /dev/null
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    while proc.stdout.read(1 << 16):
        pass
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, proc.returncode


@dataclass
class Side:
    """One side of the comparison: its command, the exit codes that mean it did its work, and its runs.
    A side with one failed run gets no figure: ``error`` says why."""

    name: str
    argv: list[str]
    ok: tuple[int, ...] = (0,)
    env: dict[str, str] | None = None
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    error: str | None = None

    def run(self) -> None:
        wall, cpu, code = run_process(self.argv, self.env)
        if code not in self.ok:
            self.error = self.error or f"exit {code}"
        self.walls.append(wall)
        self.cpus.append(cpu)

    @property
    def measured(self) -> bool:
        return self.error is None and bool(self.walls)

    def median(self) -> float:
        return statistics.median(self.walls)

    def cpu(self) -> float:
        return statistics.median(self.cpus)

    def columns(self) -> str:
        """min/median/max and the median CPU, or the error in their place."""
        if not self.measured:
            return f"{'no figure: ' + (self.error or 'not run'):>30}"
        return f"{spread(self.walls)} {self.cpu() * 1000:6.1f}"


def alternated(sides: list[Side], runs: int) -> None:
    """``runs`` rounds, each running every side once, the order turned by one each round: load that
    drifts lands on every side alike (pairs, not blocks)."""
    for round_ in range(runs):
        k = round_ % len(sides)
        for side in sides[k:] + sides[:k]:
            side.run()


def clean_python(cache: Path) -> str:
    """The interpreter of a fresh venv with nothing installed (made here once): the baseline. Not the
    system ``python3 -I``, whose site-packages may hold a .pth that imports something at every start."""
    venv = cache / "clean-venv"
    python = next((p for p in (venv / "bin" / "python", venv / "Scripts" / "python.exe") if p.exists()), None)
    if python is None:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--clear", str(venv)], check=True)
        python = next(p for p in (venv / "bin" / "python", venv / "Scripts" / "python.exe") if p.exists())
    return str(python)


def query_sides(
    query: str, cli: list[str], env: dict[str, str], rg: str | None, grep: str, clean: str, root: str
) -> list[Side]:
    """memkeeper, ripgrep (when installed), grep and the clean interpreter for one query."""
    pattern = grep_pattern(query)
    # the index and the trash are not what a person means to search
    grep_argv = [grep, "-rnF", "--exclude=.search.sqlite3*", "--exclude-dir=.state", "--exclude-dir=.trash"]
    sides = [Side("memkeeper", [*cli, query, "--deep"], ok=(0, EXIT_NOTHING), env=env)]  # 3: no results
    if rg:  # rg and grep exit 1 when nothing matched: work done all the same; 2 is an error
        sides.append(Side("rg", [rg, "-nF", "--", pattern, root], ok=(0, 1)))
    sides.append(Side("grep", [*grep_argv, "--", pattern, root], ok=(0, 1)))
    sides.append(Side("clean", [clean, "-I", "-c", "pass"]))
    return sides


def table(
    label: str, queries: list[tuple[str, str]], sides_for: Callable[[str], list[Side]], runs: int
) -> bool:
    """One set of queries, each side alternated with the others; True when a side errored somewhere."""
    print(f"\n  {label}:")
    print(
        f"  {'query':34} {'kind':14} {'memkeeper --deep':>23} {'CPU':>6} {'rg -nF':>23} {'CPU':>6}"
        f" {'grep -rnF':>23} {'CPU':>6} {'python -I':>23} {'CPU':>6}  rg/mk"
    )
    ratios: list[float] = []
    cpu_ratios: list[float] = []  # the same in CPU time: what load on the machine distorts least
    slower: list[str] = []
    failed = False
    for query, kind in queries:
        sides = sides_for(query)
        run_process(sides[0].argv, sides[0].env)  # warm the page cache the same for every side
        alternated(sides, runs)
        failed = failed or any(not side.measured for side in sides)
        mk, rg_side = sides[0], next((side for side in sides if side.name == "rg"), None)
        ratio = rg_side.median() / mk.median() if rg_side and rg_side.measured and mk.measured else None
        if ratio is not None and rg_side is not None:
            ratios.append(ratio)
            cpu_ratios.append(rg_side.cpu() / mk.cpu() if mk.cpu() > 0 else 0.0)
            if mk.median() > rg_side.median():
                slower.append(query)
        rg_cols = rg_side.columns() if rg_side else " " * 30
        shown = f"{ratio:5.1f}x" if ratio is not None else "    -"
        print(
            f"  {query!r:34} {kind:14} {mk.columns()} {rg_cols} {sides[-2].columns()} {sides[-1].columns()}"
            f" {shown}"
        )
    if ratios:
        print(
            f"  {label}: ripgrep/memkeeper median over the {len(ratios)} queries measured on both sides "
            f"{statistics.median(ratios):.1f}x, worst {min(ratios):.1f}x; slower than ripgrep on: "
            f"{', '.join(map(repr, slower)) or 'none'}"
        )
        print(
            f"  {label}: in CPU time (user + system, median of the runs; ripgrep reads with several threads)"
            f" ripgrep/memkeeper median {statistics.median(cpu_ratios):.1f}x, worst {min(cpu_ratios):.1f}x"
        )
    return failed


def whole_process(paths: StorePaths, runs: int, cache: Path) -> int:
    """The whole-process table; 1 when a side errored (and got no figure), else 0."""
    root = str(paths.root)
    # As installed (pip compiles the modules): a development shell's PYTHONDONTWRITEBYTECODE
    # would make every run compile memkeeper from source, which no user's install does.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["MEMKEEPER_NO_JOBS"] = "1"
    clean = clean_python(cache)
    # the installed command, as a user runs it (pip's script beside this interpreter)
    memkeeper = Path(sys.executable).with_name("memkeeper")
    cli = [str(memkeeper), "--project", str(paths.project), "search"]
    rg = shutil.which("rg")
    grep = shutil.which("grep") or "grep"
    print(
        f"\nwhole process, ms min/median/max of {runs} runs (CPU: median ms); output read from a pipe;"
        " the sides of each query alternated run by run"
    )
    print(f"  clean interpreter: {clean} -I -c pass (a fresh venv this bench made, nothing installed)")
    print(
        f"  memkeeper: {memkeeper} (the installed command), its modules compiled as pip installs them,"
        " after one warm-up run per query"
    )
    if rg is None:
        print("  ripgrep is not installed (apt-get install ripgrep): its column is empty")

    def sides_for(query: str) -> list[Side]:
        return query_sides(query, cli, env, rg, grep, clean, root)

    failed = False
    for label, queries in (("tuned", QUERIES), ("held out", HELD_OUT)):
        failed = table(label, queries, sides_for, runs) or failed
    if failed:
        print("\nbench_search: a side errored on some query: no figure printed for it (see 'no figure')")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("project", type=Path, help="project directory holding .claude/memory")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per query (default 3)")
    parser.add_argument("--keep-index", action="store_true", help="do not rebuild the index first")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(__file__).resolve().parent / "out",
        help="where the clean venv of the baseline is made (default bench/out)",
    )
    args = parser.parse_args(argv)

    paths = StorePaths(args.project.absolute())
    root = paths.root
    if not root.is_dir():
        print(f"bench_search: no store at {root}", file=sys.stderr)
        return 2
    text = text_bytes(root)
    print(
        f"store: {root}  text: {text / 1e6:.0f} MB in "
        f"{len(os.listdir(paths.sessions))} session files and {len(os.listdir(root))} top-level files"
    )
    print(f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if not args.keep_index or not paths.search_db.exists():
        build(paths)
    in_process(paths, args.runs)
    failed = whole_process(paths, args.runs, args.cache)
    print(f"\nload average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return failed


if __name__ == "__main__":
    sys.exit(main())
