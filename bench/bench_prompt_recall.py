"""Per-prompt recall's cost: the whole UserPromptSubmit hook process against ``python3 -I -c pass``.

The store is :mod:`bench_hooks`' (``gen_store.py`` with SESSIONS small sessions and 40
archives) plus one earlier session holding the answer, with its search index built. The
hook runs through the launcher Claude Code runs (``plugin/bin/memkeeper.cmd``), four ways:

- ``recall off``: ``recall.enabled: false`` (the counting hook alone);
- ``in-hook, hit`` / ``in-hook, unrelated``: recall on, no MCP server running, so the hook
  imports the search engine and looks up itself; a prompt the earlier session answers
  (a fresh session each round, so it is injected every time) and one nothing answers;
- ``resident, hit`` / ``resident, unrelated``: the same with a resident lookup serving the
  store (:class:`memkeeper.core.recall.lookup.RecallServer`, what the MCP server runs while
  Claude Code keeps it, and the detached ``recall`` job the hook starts without it; here
  that job, ``memkeeper job recall``, in its own process), so the hook only asks over the
  store's authenticated channel (:mod:`memkeeper.core.recall.ask`) and counts the prompt itself.

The baseline is ``python -I -c pass`` of a fresh empty venv (:mod:`bench_hooks`), with
``python3 -I -S -c pass`` beside it. The resident lookup runs for the whole benchmark on its
own copy of the store (as the MCP server runs for a session); its CPU time per answered
prompt (from ``/proc``) is printed too (it is not the hook's, but it is spent while the
prompt waits).

Runs are interleaved (every command once per round, shuffled); the figures are medians of
wall time and of the child's CPU time (user + system), each with its ratio to the
baseline's, so a busy machine shows in the wall times but less in the CPU times. The goal
is a ratio <= 1.5 with recall on. The hooks start no job (``MEMKEEPER_NO_JOBS=1``): the
in-hook cases stay in-hook.

Usage: python bench/bench_prompt_recall.py [--rounds N]

    python bench/bench_prompt_recall.py --locomo [DIR] [--min-confidence X]

measures what per-prompt recall injects rather than what it costs: each LoCoMo question
(``../shared/recall/locomo-tune``, third-party data read where it is, see :mod:`locomo`) is
typed as a prompt in its own conversation's project, through :func:`memkeeper.core.recall.lookup.lookup_here`
(the lookup the hook and the resident server run, with the configured confidence unless
``--min-confidence``), then in each other conversation's project. Printed: the share of
questions whose injection holds an evidence turn (by the entry ids it names, exchange
turns included), the share with any injection, the precision (right / injected), and the
injections in another conversation's project (there, anything injected is wrong).

    python bench/bench_prompt_recall.py --own DIR [--min-confidence X]

does the same with our own question sets (``bench/recall_questions``) in the store that
``bench_recall.py --keep DIR`` built (real coding sessions among generated noise): right when
the injection names the entry that answers; then every one of those questions in each LoCoMo
conversation's project, and each LoCoMo question in that store (anything injected is wrong).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling modules, also under python -P
from bench_hooks import BASELINE, fresh_python, make_store

if TYPE_CHECKING:
    from locomo import Conversation

BARE = "python -I -S -c pass"

from memkeeper.core.recall.ask import RECALL_DIR, Channel

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "plugin" / "bin" / "memkeeper.cmd"
SESSIONS = 50
HIT = "how did we fix the flaky S3 upload retry?"
UNRELATED = "write a haiku about autumn leaves falling"
ANSWER = "The flaky S3 upload retry was fixed with exponential backoff and jitter in the uploader client."


def add_earlier_session(root: Path) -> None:
    entries = [
        {
            "ts": "2026-11-20T09:00:00.000Z",
            "role": "user",
            "text": "the S3 uploads keep failing",
            "session": "earlier1",
        },
        {"ts": "2026-11-20T09:01:00.000Z", "role": "assistant", "text": ANSWER, "session": "earlier1"},
    ]
    path = root / "sessions" / "2026-11-20_090000_earlier1.l1.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def run(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str]) -> tuple[float, float, bytes]:
    """(wall seconds, child CPU seconds, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, cwd=cwd, env=env, capture_output=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def _serving(project: Path) -> Path | None:
    """The secret file of the resident lookup serving ``project``'s store, if one does."""
    key = Path(Channel(str(project / ".claude" / "memory"), create=True).key_file)
    return key if key.exists() else None


def start_resident(project: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The detached ``recall`` job as the hook starts it, serving ``project`` once it listens."""
    argv = [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(project), "job", "recall"]
    proc = subprocess.Popen(argv, env=dict(env, MEMKEEPER_IN_JOB="1"), cwd=project)
    deadline = time.monotonic() + 60
    while not _serving(project):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the recall job did not start serving")
        time.sleep(0.05)
    return proc


def stop_resident(project: Path, proc: subprocess.Popen[bytes]) -> None:
    key = _serving(project)
    if key is not None:
        key.unlink()  # the job stops when its secret is gone
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: An entry's id as an injection names it (``l1-<file hash>-<offset>``).
ENTRY_ID = r"\b[a-z0-9]+-[0-9a-f]{10}-\d+"


def injected_turns(
    project: Path, question: str, min_confidence: float, turn_of: dict[str, str]
) -> set[str] | None:
    """The turns per-prompt recall injects for ``question`` in ``project`` (None: nothing injected)."""
    from memkeeper.core.recall.lookup import lookup_here

    text = lookup_here(str(project), None, question, min_confidence)
    if not text:
        return None
    return {turn_of[i] for i in re.findall(ENTRY_ID, text) if i in turn_of}


def indexed_conversations(folder: Path, work: Path) -> list[Conversation]:
    """The LoCoMo conversations of ``folder`` built into projects under ``work``, each with its
    search index (per-prompt recall reads an index and never builds one: without it, it injects nothing)."""
    import locomo

    from memkeeper.core.search import search

    convs = locomo.build_all(folder, work)
    for conv in convs:
        search(conv.paths, "build the index", deep=True)
    return convs


def locomo_recall(folder: Path, min_confidence: float | None) -> None:
    """Per-prompt recall on the LoCoMo conversations of ``folder``: see the module's docstring."""
    import locomo

    from memkeeper.core.config.reader import DEFAULT_RECALL_CONFIDENCE

    low = DEFAULT_RECALL_CONFIDENCE if min_confidence is None else min_confidence
    with tempfile.TemporaryDirectory(prefix="bench-prompt-locomo-") as work:
        convs = indexed_conversations(folder, Path(work))
        print(f"per-prompt recall on {len(convs)} LoCoMo conversations, minConfidence {low}")
        print(f"  {'asked in':<22} {'questions':>9} {'injected':>9} {'right':>7} {'precision':>9}")
        total = {"n": 0, "injected": 0, "right": 0, "elsewhere": 0, "asked elsewhere": 0}
        for conv in convs:
            n = injected = right = 0
            for qa in conv.questions:
                turns = injected_turns(conv.paths.project, qa["question"], low, conv.turn_of)
                n += 1
                if turns is not None:
                    injected += 1
                    right += bool(turns & locomo.evidence(qa))
                for other in convs:
                    if other is not conv:
                        total["asked elsewhere"] += 1
                        total["elsewhere"] += (
                            injected_turns(other.paths.project, qa["question"], low, {}) is not None
                        )
            total["n"] += n
            total["injected"] += injected
            total["right"] += right
            print(
                f"  conversation {conv.name:<9} {n:>9} {injected / n:>9.1%} {right / n:>7.1%}"
                f" {right / max(1, injected):>9.1%}"
            )
        n = total["n"]
        print(
            f"  {'all, own project':<22} {n:>9} {total['injected'] / n:>9.1%} {total['right'] / n:>7.1%}"
            f" {total['right'] / max(1, total['injected']):>9.1%}"
        )
        print(
            f"  another conversation's project: {total['elsewhere']} of {total['asked elsewhere']} questions"
            " injected anything"
        )


def own_recall(keep: Path, min_confidence: float | None, folder: Path) -> None:
    """Per-prompt recall on our own question sets in the store kept at ``keep``, and across domains."""
    import bench_recall

    from memkeeper.core.config.reader import DEFAULT_RECALL_CONFIDENCE
    from memkeeper.core.recall.lookup import lookup_here
    from memkeeper.core.search.engine import iter_all_docs
    from memkeeper.core.store.paths import paths_for

    low = DEFAULT_RECALL_CONFIDENCE if min_confidence is None else min_confidence
    paths = paths_for(keep / "project")
    docs = list(iter_all_docs(paths))
    print(f"per-prompt recall on our own question sets, minConfidence {low}")
    print(f"  {'set':<22} {'questions':>9} {'injected':>9} {'right':>7} {'precision':>9}")
    ours: list[str] = []
    for name in ("tuning", "heldout"):
        questions = bench_recall.load_questions(name)
        injected = right = 0
        for question in questions:
            answer = bench_recall.resolve(paths, docs, question["answer"])
            text = lookup_here(str(paths.project), None, question["q"], low)
            injected += bool(text)
            right += answer in set(re.findall(ENTRY_ID, text))
            ours.append(question["q"])
        n = len(questions)
        print(f"  {name:<22} {n:>9} {injected / n:>9.1%} {right / n:>7.1%} {right / max(1, injected):>9.1%}")
    if not folder.is_dir():
        return
    with tempfile.TemporaryDirectory(prefix="bench-prompt-own-") as work:
        convs = indexed_conversations(folder, Path(work))
        elsewhere = sum(bool(lookup_here(str(c.paths.project), None, q, low)) for c in convs for q in ours)
        print(
            f"  ours in a LoCoMo conversation's project: {elsewhere} of {len(ours) * len(convs)} injected anything"
        )
        theirs = [qa["question"] for conv in convs for qa in conv.questions]
        here = sum(bool(lookup_here(str(paths.project), None, q, low)) for q in theirs)
        print(f"  LoCoMo questions in our sessions' project: {here} of {len(theirs)} injected anything")


def main() -> int:
    import locomo

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="interleaved rounds (default 20)")
    parser.add_argument(
        "--locomo",
        type=Path,
        nargs="?",
        const=locomo.TUNING,
        help="measure what is injected on these LoCoMo conversations instead (default ../shared/recall/locomo-tune)",
    )
    parser.add_argument(
        "--own",
        type=Path,
        metavar="DIR",
        help="measure what is injected for our own question sets in the store bench_recall.py --keep DIR built",
    )
    parser.add_argument(
        "--min-confidence", type=float, help="with --locomo or --own: instead of the configured default"
    )
    args = parser.parse_args()
    if args.own is not None:
        own_recall(args.own, args.min_confidence, locomo.TUNING)
        return 0
    if args.locomo is not None:
        locomo_recall(args.locomo, args.min_confidence)
        return 0

    cache = Path(tempfile.mkdtemp(prefix="mk-bench-recall-"))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMKEEPER"))}
        (cache / "home").mkdir()
        env.update(HOME=str(cache / "home"), MEMKEEPER_NO_JOBS="1")
        # Two copies of the store: one served by a resident lookup for the whole run (as the
        # MCP server serves a session), one with none, so the hook there looks up itself.
        projects = {
            "in-hook": make_store(cache / "alone", str(SESSIONS)),
            "resident": make_store(cache / "served", str(SESSIONS)),
        }
        for project in projects.values():
            add_earlier_session(project / ".claude" / "memory")
            subprocess.run(
                [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(project), "reindex"],
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
        clean, _version = fresh_python(sys.executable, cache / "baseline-venv")
        hook = ["/bin/sh", "-c", f'"{LAUNCHER}" UserPromptSubmit']  # as Claude Code runs a checkout's hook
        cases: dict[str, tuple[list[str], str, bool]] = {
            BASELINE: ([clean, "-I", "-c", "pass"], "", True),
            BARE: ([sys.executable, "-I", "-S", "-c", "pass"], "", True),
            "recall off": (hook, HIT, False),
            "in-hook, hit": (hook, HIT, True),
            "in-hook, unrelated": (hook, UNRELATED, True),
            "resident, hit": (hook, HIT, True),
            "resident, unrelated": (hook, UNRELATED, True),
        }
        server = start_resident(projects["resident"], env)
        walls: dict[str, list[float]] = {name: [] for name in cases}
        cpus: dict[str, list[float]] = {name: [] for name in cases}
        served_cpu: list[float] = []
        injected: dict[str, int] = dict.fromkeys(cases, 0)
        names = list(cases)
        rng = random.Random(0)
        try:
            for round_ in range(args.rounds + 1):  # round 0 warms the page cache and .pyc files
                rng.shuffle(names)
                for name in names:
                    argv, prompt, enabled = cases[name]
                    project = projects["resident" if name.startswith("resident") else "in-hook"]
                    root = project / ".claude" / "memory"
                    config = {"memory": {"flushEvery": 10**9}, "recall": {"enabled": enabled}}
                    (root / "config.json").write_text(json.dumps(config))
                    session = f"bench-{name.replace(' ', '').replace(',', '-')}-{round_}"
                    stdin = json.dumps(
                        {"session_id": session, "cwd": str(project), "prompt": prompt}
                    ).encode()
                    before = cpu_of(server.pid)
                    wall, cpu, out = run(argv, stdin if prompt else b"", project, env)
                    after = cpu_of(server.pid)
                    if round_:
                        walls[name].append(wall)
                        cpus[name].append(cpu)
                        injected[name] += bool(out.strip())
                        if name.startswith("resident"):
                            served_cpu.append(after - before)
                    for state in (root / ".state" / RECALL_DIR).glob("bench-*"):
                        state.unlink()
        finally:
            stop_resident(projects["resident"], server)
        base_wall = statistics.median(walls[BASELINE])
        base_cpu = statistics.median(cpus[BASELINE])
        print(
            f"UserPromptSubmit whole process, median of {args.rounds} interleaved rounds;"
            f" load {os.getloadavg()[0]:.1f}; baseline {clean}"
        )
        print(f"  {'case':<24} {'wall ms':>8} {'ratio':>6}   {'cpu ms':>7} {'ratio':>6}   injected")
        for name in cases:
            wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
            print(
                f"  {name:<24} {wall * 1000:>8.1f} {wall / base_wall:>6.2f}   {cpu * 1000:>7.1f} "
                f"{cpu / base_cpu:>6.2f}   {injected[name]}/{args.rounds}"
            )
        print(
            f"  (resident lookups answered by the recall job, pid {server.pid}; its CPU per resident case, mean:"
            f" {sum(served_cpu) / len(served_cpu) * 1000:.1f} ms; budget: ratio <= 2.5 for a hit)"
        )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
