"""Recall benchmark: do questions in plain words find the entry that answers them?

    python bench/bench_recall.py [--transcripts DIR] [--noise-mb 20] [--keep DIR]

Builds a store from real Claude Code transcripts (``DIR``, by default the shared
transcripts beside the repository: ``../shared/transcripts``) through the L1 refiner
(what ``memkeeper final`` runs), mixed with a generated store (``bench/gen_store.py``,
``--noise-mb`` of L1 plus archives, summaries and memory.md) so that the answers sit among
thousands of other entries. Then asks the questions of ``bench/recall_questions/``:

- ``tuning.jsonl``: the set the ranking was tuned against;
- ``heldout.jsonl``: never looked at while tuning; report it as the honest figure.

Each question names its answer by a stable key (session, entry timestamp, role and the
start of its text), not by a rank. Many are phrased with words that are not in the entry.
Three systems answer, over the same entries, every tier searched, 10 hits each:

- exact: ``search(..., exact=True, deep=True)``, the grep-like mode (today's search);
- ranked: ``search(...)``, the new default;
- bm25: plain Okapi BM25 (``rank_bm25``) over every entry's text, the query's words ORed,
  lowercased words, no stemming, no stop words, no field weights.

Prints R@1, R@5, R@10, MRR (of the first 10) and the empty-answer rate per system and
set, the empty rate over the questions that share a word with the store, and the
in-process median time per question.

    python bench/bench_recall.py --speed PROJECT_DIR [--in-process-only]

times ranked questions on an existing store (e.g. ``gen_store.py --size-gb 1``): the
in-process median and p95 of ``search()`` (every tier, L1 included, freshness check
included) over SPEED_QUESTIONS, then whole ``memkeeper search`` processes against
``grep -rnF`` over the same files for a few words, each run 3 times (medians).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memkeeper.core.capture.l1 import refine_transcript
from memkeeper.core.search import search
from memkeeper.core.search.engine import iter_all_docs
from memkeeper.core.search.sources import Doc, l1_body
from memkeeper.core.store.paths import StorePaths, paths_for

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the sibling modules, also under python -P
QUESTIONS = HERE / "recall_questions"
K = 10
_WORD = re.compile(r"[^\W_]+")


def _transcripts(root: Path) -> list[Path]:
    """Every main transcript under ``root`` (subagent files are read with their session)."""
    return sorted(
        p for p in root.rglob("*.jsonl") if "subagents" not in p.parts and p.name != "hook-inputs.jsonl"
    )


def build_store(project: Path, transcripts: Path, noise_mb: float) -> StorePaths:
    if noise_mb > 0:
        subprocess.run(
            [
                sys.executable,
                "-P",
                str(HERE / "gen_store.py"),
                str(project),
                "--size-gb",
                str(noise_mb / 1000),
                "--archives",
                "40",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    paths = paths_for(project)
    for transcript in _transcripts(transcripts):
        refine_transcript(paths, transcript, transcript.stem)
    return paths


def load_questions(name: str) -> list[dict[str, Any]]:
    with open(QUESTIONS / f"{name}.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def resolve(paths: StorePaths, docs: list[Doc], answer: dict[str, str]) -> str:
    """The id of the one L1 entry the key names."""
    found = [
        d.id
        for d in docs
        if d.tier == "l1"
        and isinstance(d.raw, dict)
        and d.raw.get("ts") == answer["ts"]
        and d.raw.get("role") == answer["role"]
        and answer["session"] in d.file
        and l1_body(d.raw).startswith(answer["starts"])
    ]
    if len(found) != 1:
        raise SystemExit(f"bench_recall: the key {answer} names {len(found)} entries")
    return found[0]


class Bm25:
    """Okapi BM25 over every entry (rank_bm25), the query's words ORed: plain (lowercased words),
    or with ``stem`` (stop words left out, Porter's stemmer from snowballstemmer) and ``neighbours``
    (each entry scored with that share of the scores of the entries just before and after it in
    its file added)."""

    def __init__(self, docs: list[Doc], stem: bool = False, neighbours: float = 0.0) -> None:
        from rank_bm25 import BM25Okapi

        self.ids = [d.id for d in docs]
        self.stem = _stemmer() if stem else None
        self.model = BM25Okapi([self._words(d.body) or [""] for d in docs])
        self.neighbours = neighbours
        files = [d.file for d in docs]
        n = len(docs)
        self.before = [i - 1 if i > 0 and files[i - 1] == files[i] else None for i in range(n)]
        self.after = [i + 1 if i + 1 < n and files[i + 1] == files[i] else None for i in range(n)]

    def _words(self, text: str) -> list[str]:
        found = _WORD.findall(text.lower())
        if self.stem is None:
            return found
        from memkeeper.core.search.words import STOP_WORDS

        return [self.stem(w) for w in found if w not in STOP_WORDS]

    def __call__(self, question: str) -> list[str]:
        words = self._words(question)
        if not words:
            return []
        own = self.model.get_scores(words)
        scores = own
        if self.neighbours:
            share = self.neighbours
            scores = [
                s + share * ((own[b] if b is not None else 0.0) + (own[a] if a is not None else 0.0))
                for s, b, a in zip(own, self.before, self.after, strict=True)
            ]
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:K]
        return [self.ids[i] for i in order if scores[i] > 0]


def _stemmer() -> Callable[[str], str]:
    import snowballstemmer  # type: ignore[import-untyped]

    stem: Callable[[str], str] = snowballstemmer.stemmer("porter").stemWord
    return stem


#: The share of its neighbours' scores the "bm25+stem+nbr" baseline adds to an entry's.
NEIGHBOUR_SHARE = 0.5


def baselines(docs: list[Doc]) -> dict[str, Callable[[str], list[str]]]:
    """The two baselines, over ``docs`` (file order): plain BM25, and BM25 with stemming and neighbours."""
    return {"bm25": Bm25(docs), "bm25+s+n": Bm25(docs, stem=True, neighbours=NEIGHBOUR_SHARE)}


def run(
    system: Callable[[str], list[str] | list[list[str]]],
    questions: list[dict[str, Any]],
    answers: list[str],
    sharing: set[int],
) -> dict[str, float]:
    """R@k, MRR and empty answers of ``system``: a list of ids (one per hit), or of groups of
    ids (a hit and the turns of its exchange), best first."""
    ranks: list[int | None] = []
    empty: list[int] = []
    times: list[float] = []
    for i, (question, answer) in enumerate(zip(questions, answers, strict=True)):
        start = time.perf_counter()
        found = system(question["q"])
        times.append(time.perf_counter() - start)
        groups = [g if isinstance(g, list) else [g] for g in found][:K]
        if not groups:
            empty.append(i)
        ranks.append(next((k + 1 for k, g in enumerate(groups) if answer in g), None))
    n = len(questions)
    return {
        "R@1": sum(1 for r in ranks if r == 1) / n,
        "R@5": sum(1 for r in ranks if r and r <= 5) / n,
        "R@10": sum(1 for r in ranks if r and r <= 10) / n,
        "MRR": sum(1.0 / r for r in ranks if r) / n,
        "empty": len(empty) / n,
        "empty*": sum(1 for i in empty if i in sharing) / max(1, len(sharing)),
        "p50 ms": statistics.median(times) * 1000,
    }


#: Questions in the generator's words (bench/gen_store.py), asked as a person would.
SPEED_QUESTIONS = (
    "why does the flush job time out on huge tool outputs?",
    "what did we change so the hook stays under 50 ms",
    "how are stale lock files handled by the watcher",
    "which part redacts secrets in commands",
    "did the migration break on Windows paths",
    "the summary job double counts partial summaries",
    "when did the TUI stop dropping Korean text",
    "pydantic validation of corrupt JSON",
    "what retries concurrent hooks",
    "how is the daily budget checked",
    "gzip sessions and the memory index",
    "the carryover tail after a user report",
    "subagent sidechains in the transcript parser",
    "symlinked projects in the plugin installer",
    "검색 인덱스 손상된 JSON",
    "세션 기록 한국어 검색",
    "zephyr-7731",
    "where did we mention quokka_ledger",
    "unicode file names and the archive writer",
    "backs up the WAL file",
)
GREP_WORDS = ("zephyr-7731", "quokka_ledger", "무지개다리", "carryover", "sidechains")


def speed(project: Path, processes: bool = True) -> None:
    """Wall time, and CPU time beside it: on a shared machine the CPU seconds are the stable figure
    (``processes``: then whole ``memkeeper search`` processes against grep)."""
    paths = paths_for(project)
    search(paths, "warm up")  # a fresh index: not part of the figures
    wall: list[float] = []
    cpu: list[float] = []
    for _round in range(3):
        for question in SPEED_QUESTIONS:
            start, start_cpu = time.perf_counter(), time.process_time()
            search(paths, question, limit=K)
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    print(f"in-process ranked search, every tier with L1, {len(SPEED_QUESTIONS)} questions x 3:")
    n = len(SPEED_QUESTIONS)
    print(
        f"  first round only (each question's words looked up for the first time in this process):"
        f" wall p50 {statistics.median(wall[:n]) * 1000:6.1f} ms, CPU p50 {statistics.median(cpu[:n]) * 1000:6.1f} ms"
    )
    for label, times in (("wall", wall), ("CPU", cpu)):
        times.sort()
        p50, p95 = statistics.median(times) * 1000, times[int(len(times) * 0.95)] * 1000
        print(f"  {label:<4} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  max {times[-1] * 1000:6.1f} ms")
    if not processes:
        return
    memkeeper = Path(sys.executable).with_name("memkeeper")
    print("whole process, output to a pipe, median of 3: memkeeper search vs grep -rnF over the store")
    print(
        f"  {'word':<14} {'memkeeper wall/CPU ms':>22} {'grep wall/CPU ms':>18} {'x (wall)':>9} {'x (CPU)':>8}"
    )
    for word in GREP_WORDS:
        ours = _median_run([str(memkeeper), "--project", str(project), "search", word, "--limit", str(K)])
        grep = _median_run(["grep", "-rnF", word, str(paths.root)])
        print(
            f"  {word:<14} {ours[0] * 1000:11.0f} / {ours[1] * 1000:7.0f} {grep[0] * 1000:9.0f} / {grep[1] * 1000:6.0f}"
            f" {grep[0] / ours[0]:8.1f}x {grep[1] / ours[1]:7.1f}x"
        )


def _median_run(argv: list[str]) -> tuple[float, float]:
    """Median wall and CPU (user + system) seconds of three runs of ``argv``."""
    import os

    sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benches, also under python -P
    from bench_search import run_process  # the one way the benches time a process

    # as installed (pip compiles the modules): a dev shell's PYTHONDONTWRITEBYTECODE would make
    # every memkeeper run compile itself from source
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs = [run_process(argv, env) for _ in range(3)]
    return statistics.median(w for w, _, _ in runs), statistics.median(c for _, c, _ in runs)


def _missing_share(question: str, body: str) -> float:
    """The share of the question's content words (stop words aside) its entry does not hold."""
    from memkeeper.core.search.words import STOP_WORDS

    wanted = {w for w in _WORD.findall(question.lower()) if w not in STOP_WORDS}
    have = set(_WORD.findall(body.lower()))
    return len(wanted - have) / len(wanted) if wanted else 0.0


def shares_a_word(question: str, vocabulary: set[str]) -> bool:
    return any(w in vocabulary for w in _WORD.findall(question.lower()))


def conversational(folder: Path) -> None:
    """The LoCoMo conversations of ``folder``: ranked search beside the two baselines, by category and conversation."""
    import locomo

    with tempfile.TemporaryDirectory(prefix="bench-locomo-") as work:
        convs = locomo.build_all(folder, Path(work))
        rows: dict[str, list[dict[str, Any]]] = {"ranked": [], "bm25": [], "bm25+s+n": []}
        for conv in convs:
            docs = [d for d in iter_all_docs(conv.paths) if d.tier == "l1"]
            search(conv.paths, "warm up the index", deep=True)
            systems = baselines(docs)
            for qa in conv.questions:
                wanted = locomo.evidence(qa)
                hits = search(conv.paths, qa["question"], deep=True, limit=K).hits[:K]
                found = {"ranked": [conv.turns(h) for h in hits]}
                for name, system in systems.items():
                    found[name] = [
                        {conv.turn_of[i]} if i in conv.turn_of else set() for i in system(qa["question"])
                    ]
                for name, turns in found.items():
                    rank = next((k + 1 for k, ts in enumerate(turns) if ts & wanted), None)
                    rows[name].append(
                        {
                            "conversation": conv.name,
                            "category": qa["category"],
                            "rank": rank,
                            "empty": not turns,
                        }
                    )
    n = len(rows["ranked"])
    print(
        f"\nLoCoMo: {len(convs)} conversations, {n} questions asked as written (a hit covers its exchange's turns)"
    )
    print(
        f"  {'system':<10} {'slice':<16} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'empty':>6}"
    )
    for name, found_rows in rows.items():
        print("\n".join(locomo.table(found_rows, name)))


def own_sets(paths: StorePaths, sets: list[str], noise_mb: float) -> None:
    """Our own question sets on the store of ``paths``: exact, ranked and the two baselines."""
    docs = list(iter_all_docs(paths))
    search(paths, "warm up the index", deep=True)  # builds the index: not timed per question
    vocabulary = {w for d in docs for w in _WORD.findall(d.body.lower())}
    systems: dict[str, Callable[[str], Any]] = {
        "exact": lambda q: [h.id for h in search(paths, q, exact=True, deep=True, limit=K).hits][:K],
        "ranked": lambda q: [[h.id, *(t.id for t in h.exchange)] for h in search(paths, q, limit=K).ranked][
            :K
        ],
        **baselines(docs),
    }
    print(
        f"store: {len(docs):,} entries ({sum(1 for d in docs if d.tier == 'l1'):,} L1), {noise_mb:g} MB noise"
    )
    for name in sets:
        ask_set(name, paths, docs, vocabulary, systems)


def ask_set(
    name: str,
    paths: StorePaths,
    docs: list[Doc],
    vocabulary: set[str],
    systems: dict[str, Callable[[str], Any]],
) -> None:
    """One of our question sets asked of each system, one line of figures per system."""
    questions = load_questions(name)
    answers = [resolve(paths, docs, q["answer"]) for q in questions]
    sharing = {i for i, q in enumerate(questions) if shares_a_word(q["q"], vocabulary)}
    by_id = {d.id: d for d in docs}
    apart = [_missing_share(q["q"], by_id[a].body) for q, a in zip(questions, answers, strict=True)]
    print(
        f"\n{name}: {len(questions)} questions ({len(sharing)} share a word with the store;"
        f" {sum(1 for x in apart if x > 0)} use words their entry lacks,"
        f" {sum(1 for x in apart if x >= 0.5)} half or more, {sum(1 for x in apart if x == 1)} all)"
    )
    print(
        f"  {'system':<8} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'empty':>6} {'empty*':>7} {'p50 ms':>7}"
    )
    for label, system in systems.items():
        figures = run(system, questions, answers, sharing)
        print(
            f"  {label:<8} {figures['R@1']:6.1%} {figures['R@5']:6.1%} {figures['R@10']:6.1%}"
            f" {figures['MRR']:6.3f} {figures['empty']:6.1%} {figures['empty*']:7.1%} {figures['p50 ms']:7.1f}"
        )


def main(argv: list[str] | None = None) -> int:
    import locomo

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = HERE.parent.parent / "shared" / "transcripts"
    parser.add_argument("--transcripts", type=Path, default=default, help="folder of real transcripts")
    parser.add_argument("--noise-mb", type=float, default=20.0, help="generated L1 around the answers (MB)")
    parser.add_argument("--keep", type=Path, help="build the store here and keep it (reused if there)")
    parser.add_argument("--sets", default="tuning,heldout", help="question sets to ask (default both)")
    parser.add_argument(
        "--locomo",
        type=Path,
        default=locomo.TUNING,
        help="LoCoMo conversations (third-party data, read where it is; skipped when absent)",
    )
    parser.add_argument(
        "--speed", type=Path, metavar="PROJECT_DIR", help="time ranked questions on this store"
    )
    parser.add_argument(
        "--in-process-only",
        action="store_true",
        help="with --speed: only the in-process figures (no whole processes against grep)",
    )
    args = parser.parse_args(argv)
    if args.speed is not None:
        speed(args.speed, processes=not args.in_process_only)
        return 0
    if not args.transcripts.is_dir():
        print(f"bench_recall: no transcripts at {args.transcripts} (use --transcripts)", file=sys.stderr)
        return 2
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-recall-"))
    try:
        if (work / "project" / ".claude" / "memory").is_dir():
            paths = paths_for(work / "project")
        else:
            paths = build_store(work / "project", args.transcripts, args.noise_mb)
        own_sets(paths, args.sets.split(","), args.noise_mb)
        print("\nempty*: empty answers among the questions that share at least one word with the store")
        if args.locomo.is_dir():
            conversational(args.locomo)
        else:
            print(f"\n(no LoCoMo conversations at {args.locomo}: see --locomo)")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
