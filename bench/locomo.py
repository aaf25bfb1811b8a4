"""LoCoMo conversations (third-party data, read from ``../shared/recall``) as memkeeper projects, for the benches.

LoCoMo (Maharana et al., 2024, snap-research) holds long dialogues between two people over
many dated sessions, with questions and the turns (``evidence``) that answer them. This
module never copies the data: it reads the conversation files where they are, writes each
conversation as Claude Code transcripts into a project of a temporary folder (the first
speaker's turns typed prompts, the second's answers, each text prefixed with "Name: ", each
session at its own date) and captures them through the L1 refiner (what ``memkeeper final``
runs), as ``../shared/recall/locomo_recall.py`` does. A question counts as found at rank k
when the k-th hit, or a turn of its exchange, is one of its evidence turns (the same
counting as that script's).

Categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop (5, adversarial, has no evidence).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memkeeper.core.capture.l1 import refine_transcript
from memkeeper.core.search.model import Hit
from memkeeper.core.store.paths import StorePaths, paths_for

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
#: The conversations to tune on, read where they are: ``../shared/recall/locomo-tune`` beside the repository.
TUNING = Path(__file__).resolve().parents[2] / "shared" / "recall" / "locomo-tune"


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class Conversation:
    """One conversation built into a project: its L1 entries mapped to their turns, its questions,
    and the names of its two speakers."""

    def __init__(
        self,
        name: str,
        paths: StorePaths,
        turn_of: dict[str, str],
        qa: list[dict[str, Any]],
        speakers: tuple[str, str],
    ) -> None:
        self.name = name
        self.paths = paths
        self.turn_of = turn_of  # L1 entry id -> dia_id
        self.speakers = speakers
        self.questions = [q for q in qa if q.get("category") in CATEGORIES and q.get("evidence")]

    def turns(self, hit: Hit) -> set[str]:
        """The turns a hit covers: its own and its exchange's (at most three)."""
        ids = [hit.id, *(t.id for t in hit.exchange)][:3]
        return {self.turn_of[i] for i in ids if i in self.turn_of}


def conversation_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json"))


def build(conv_path: Path, work: Path) -> Conversation:
    """``conv_path`` as a project under ``work`` (made anew), captured session by session."""
    name = conv_path.stem
    conv = json.loads(conv_path.read_text(encoding="utf-8"))
    first = conv["speaker_a"]
    project = work / f"conv{name}"
    paths = paths_for(project)
    (project / ".claude" / "memory").mkdir(parents=True, exist_ok=True)
    transcripts = work / "transcripts" / name
    transcripts.mkdir(parents=True, exist_ok=True)
    by_text: dict[str, str] = {}
    n = 1
    while f"session_{n}" in conv:
        when = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
        sid = str(uuid.UUID(int=int(name) * 1000 + n))
        lines, parent = [], None
        for k, turn in enumerate(conv[f"session_{n}"]):
            text = turn["text"] + (f" [shares {turn['blip_caption']}]" if turn.get("blip_caption") else "")
            by_text[norm(f"{turn['speaker']}: {text}")] = turn["dia_id"]
            u = str(uuid.UUID(int=(int(name) * 1000 + n) * 10000 + k))
            ts = when.replace(second=min(59, k)).isoformat().replace("+00:00", ".000Z")
            base = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": str(project)}
            base.update(sessionId=sid, version="2.1.197", uuid=u, timestamp=ts)
            said = f"{turn['speaker']}: {text}"
            line: dict[str, Any]
            if turn["speaker"] == first:
                line = {**base, "type": "user", "message": {"role": "user", "content": said}}
            else:
                content = [{"type": "text", "text": said}]
                message: dict[str, Any] = {
                    "id": "msg_" + u[-8:],
                    "type": "message",
                    "role": "assistant",
                    "content": content,
                }
                line = {**base, "type": "assistant", "message": {**message, "model": "claude-x"}}
            lines.append(json.dumps(line))
            parent = u
        path = transcripts / f"{sid}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        refine_transcript(paths, path, sid)
        n += 1
    from memkeeper.core.search.engine import iter_all_docs

    turn_of = {
        d.id: by_text[norm(d.body)]
        for d in iter_all_docs(paths)
        if d.tier == "l1" and norm(d.body) in by_text
    }
    return Conversation(name, paths, turn_of, conv["qa"], (first, conv["speaker_b"]))


def build_all(folder: Path, work: Path) -> list[Conversation]:
    return [build(path, work) for path in conversation_files(folder)]


def questions(convs: list[Conversation]) -> Iterator[tuple[Conversation, dict[str, Any]]]:
    for conv in convs:
        for qa in conv.questions:
            yield conv, qa


def evidence(qa: dict[str, Any]) -> set[str]:
    return {e.strip() for e in qa["evidence"]}


def figures(ranks: list[int | None]) -> str:
    """R@1, R@5, R@10 (%) and MRR of questions found at ``ranks`` (None: not in the top 10), as columns."""
    n = len(ranks) or 1

    def at(k: int) -> float:
        return 100 * sum(1 for r in ranks if r and r <= k) / n

    mrr = sum(1 / r for r in ranks if r) / n
    return f"{at(1):6.1f} {at(5):6.1f} {at(10):6.1f} {mrr:6.3f}"


def table(rows: list[dict[str, Any]], label: str) -> list[str]:
    """R@1, R@5, R@10, MRR and empty answers of ``rows`` (each with rank, empty, category,
    conversation), overall, per category and per conversation, one line each."""

    def line(name: str, rs: list[dict[str, Any]]) -> str:
        n = len(rs)
        if not n:
            return f"  {label:<10} {name:<16} {0:>4}"
        empty = 100 * sum(r["empty"] for r in rs) / n
        return f"  {label:<10} {name:<16} {n:>4} {figures([r['rank'] for r in rs])} {empty:6.1f}"

    out = [line("all", rows)]
    out += [line(f"{c} {name}", [r for r in rows if r["category"] == c]) for c, name in CATEGORIES.items()]
    out += [
        line(f"conv {n}", [r for r in rows if r["conversation"] == n])
        for n in sorted({r["conversation"] for r in rows})
    ]
    return out
