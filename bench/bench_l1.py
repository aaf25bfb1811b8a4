"""L1 refinement throughput on the 2.7 MB real transcript, measured side by side.

Prints, for one run on this machine: a plain ``json.loads`` of every line (the floor),
the parser alone, entries with redaction but no writes, a cold refinement into an empty store (parse + entries + redaction +
durable append), and an incremental no-op (nothing new). Figures are medians of
``--repeat`` runs, as MB/s of transcript and entries/s, and as ratios to the floor.

    python bench/bench_l1.py [--transcript PATH] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

DEFAULT = (
    Path(__file__).resolve().parents[1]
    / ".."
    / "shared"
    / "transcripts"
    / "spotter"
    / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
)


def _median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transcript", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    if not args.transcript.is_file():
        print(f"transcript not found: {args.transcript} (the shared test data must be beside the repo)")
        return 2
    os.environ["MEMKEEPER_NO_JOBS"] = "1"
    from memkeeper.core.capture import l1, l1_entries
    from memkeeper.core.capture.transcript import subagent_transcripts
    from memkeeper.core.store.paths import StorePaths

    transcript = args.transcript.resolve()
    size = transcript.stat().st_size + sum(p.stat().st_size for p in subagent_transcripts(transcript))
    mb = size / 1_000_000

    def floor() -> None:
        for path in [transcript, *subagent_transcripts(transcript)]:
            with open(path, "rb") as handle:
                for line in handle:
                    json.loads(line.decode("utf-8", errors="replace"))

    def parse_only() -> None:
        from memkeeper.core.capture.transcript import iter_events

        for path in [transcript, *subagent_transcripts(transcript)]:
            for _event in iter_events(path):
                pass

    def build_only() -> None:
        from memkeeper.core.capture.transcript import iter_events

        for path in [transcript, *subagent_transcripts(transcript)]:
            for event in iter_events(path):
                entry = l1_entries.entry_from_event(event, event.ts or "", "bench")
                if entry is not None:
                    l1_entries.dumps_entry(entry)

    entries = 0

    def cold() -> None:
        nonlocal entries
        with tempfile.TemporaryDirectory() as tmp:
            result = l1.refine_transcript(StorePaths(Path(tmp)), transcript)
            entries = result.total_entries

    with tempfile.TemporaryDirectory() as tmp:
        warm_store = StorePaths(Path(tmp))
        l1.refine_transcript(warm_store, transcript)

        def noop() -> None:
            assert l1.refine_transcript(warm_store, transcript).new_entries == 0

        rows = [
            ("json.loads of every line (floor)", _median_seconds(floor, args.repeat)),
            ("parser only (typed events)", _median_seconds(parse_only, args.repeat)),
            ("entries + redaction, no writes", _median_seconds(build_only, args.repeat)),
            ("cold refine (empty store)", _median_seconds(cold, args.repeat)),
            ("incremental no-op", _median_seconds(noop, args.repeat)),
        ]
    base = rows[0][1]
    print(
        f"transcript: {transcript.name} + subagents, {mb:.2f} MB, {entries} L1 entries; median of {args.repeat}"
    )
    print(f"python {sys.version.split()[0]}")
    print(f"{'step':36} {'ms':>9} {'MB/s':>9} {'entries/s':>11} {'x floor':>8}")
    for name, seconds in rows:
        rate = mb / seconds if seconds else float("inf")
        per_entry = entries / seconds if seconds and "no-op" not in name else 0
        print(f"{name:36} {seconds * 1000:9.1f} {rate:9.1f} {per_entry:11.0f} {seconds / base:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
