"""Search as typed, in process: every prefix of the TUI benchmark's queries, and short queries of
each kind, searched the way the TUI's search box asks (deep on, 20 hits a tier, no freshness check).

    python bench/bench_keys.py PROJECT_DIR [--runs 5] [--cold]

For each key: the first search of that text in the process (what a keystroke costs: every
keystroke is a new text) and the ``runs - 1`` repeats after it, CPU and wall ms, in ranked mode
(the default) and in exact mode (the TUI's F5); then the slowest keys. Run it on a store whose
index is built (e.g. ``gen_store.py --size-gb 1`` after one search); beside it, the same
searches through the TUI: ``bench_tui.py PROJECT_DIR --exact``. With ``--cold`` (root, under the
bench lock) the OS page cache is dropped before each mode's warm-up, and the bytes each key read from
disk are printed beside its time.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benches, also under python -P
from bench_tui import QUERIES, drop_caches

from memkeeper.core.search import search
from memkeeper.core.search.engine import warm_up
from memkeeper.core.store.paths import StorePaths

#: Short queries of every kind: letters, pairs, Hangul syllables and words, punctuation, no-hit.
EXTRA = (
    "검",
    "색",
    "한국어",
    "데이터베이스 설정",
    "a",
    "e",
    "x",
    "ab",
    "de",
    "to",
    "-",
    ".",
    "/",
    "a.",
    "r-",
    "c++",
)


def spread(values: list[float]) -> str:
    return f"{min(values):6.1f} {statistics.median(values):6.1f} {max(values):6.1f}"


def disk_read() -> int:
    """Bytes this process has read from disk (not from the OS cache); 0 where the OS does not say."""
    try:
        with open("/proc/self/io") as io:
            return next(int(line.split()[1]) for line in io if line.startswith("read_bytes:"))
    except (OSError, StopIteration):
        return 0


def time_keys(
    paths: StorePaths, keys: list[str], runs: int, exact: bool
) -> dict[str, list[tuple[float, float, float]]]:
    """(wall ms, CPU ms, MB read from disk) of each search of each key, the first one first."""
    out: dict[str, list[tuple[float, float, float]]] = {}
    for key in keys:
        rows = []
        for _ in range(runs):
            wall, cpu, read = time.perf_counter(), time.process_time(), disk_read()
            search(paths, key, deep=True, limit=20, refresh=False, exact=exact)
            rows.append(
                (
                    (time.perf_counter() - wall) * 1000,
                    (time.process_time() - cpu) * 1000,
                    (disk_read() - read) / 1e6,
                )
            )
        out[key] = rows
    return out


def report(label: str, timed: dict[str, list[tuple[float, float, float]]]) -> None:
    first = [rows[0] for rows in timed.values()]
    again = [row for rows in timed.values() for row in rows[1:]]
    print(f"{label}, {len(timed)} keys; ms min/median/max:")
    print(
        f"  first search of a key:  CPU {spread([r[1] for r in first])}   wall {spread([r[0] for r in first])}"
        f"   read from disk {sum(r[2] for r in first):.1f} MB"
    )
    if again:
        print(
            f"  repeated:               CPU {spread([r[1] for r in again])}   wall {spread([r[0] for r in again])}"
        )
    hangul = [rows[0][1] for key, rows in timed.items() if any("\uac00" <= ch <= "\ud7af" for ch in key)]
    if hangul:
        print(f"  Hangul keys, first:     CPU {spread(hangul)}")
    slowest = sorted(timed.items(), key=lambda item: -item[1][0][1])[:6]
    print("  slowest first searches (CPU ms): " + ", ".join(f"{k!r} {rows[0][1]:.0f}" for k, rows in slowest))
    walls = sorted(timed.items(), key=lambda item: -item[1][0][0])[:6]
    print(
        "  slowest first searches (wall ms, MB from disk): "
        + ", ".join(f"{k!r} {rows[0][0]:.0f} ({rows[0][2]:.1f})" for k, rows in walls)
    )


def warm(paths: StorePaths) -> None:
    """The warm-up the TUI runs after its first frame, timed, then the garbage collector settled."""
    wall, cpu, read = time.perf_counter(), time.process_time(), disk_read()
    warm_up(paths, True)
    print(
        f"warm-up: wall {(time.perf_counter() - wall) * 1000:.0f} ms, CPU {(time.process_time() - cpu) * 1000:.0f} ms,"
        f" read from disk {(disk_read() - read) / 1e6:.1f} MB"
    )
    gc.collect()
    gc.freeze()  # as the TUI does once it is warm


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("project", type=Path, help="project directory holding .claude/memory (index built)")
    parser.add_argument("--runs", type=int, default=5, help="searches of each key (the first counted apart)")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="drop the OS page cache before the warm-up (root; under the bench lock)",
    )
    args = parser.parse_args(argv)
    paths = StorePaths(args.project)
    keys = list(dict.fromkeys([q[:i] for q in QUERIES for i in range(1, len(q) + 1)] + list(EXTRA)))
    print("load average (1, 5, 15 min) at the start: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for label, exact in (("ranked, deep", False), ("exact (F5), deep", True)):
        if args.cold:
            drop_caches()
            print(
                "cold: the OS page cache dropped (sync; echo 3 > /proc/sys/vm/drop_caches) before the warm-up"
            )
        warm(paths)
        report(label, time_keys(paths, keys, args.runs, exact=exact))
    print("load average (1, 5, 15 min) at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
