"""How much re-ordering our top hits could still gain, out of sample: a ceiling check for ranked search.

Each LoCoMo conversation (third-party data read where it is, ``../shared/recall``; see
:mod:`locomo`) is held out in turn. A logistic model is fitted on the other conversations'
ranked hits (the top K of ``search(..., deep=True, limit=K)`` for each question, K 30 by
default; a hit is right when it or a turn of its exchange is an evidence turn), from eleven
features the engine has or could cheaply have:

- its rank and its score over the best hit's (the engine's own order);
- its confidence;
- the share of the question's words, weighted by rarity, held by the hit alone, by its whole
  exchange, and by the best single turn of the exchange;
- its session's share of the K hits' scores;
- whether the hit asks (ends with ``?``), whether it is spoken by the one person the question
  names, whether a turn of its exchange is, and how many turns the exchange has.

The held-out conversation's top K are then re-ordered by the model and counted as
``locomo_recall.py`` counts, beside the engine's own order, in the same run: once fitted on
the features any memory has, once with the two speaker features too (LoCoMo's turns begin
"Name: "; a coding session's turns name no speaker). If the re-ordered figures rise on every
held-out conversation, these features carry ranking the engine leaves unused; if they move a
question or two either way, the ranking is at the limit of what they tell (docs/recall.md,
seventh round). The model is plain Python (Newton's method
on an L2-regularised logistic loss over standardised features): no package beyond the project's.

Usage: python bench/bench_rerank.py [--locomo DIR] [--top K] [--l2 X]   (default: the top 30)
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memkeeper.core.search.model import Hit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

FEATURES = (
    "rank",
    "score over best",
    "confidence",
    "exchange coverage",
    "own coverage",
    "best turn coverage",
    "session share",
    "asks",
    "named speaker",
    "named speaker in exchange",
    "turns",
)
#: The re-orderings fitted: on the features any memory has, and with the speaker's too (LoCoMo's
#: turns begin "Name: ", a coding session's do not).
SPEAKER_FEATURES = (8, 9)
ORDERS = (
    ("fitted, without speakers", tuple(j for j in range(len(FEATURES)) if j not in SPEAKER_FEATURES)),
    ("fitted, with speakers", tuple(range(len(FEATURES)))),
)
_SPEAKER = re.compile(r"\s*([^:\s]{1,40}):")


@dataclass
class Question:
    """One question's top hits: a feature row and a label (right or not) per hit."""

    conversation: str
    rows: list[list[float]]
    labels: list[bool]


class Words:
    """The rarity-weighted words of one conversation (idf over its L1 entries)."""

    def __init__(self, bodies: dict[str, str]) -> None:
        from memkeeper.core.search import words

        self._words = words
        self.stems = {i: self.of(body) for i, body in bodies.items()}
        df: dict[str, int] = {}
        for stems in self.stems.values():
            for s in stems:
                df[s] = df.get(s, 0) + 1
        n = max(1, len(bodies))
        self.idf = {s: math.log(1 + (n - k + 0.5) / (k + 0.5)) for s, k in df.items()}
        self.rarest = max(self.idf.values(), default=1.0)

    def of(self, text: str) -> frozenset[str]:
        return frozenset(s for s in map(self._words.stem, self._words.plain_words(text)) if s)

    def coverage(self, asked: frozenset[str], held: frozenset[str]) -> float:
        total = sum(self.idf.get(s, self.rarest) for s in asked)
        if total <= 0:
            return 0.0
        return sum(self.idf.get(s, self.rarest) for s in asked if s in held) / total


def features(
    question: str, hits: list[Hit], words: Words, bodies: dict[str, str], speakers: set[str]
) -> list[list[float]]:
    """One row of FEATURES per hit (see the module's docstring)."""
    asked = words.of(question)
    named = [n for n in speakers if re.search(rf"\b{re.escape(n)}\b", question)]
    person = named[0] if len(named) == 1 else None
    top = hits[0].score or 1e-9
    by_file: dict[str, float] = {}
    for hit in hits:
        by_file[hit.file] = by_file.get(hit.file, 0.0) + hit.score
    best_file = max(by_file.values()) or 1.0
    rows: list[list[float]] = []
    for k, hit in enumerate(hits):
        ids = [hit.id, *(t.id for t in hit.exchange)][:3]
        held = [words.stems.get(i, frozenset()) for i in ids]
        said_by = [_speaker(bodies.get(i, "")) for i in ids]
        rows.append(
            [
                -math.log(k + 1),
                math.log(max(hit.score, 1e-9) / top),
                hit.confidence,
                words.coverage(asked, frozenset().union(*held)),
                words.coverage(asked, held[0]),
                max(words.coverage(asked, h) for h in held),
                by_file[hit.file] / best_file,
                1.0 if bodies.get(hit.id, "").rstrip().endswith("?") else 0.0,
                1.0 if person is not None and said_by[0] == person else 0.0,
                1.0 if person is not None and person in said_by else 0.0,
                len(ids) / 3,
            ]
        )
    return rows


def _speaker(body: str) -> str | None:
    found = _SPEAKER.match(body)
    return found.group(1) if found else None


