"""Generate a large synthetic memory store for the search benchmark (deterministic).

    python bench/gen_store.py OUT_PROJECT_DIR [--size-gb 1] [--archives 2000] [--seed 0]
    python bench/gen_store.py OUT_PROJECT_DIR --small-sessions 50000 --archives 100

Writes ``OUT/.claude/memory`` with L1 sessions (JSONL, the JS plugin's shape: compact
objects, literal non-ASCII, no trailing newline) totalling ``--size-gb`` across thousands
of files, ``--archives`` L2 archives of about 90 KB each with L3 summaries, memory.md,
project.md and memory-index.json. The text mixes English and Korean work talk, tool
calls with paths, commands and outputs. A few rare "needle" strings are planted so the
benchmark has selective queries: they are listed in ``NEEDLES``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

NEEDLES = ("zephyr-7731", "quokka_ledger", "무지개다리", "FLUX_CAPACITOR_42")

EN_SUBJ = [
    "the hook",
    "the flush job",
    "rotation",
    "the summary job",
    "the TUI",
    "search",
    "the index",
    "the lock",
    "the CLI",
    "the migration",
    "the config loader",
    "pydantic validation",
    "the L1 refiner",
    "the watcher",
    "the MCP server",
    "the test suite",
    "the transcript parser",
    "the privacy filter",
    "the budget check",
    "the doctor",
    "session start",
    "the carryover",
    "the archive writer",
    "the plugin installer",
]
EN_VERB = [
    "now handles",
    "fails on",
    "was rewritten to avoid",
    "reads",
    "writes",
    "skips",
    "retries",
    "caches",
    "validates",
    "redacts",
    "locks",
    "rotates",
    "parses",
    "summarises",
    "streams",
    "batches",
    "indexes",
    "no longer drops",
    "double counts",
    "times out on",
    "logs",
    "backs up",
]
EN_OBJ = [
    "empty transcripts",
    "the memory index",
    "Korean text",
    "huge tool outputs",
    "stale lock files",
    "partial summaries",
    "unicode file names",
    "the WAL file",
    "missing folders",
    "concurrent hooks",
    "the token estimate",
    "gzip sessions",
    "subagent sidechains",
    "the daily budget",
    "corrupt JSON",
    "the carryover tail",
    "secrets in commands",
    "symlinked projects",
    "Windows paths",
    "long lines",
]
EN_WHY = [
    "because the JS plugin crashed there",
    "so nothing is lost on SIGKILL",
    "to keep the hook under 50 ms",
    "after a user report",
    "since the spec requires it",
    "to match the old file format",
    "because tests showed a race",
    "so the TUI stays responsive",
    "to save tokens",
    "for Windows users",
]
KO_SUBJ = [
    "메모리 파일",
    "검색 인덱스",
    "세션 기록",
    "요약 작업",
    "로테이션",
    "훅 스크립트",
    "설정 파일",
    "플러그인",
    "테스트",
    "마이그레이션",
    "토큰 계산",
    "잠금 파일",
    "터미널 화면",
    "백그라운드 작업",
]
KO_OBJ = [
    "한국어 검색",
    "빈 트랜스크립트",
    "긴 도구 출력",
    "손상된 JSON",
    "예산 초과",
    "중복 항목",
    "파일 이름 충돌",
    "부분 요약",
    "비밀 값",
    "하위 에이전트",
]
KO_VERB = [
    "을 고쳤다",
    "를 처리하도록 바꿨다",
    "에서 실패했다",
    "를 다시 작성했다",
    "를 빠르게 만들었다",
    "를 테스트로 확인했다",
    "를 로그에 남긴다",
    "를 건너뛴다",
]
MODULES = [
    "core/store.py",
    "core/index.py",
    "core/rotation.py",
    "core/l1.py",
    "core/summary.py",
    "core/flush.py",
    "cli/main.py",
    "tui/app.py",
    "plugin/hook.py",
    "core/search/engine.py",
    "core/privacy.py",
]
COMMANDS = [
    "pytest -q tests/{m}",
    "ruff check {f}",
    "git diff --stat",
    "ls -la .claude/memory",
    "mypy --strict",
    "python -m memkeeper status",
    "grep -rn {w} core/",
    "cat {f}",
    "wc -l {f}",
    "npm test",
]


def sentence(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.62:
        return (
            f"{rng.choice(EN_SUBJ).capitalize()} {rng.choice(EN_VERB)} {rng.choice(EN_OBJ)} "
            f"{rng.choice(EN_WHY)}."
        )
    if r < 0.9:
        return f"{rng.choice(KO_SUBJ)}의 {rng.choice(KO_OBJ)}{rng.choice(KO_VERB)}."
    return f"Changed {rng.choice(MODULES)} line {rng.randint(1, 900)}: {rng.choice(EN_OBJ)} ({rng.getrandbits(32):08x})."


def paragraph(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(lo, hi)))


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def l1_entry(rng: random.Random, t: datetime, session: str, needle: str | None) -> dict[str, object]:
    r = rng.random()
    ts = iso(t)
    if r < 0.22:
        entry: dict[str, object] = {"ts": ts, "role": "user", "text": paragraph(rng, 1, 3)}
    elif r < 0.50:
        entry = {"ts": ts, "role": "assistant", "text": paragraph(rng, 2, 7)}
    elif r < 0.75:
        f = rng.choice(MODULES)
        kind = rng.random()
        tid = f"toolu_{rng.getrandbits(64):016x}"
        if kind < 0.4:
            cmd = rng.choice(COMMANDS).format(m=f.split("/")[0], f=f, w=rng.choice(EN_OBJ).split()[0])
            entry = {"ts": ts, "role": "tool", "name": "Bash", "cmd": cmd, "tool_use_id": tid}
        elif kind < 0.7:
            entry = {
                "ts": ts,
                "role": "tool",
                "name": "Read",
                "target": f"/home/dev/memkeeper/{f}",
                "tool_use_id": tid,
            }
        else:
            entry = {
                "ts": ts,
                "role": "tool",
                "name": "Edit",
                "target": f"/home/dev/memkeeper/{f}",
                "diff": f"-{sentence(rng)[:100]}\n+{sentence(rng)[:100]}",
                "tool_use_id": tid,
            }
    else:
        ok = rng.random() < 0.85
        out = (
            f"{rng.randint(1, 400)} passed in {rng.random() * 9:.2f}s"
            if rng.random() < 0.3
            else paragraph(rng, 1, 2)[:200]
        )
        entry = {
            "ts": ts,
            "role": "tool_result",
            "tool_use_id": f"toolu_{rng.getrandbits(64):016x}",
            "result": "ok" if ok else "error",
            "output": out,
        }
    if needle and "text" in entry:
        entry["text"] = f"{entry['text']} {needle}"
    if rng.random() < 0.05:
        entry["sidechain"] = True
        entry["agentId"] = f"a{rng.getrandbits(24):06x}"
    entry["session"] = session
    return entry


def write_l1(
    root: Path, rng: random.Random, target_bytes: int, start: datetime, small: int = 0
) -> tuple[int, int]:
    """Sessions of 600-1800 entries up to ``target_bytes``; or ``small`` sessions of about 3 KB."""
    sessions = root / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    written = 0
    files = 0
    t = start
    needle_every = 400  # a needle in about one file out of 400
    while (files < small) if small else (written < target_bytes):
        session = f"{rng.getrandbits(128):032x}"
        session = f"{session[:8]}-{session[8:12]}-{session[12:16]}-{session[16:20]}-{session[20:]}"
        t += timedelta(hours=rng.randint(2, 20), minutes=rng.randint(0, 59))
        name = f"{t.strftime('%Y-%m-%d_%H%M%S')}_{session[:8]}.l1.jsonl"
        n_entries = rng.randint(8, 20) if small else rng.randint(600, 1800)
        needle_at = rng.randrange(n_entries) if files % needle_every == 7 else -1
        lines = []
        et = t
        for i in range(n_entries):
            et += timedelta(seconds=rng.randint(1, 90))
            needle = NEEDLES[(files // needle_every) % len(NEEDLES)] if i == needle_at else None
            lines.append(
                json.dumps(l1_entry(rng, et, session, needle), ensure_ascii=False, separators=(",", ":"))
            )
        data = "\n".join(lines).encode("utf-8")
        (sessions / name).write_bytes(data)
        written += len(data)
        files += 1
    return files, written


def write_archives(root: Path, rng: random.Random, count: int, start: datetime) -> int:
    t = start
    index_entries = []
    total = 0
    for n in range(count):
        t += timedelta(hours=rng.randint(6, 30))
        name = f"memory_{t.strftime('%Y%m%d_%H%M%S')}.md"
        parts: list[str] = []
        size = 0
        st = t - timedelta(days=3)
        dates = []
        while size < 90_000:
            st += timedelta(minutes=rng.randint(20, 300))
            dates.append(st.strftime("%Y-%m-%d"))
            block = (
                f"\n## {st.strftime('%Y-%m-%d_%H%M')} (local {st.strftime('%m-%d_%H%M')})\n"
                + "\n".join(
                    f"- [{rng.choice(EN_OBJ).split()[0]}]: {sentence(rng)}" for _ in range(rng.randint(2, 6))
                )
                + "\n"
            )
            if n % 250 == 3 and not parts:
                block += f"- [needle]: {NEEDLES[(n // 250) % len(NEEDLES)]}\n"
            parts.append(block)
            size += len(block.encode())
        data = "".join(parts).encode()
        (root / name).write_bytes(data)
        total += len(data)
        summary = {
            "dateRange": {"first": dates[0], "last": dates[-1]},
            "sectionCount": len(parts),
            "themes": [
                {
                    "name": rng.choice(EN_OBJ).capitalize(),
                    "summary": paragraph(rng, 2, 4),
                    "sessions": rng.sample(dates, min(2, len(dates))),
                }
                for _ in range(rng.randint(3, 8))
            ],
            "keyDecisions": [
                {"decision": sentence(rng), "reason": sentence(rng), "date": rng.choice(dates)}
                for _ in range(rng.randint(2, 8))
            ],
            "issues": [
                {
                    "issue": sentence(rng),
                    "status": rng.choice(["resolved", "open"]),
                    "date": rng.choice(dates),
                }
                for _ in range(rng.randint(1, 6))
            ],
            "overallSummary": paragraph(rng, 8, 14),
        }
        summary_name = name.replace(".md", ".summary.json")
        (root / summary_name).write_text(json.dumps(summary, ensure_ascii=False, indent=2), "utf-8")
        index_entries.append(
            {
                "file": name,
                "rotatedAt": iso(t),
                "tokens": -(-len(data) // 4),
                "bytes": len(data),
                "summary": summary_name,
                "summaryGenerated": True,
                "dateRange": {"first": dates[0], "last": dates[-1]},
            }
        )
    index = {
        "version": 1,
        "current": "memory.md",
        "rotatedFiles": index_entries,
        "stats": {
            "totalRotations": len(index_entries),
            "lastRotation": index_entries[-1]["rotatedAt"] if index_entries else None,
        },
        "counter": 0,
    }
    (root / "memory-index.json").write_text(json.dumps(index, indent=2), "utf-8")
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="project directory to create (must not exist or be empty)")
    parser.add_argument("--size-gb", type=float, default=1.0, help="L1 bytes to write, in GB (default 1)")
    parser.add_argument("--archives", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--small-sessions",
        type=int,
        default=0,
        metavar="N",
        help="N sessions of about 3 KB instead of --size-gb",
    )
    args = parser.parse_args(argv)
    root = args.out / ".claude" / "memory"
    if root.exists() and any(root.iterdir()):
        print(f"gen_store: {root} is not empty", file=sys.stderr)
        return 2
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o700)
    rng = random.Random(args.seed)
    start = datetime(2024, 11, 1, tzinfo=UTC)
    t0 = time.monotonic()
    l2 = write_archives(root, rng, args.archives, start)
    files, l1 = write_l1(root, rng, int(args.size_gb * 1e9), start, args.small_sessions)
    memory = "# Memory\n" + "".join(
        f"\n## 2026-11-{d:02d}_1200 (local 11-{d:02d}_2100)\n- [work]: {sentence(rng)}\n- [note]: {sentence(rng)}\n"
        for d in range(1, 21)
    )
    (root / "memory.md").write_text(memory, "utf-8")
    (root / "project.md").write_text("# Project\nmemkeeper: long-term memory for Claude Code.\n", "utf-8")
    print(
        f"gen_store: {files} L1 files ({l1 / 1e6:.0f} MB), {args.archives} archives ({l2 / 1e6:.0f} MB) "
        f"with summaries in {time.monotonic() - t0:.0f} s at {root}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
