"""Benchmark the first index build against plain baselines over the same bytes, in one run.

    python bench/gen_store.py /tmp/mk1g --size-gb 1
    cp -a /tmp/mk1g /tmp/mk1g-copy          # the bench deletes and rebuilds the store's index
    python bench/bench_build.py /tmp/mk1g-copy [--baselines ''] [--single-writer]

Prints, side by side: the first build of the store's search index (the index deleted, then
built as a first search or ``memkeeper reindex`` builds it, with progress on stderr) as wall
time, the writer's CPU time and its children's (the reader pool and the side writer, see
core/search/side.py), MB/s of the files' bytes and MB per CPU-second of each; with
``--single-writer``, first the same build as it was before the side writer; the index size
in pages in use and per table; and over the same files (as ``discover`` lists them): ripgrep reading them all (``rg -z -c`` of a string that never
occurs: the floor of any reading of these bytes), and plain SQLite FTS5 inserts of their raw
text (8 KB rows, one transaction, ``unicode61`` words and then ``trigram``, contentless,
no parsing: what SQLite alone costs to index these bytes). The load average is printed
before and after (CPU time is the stable figure on a loaded machine). Goal: the first
build >= 20 MB/s.
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from memkeeper.core.store.paths import StorePaths

ROW_BYTES = 8192


@dataclass
class Timing:
    wall: float
    cpu_self: float
    cpu_children: float


T = TypeVar("T")


def measured(run: Callable[[], T]) -> tuple[Timing, T]:
    r0, c0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    value = run()
    took = time.perf_counter() - t0
    r1, c1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    own = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    children = c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime
    return Timing(took, own, children), value


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def build_progress(every: float) -> Callable[[int, int, str], None]:
    """An index build's ``progress``: "building: N of M MB" on stderr at most every ``every`` seconds, and
    at the end."""
    shown = 0.0

    def progress(done: int, total: int, _file: str) -> None:
        nonlocal shown
        now = time.monotonic()
        if now - shown >= every or (total and done >= total):
            shown = now
            print(f"  building: {done / 1e6:.0f} of {total / 1e6:.0f} MB", file=sys.stderr, flush=True)

    return progress


def build(paths: StorePaths, single_writer: bool = False) -> tuple[int, int]:
    """The first build: (bytes read, files read). ``single_writer``: as before the side writer
    (the index's writer writes every table itself), for an A/B in one run."""
    from memkeeper.core.search import indexer, schema, side

    schema.remove_db(paths.search_db)
    start = side.SideWriter.start
    if single_writer:
        side.SideWriter.start = classmethod(lambda _cls, _conn, _scratch: None)  # type: ignore[method-assign,assignment]
    try:
        stats = indexer.refresh(paths, build_progress(10))
    finally:
        side.SideWriter.start = start  # type: ignore[method-assign]
    return stats.bytes_read, stats.files_read


def index_sizes(paths: StorePaths) -> tuple[int, list[tuple[str, int]]]:
    """Live bytes of the index, and the biggest tables (an FTS table with its shadow tables)."""
    from memkeeper.core.search import indexer, schema

    conn = schema.connect(paths.search_db)
    try:
        live = indexer.live_bytes(conn)
        rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    finally:
        conn.close()
    tables: dict[str, int] = {}
    for name, size in rows:
        base = name
        for suffix in ("_data", "_idx", "_docsize", "_config", "_content"):
            if name.endswith(suffix):
                base = name.removesuffix(suffix)
        tables[base] = tables.get(base, 0) + int(size)
    return live, sorted(tables.items(), key=lambda item: -item[1])[:8]


def file_texts(paths: StorePaths) -> Iterator[str]:
    """The text of every file the index reads (gzip files unpacked)."""
    from memkeeper.core.search.sources import discover

    for source in discover(paths):
        data = (paths.root / source.rel).read_bytes()
        if source.rel.endswith(".gz"):
            data = gzip.decompress(data)
        yield data.decode("utf-8", "replace")


def plain_fts(paths: StorePaths, tokenizer: str) -> None:
    """Raw text in 8 KB rows into one contentless FTS5 table, in one transaction."""
    with tempfile.TemporaryDirectory(prefix="bench-build-") as folder:
        conn = sqlite3.connect(Path(folder, "plain.sqlite3"), isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{tokenizer}', content='')")
        conn.execute("BEGIN")
        for text in file_texts(paths):
            conn.executemany(
                "INSERT INTO t(body) VALUES(?)",
                [(text[i : i + ROW_BYTES],) for i in range(0, len(text), ROW_BYTES)],
            )
        conn.execute("COMMIT")
        conn.close()


def ripgrep(paths: StorePaths, rg: str) -> None:
    """Every file read, searched for a string that never occurs (gzip files unpacked)."""
    cmd = [rg, "-z", "-c", "-F", "--no-ignore", "-g", "!*.sqlite3*", "-g", "!.state", "qzxv-nothing-9931"]
    subprocess.run([*cmd, str(paths.root)], stdout=subprocess.DEVNULL, check=False)


def row(label: str, timing: Timing, nbytes: int, extra: str = "") -> str:
    """Wall and CPU time (this process, its children), MB/s, MB per CPU-second of each process."""
    mb = nbytes / 1e6
    own = mb / timing.cpu_self if timing.cpu_self >= 0.05 else float("inf")
    children = mb / timing.cpu_children if timing.cpu_children >= 0.05 else float("inf")
    return (
        f"{label:46} {timing.wall:7.1f} {timing.cpu_self:7.1f} {timing.cpu_children:7.1f} "
        f"{mb / max(timing.wall, 1e-9):7.1f} {own:9.1f} {children:9.1f}  {extra}"
    )


def compare_start_methods(paths: StorePaths, methods: list[str], rounds: int) -> None:
    """The first build with the reader pool and the side writer started by each method, alternated."""
    import multiprocessing

    from memkeeper.core.search import cutting

    print(f"machine: {os.cpu_count()} CPUs, load average {load()}")
    print(f"\n{'':46} {'wall s':>7} {'CPU s':>7} {'child s':>7} {'MB/s':>7} {'MB/CPU-s':>9} {'child':>9}")
    for turn in range(rounds):
        for method in methods:
            cutting.mp_context = partial(multiprocessing.get_context, method)
            timing, (nbytes, files) = measured(lambda: build(paths))
            print(row(f"round {turn + 1}: {method} ({nbytes / 1e6:.0f} MB, {files:,} files)", timing, nbytes))
    print(f"load average after: {load()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "project", type=Path, help="project directory holding .claude/memory (its index is rebuilt)"
    )
    parser.add_argument(
        "--baselines",
        default="rg,unicode61,trigram",
        help="comma-separated baselines to run: rg, unicode61, trigram (default all; '' for none)",
    )
    parser.add_argument(
        "--single-writer",
        action="store_true",
        help="also time the build as it was before the side writer (one process writes every table)",
    )
    parser.add_argument(
        "--start-methods",
        default="",
        help="only compare the first build with these multiprocessing start methods, alternated (e.g. fork,spawn)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds of --start-methods (default 2)")
    args = parser.parse_args(argv)
    paths = StorePaths(args.project.absolute())
    if not paths.root.is_dir():
        print(f"bench_build: no store at {paths.root}", file=sys.stderr)
        return 2
    if args.start_methods:
        compare_start_methods(paths, args.start_methods.split(","), args.rounds)
        return 0
    print(f"store: {paths.root}")
    print(f"machine: {os.cpu_count()} CPUs, load average {load()}")
    before = None
    if args.single_writer:
        before = measured(lambda: build(paths, single_writer=True))
        print(f"load average after the single-writer build: {load()}")
    timing, value = measured(lambda: build(paths))
    nbytes, files = value
    # CPU s: this process (the writer); child s: its children (the reader pool, the side writer)
    live, tables = index_sizes(paths)
    print(f"\n{'':46} {'wall s':>7} {'CPU s':>7} {'child s':>7} {'MB/s':>7} {'MB/CPU-s':>9} {'child':>9}")
    if before is not None:
        print(row("single writer (before the side writer)", before[0], nbytes))
    print(
        row(
            f"memkeeper first build ({nbytes / 1e6:.0f} MB, {files:,} files)",
            timing,
            nbytes,
            f"index {live / 1e6:,.0f} MB live  (goal >= 20 MB/s)",
        )
    )
    chosen = {name.strip() for name in args.baselines.split(",") if name.strip()}
    rg = shutil.which("rg")
    if "rg" in chosen and rg:
        timing, _ = measured(lambda: ripgrep(paths, rg))
        print(row("ripgrep reading the same files (rg -z -c)", timing, nbytes, "(rg is the child)"))
    for tokenizer in ("unicode61", "trigram"):
        if tokenizer in chosen:
            timing, _ = measured(partial(plain_fts, paths, tokenizer))
            print(row(f"plain FTS5 {tokenizer}, raw text in 8 KB rows", timing, nbytes))
    print("\nindex tables (MB):  " + ", ".join(f"{name} {size / 1e6:,.0f}" for name, size in tables))
    print(f"load average at the end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
