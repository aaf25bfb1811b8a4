"""Model calls per session under the old flush rule and the content rule, on real transcripts.

    .venv/bin/python bench/bench_flush_calls.py [FOLDER_OR_TRANSCRIPT ...]

Each transcript (``*.jsonl``, subagent files aside) is refined into L1 in a throwaway
store, then its hooks are replayed: every prompt and tool call counts one event, a
flush runs every ``flushEvery`` (10) events with reason ``count`` and once at
SessionEnd. Both rules see the same flushes and the same chunks (``chunk_entries``):

- before: every chunk of new entries was one model call;
- after: ``core.flush_rules.plan_batch`` (trivial batches skipped locally, small ones
  wait while the session goes on or are written extractively at its end).

No model is called. Default folder: tests/fixtures/transcripts.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from memkeeper.core.capture.l1 import entries_since, refine_transcript
from memkeeper.core.config.reader import DEFAULT_FLUSH_EVERY
from memkeeper.core.log.flush import MAX_CHUNKS, chunk_entries
from memkeeper.core.log.flush_rules import plan_batch
from memkeeper.core.store.paths import StorePaths, ensure_store

MIN_CALL_CHARS = 1500  # the default of summarizer.minCallChars


def transcripts(args: list[str]) -> list[Path]:
    roots = [Path(a) for a in args] or [
        Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "transcripts"
    ]
    found: list[Path] = []
    for root in roots:
        files = [root] if root.is_file() else sorted(root.rglob("*.jsonl"))
        found += [f for f in files if "subagents" not in f.parts and not f.name.startswith("hook-inputs")]
    return found


def l1_entries(transcript: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        paths = StorePaths(Path(tmp))
        ensure_store(paths)
        refine_transcript(paths, transcript)
        return entries_since(paths, None)  # as the flush reads them, oldest first


def flush(pending: list[dict[str, Any]], final: bool, rule: str, plans: Counter[str]) -> tuple[int, int]:
    """(model calls, entries consumed) of one flush run over ``pending``."""
    calls = done = 0
    for _ in range(MAX_CHUNKS):
        rest = pending[done:]
        if not rest:
            break
        chunk = chunk_entries(rest)[0]
        more = len(chunk) < len(rest)
        plan = (
            "model" if rule == "before" else plan_batch(chunk, final=final or more, min_chars=MIN_CALL_CHARS)
        )
        plans[plan] += 1
        if plan == "wait":
            break
        calls += plan == "model"
        done += len(chunk)
    return calls, done


def replay(entries: list[dict[str, Any]], rule: str) -> tuple[int, int, Counter[str]]:
    """(model calls, flush runs, plans) for one session under ``rule``."""
    plans: Counter[str] = Counter()
    calls = runs = mark = unflushed = 0
    for i, entry in enumerate(entries):
        if entry.get("role") in ("user", "tool") and not (
            entry.get("role") == "user" and entry.get("sidechain")
        ):
            unflushed += 1
        if unflushed >= DEFAULT_FLUSH_EVERY:
            unflushed = 0
            runs += 1
            made, done = flush(entries[mark : i + 1], False, rule, plans)
            calls, mark = calls + made, mark + done
    runs += 1
    made, _ = flush(entries[mark:], True, rule, plans)
    return calls + made, runs, plans


def main(args: list[str]) -> int:
    rows = []
    for transcript in transcripts(args):
        entries = l1_entries(transcript)
        if not entries:
            continue
        before, runs, _ = replay(entries, "before")
        after, _, plans = replay(entries, "after")
        rows.append((transcript.name[:40], len(entries), runs, before, after, plans))
    print(f"{'session':40} {'L1':>5} {'flushes':>7} {'before':>6} {'after':>5}  after: plans")
    for name, count, runs, before, after, plans in rows:
        detail = ", ".join(f"{k} {v}" for k, v in sorted(plans.items()))
        print(f"{name:40} {count:5} {runs:7} {before:6} {after:5}  {detail}")
    total_before = sum(r[3] for r in rows)
    total_after = sum(r[4] for r in rows)
    print(
        f"{'total (' + str(len(rows)) + ' sessions)':40} {'':5} {sum(r[2] for r in rows):7} {total_before:6} {total_after:5}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