def collect(folder: Path, work: Path, top: int) -> list[Question]:
    """Every question of the LoCoMo conversations of ``folder``, with its top hits' features."""
    import locomo

    from memkeeper.core.search import search
    from memkeeper.core.search.engine import iter_all_docs

    out: list[Question] = []
    for conv in locomo.build_all(folder, work):
        speakers = set(conv.speakers)
        bodies = {d.id: d.body for d in iter_all_docs(conv.paths) if d.tier == "l1"}
        words = Words(bodies)
        for qa in conv.questions:
            hits = search(conv.paths, qa["question"], deep=True, limit=top).hits
            wanted = locomo.evidence(qa)
            rows = features(qa["question"], list(hits), words, bodies, speakers) if hits else []
            out.append(Question(conv.name, rows, [bool(conv.turns(h) & wanted) for h in hits]))
    return out


class Model:
    """A logistic model over standardised features, fitted by Newton's method with an L2 penalty."""

    def __init__(self, rows: list[list[float]], labels: list[bool], l2: float) -> None:
        width = len(rows[0])
        n = len(rows)
        self.mean = [sum(r[j] for r in rows) / n for j in range(width)]
        self.scale = [
            math.sqrt(sum((r[j] - self.mean[j]) ** 2 for r in rows) / n) or 1.0 for j in range(width)
        ]
        xs = [[1.0, *self._standard(r)] for r in rows]
        self.w = [0.0] * (width + 1)
        for _ in range(12):
            step = _newton_step(xs, labels, self.w, l2)
            self.w = [a + b for a, b in zip(self.w, step, strict=True)]
            if max(abs(s) for s in step) < 1e-6:
                break

    def _standard(self, row: list[float]) -> list[float]:
        return [(v - m) / s for v, m, s in zip(row, self.mean, self.scale, strict=True)]

    def score(self, row: list[float]) -> float:
        return sum(a * b for a, b in zip(self.w, [1.0, *self._standard(row)], strict=True))

    def weights(self) -> list[float]:
        return self.w[1:]


def _newton_step(xs: list[list[float]], labels: list[bool], w: list[float], l2: float) -> list[float]:
    """The Newton step of the L2-penalised logistic loss at ``w`` (the intercept unpenalised)."""
    d = len(w)
    grad = [l2 * w[j] if j else 0.0 for j in range(d)]
    hess = [[(l2 if i == j and i else 0.0) for j in range(d)] for i in range(d)]
    for x, y in zip(xs, labels, strict=True):
        z = sum(a * b for a, b in zip(w, x, strict=True))
        p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
        g = p - (1.0 if y else 0.0)
        h = p * (1.0 - p)
        for i in range(d):
            grad[i] += g * x[i]
            hx = h * x[i]
            row = hess[i]
            for j in range(i, d):
                row[j] += hx * x[j]
    for i in range(d):
        for j in range(i):
            hess[i][j] = hess[j][i]
    return [-v for v in _solve(hess, grad)]


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """``a x = b`` by Gaussian elimination with partial pivoting (a small dense system)."""
    n = len(b)
    m = [[*row, rhs] for row, rhs in zip(a, b, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= f * m[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        if abs(m[r][r]) >= 1e-12:
            x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def _only(question: Question, keep: tuple[int, ...]) -> Question:
    return Question(question.conversation, [[r[j] for j in keep] for r in question.rows], question.labels)


def first_right(labels: list[bool], order: list[int]) -> int | None:
    """The 1-based rank of the first right hit in ``order`` within the top 10, or None."""
    for k, j in enumerate(order[:10]):
        if labels[j]:
            return k + 1
    return None


def held_out(
    questions: list[Question], held: str, l2: float
) -> tuple[list[int | None], list[int | None], Model]:
    """The engine's ranks and the re-ordered ranks of ``held``'s questions, the model fitted on the others."""
    train = [q for q in questions if q.conversation != held and q.rows]
    model = Model([r for q in train for r in q.rows], [y for q in train for y in q.labels], l2)
    engine: list[int | None] = []
    again: list[int | None] = []
    for q in questions:
        if q.conversation != held:
            continue
        order = list(range(len(q.rows)))
        engine.append(first_right(q.labels, order))
        scores = [model.score(r) for r in q.rows]
        again.append(first_right(q.labels, sorted(order, key=lambda j: (-scores[j], j))))
    return engine, again, model


def main(argv: list[str] | None = None) -> int:
    import locomo

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", type=Path, default=locomo.TUNING)
    parser.add_argument("--top", type=int, default=30, help="hits per question to re-order (default 30)")
    parser.add_argument("--l2", type=float, default=1.0, help="the L2 penalty (default 1.0)")
    args = parser.parse_args(argv)
    if not args.locomo.is_dir():
        print(f"no LoCoMo conversations at {args.locomo}: see --locomo", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-rerank-") as work:
        questions = collect(args.locomo, Path(work), args.top)
    names = sorted({q.conversation for q in questions})
    print(
        f"re-ordering the top {args.top} of ranked search, each conversation held out in turn (L2 {args.l2})"
    )
    print(f"  {'held out':<10} {'order':<28} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}")
    chosen = {label: [_only(q, keep) for q in questions] for label, keep in ORDERS}
    for held in names:
        for label, keep in ORDERS:
            engine, again, model = held_out(chosen[label], held, args.l2)
            if label == ORDERS[0][0]:
                print(f"  {held:<10} {'engine':<28} {len(engine):>4} {locomo.figures(engine)}")
            print(f"  {'':<10} {label:<28} {len(again):>4} {locomo.figures(again)}")
            weights = ", ".join(f"{FEATURES[j]} {w:+.2f}" for j, w in zip(keep, model.weights(), strict=True))
            print(f"  {'':<10}   weights: {weights}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
