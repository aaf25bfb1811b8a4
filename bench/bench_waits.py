"""Bounded waits and bounded memory: the figures behind tests/reliability/test_bounded_waits.py.

    python bench/bench_waits.py [--runs 5] [--line-mb 200] [--answer-mb 300] [--legacy-mb 50] [--l1-files 100000]

Prints one Markdown table: hook wall time with each lock held by another process (against
``python3 -I -c pass`` and the same hook with nothing held), a summarizer whose grandchild
calls ``setsid`` and keeps stdout open, the peak RSS of a 300 MB answer and of the L1 job on
a transcript with a 200 MB line, a 1,200-deep ``memory-index.json``, a 50 MB legacy
``memory.md`` and SessionStart over 100k L1 files. Every figure is measured in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling modules, also under python -P
import _checkout  # noqa: F401  (the tests package: the lock holder)

from tests.lock_holder import held

PY = sys.executable
ROWS: list[tuple[str, str, str]] = []


def row(what: str, figure: str, note: str = "") -> None:
    ROWS.append((what, figure, note))
    print(f"  {what}: {figure} {note}", file=sys.stderr, flush=True)


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMKEEPER"))}
    out["MEMKEEPER_NO_JOBS"] = "1"
    return out


def hook(project: Path, event: str, **fields: object) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    payload = json.dumps({"session_id": "bench-1", "cwd": str(project), "hook_event_name": event, **fields})
    start = time.perf_counter()
    done = subprocess.run(
        [PY, "-P", "-m", "memkeeper.cli.main", "hook", event],
        input=payload.encode(),
        capture_output=True,
        env=env(),
        timeout=120,
        check=False,
    )
    return time.perf_counter() - start, done


def median_hook(project: Path, event: str, runs: int, **fields: object) -> float:
    return statistics.median(hook(project, event, **fields)[0] for _ in range(runs))


def new_store(base: Path, name: str) -> Path:
    from memkeeper.core.store.paths import StorePaths, ensure_store

    project = base / name
    project.mkdir()
    ensure_store(StorePaths(project))
    return project


def bench_locks(base: Path, runs: int) -> None:
    from memkeeper.core.store.paths import StorePaths

    baseline = statistics.median(
        (lambda s: (subprocess.run(["python3", "-I", "-c", "pass"], check=True), time.perf_counter() - s)[1])(
            time.perf_counter()
        )
        for _ in range(runs)
    )
    row("`python3 -I -c pass`", f"{baseline * 1000:.0f} ms", "(baseline)")
    project = new_store(base, "locks")
    paths = StorePaths(project)
    row("PostToolUse, nothing held", f"{median_hook(project, 'PostToolUse', runs) * 1000:.0f} ms")
    (paths.state / "counters.pending").unlink(
        missing_ok=True
    )  # no log: every count folds (see core/log/counters.py)
    with held(paths.state / "counters.lock"):
        row(
            "PostToolUse folding, counters.lock held",
            f"{median_hook(project, 'PostToolUse', runs) * 1000:.0f} ms",
            "(the count stays in the log)",
        )
    paths.memory.write_bytes(b"- [x]: fact\n" * 9_500)  # due for rotation (not far over: no migration)
    with held(paths.lock):
        row(
            "PostToolUse, store lock held, rotation due",
            f"{median_hook(project, 'PostToolUse', runs) * 1000:.0f} ms",
        )
    (paths.state / "intent-rotation.json").write_text('{"kind": "rotation", "archive": "memory_x.md"}')
    with held(paths.lock):
        row(
            "PostToolUse, store lock held, interrupted rotation pending",
            f"{median_hook(project, 'PostToolUse', runs) * 1000:.0f} ms",
        )
    (paths.state / "intent-rotation.json").unlink()
    paths.memory.write_bytes(b"")
    with held(paths.state / "live-sessions.lock"):
        row(
            "SessionEnd, live-sessions.lock held",
            f"{median_hook(project, 'SessionEnd', runs) * 1000:.0f} ms",
            "(jobs still started)",
        )
        row(
            "SessionStart, live-sessions.lock held",
            f"{median_hook(project, 'SessionStart', runs, source='startup') * 1000:.0f} ms",
        )


def child_rss(code: str, *args: str) -> tuple[float, int, str]:
    """(seconds, peak RSS in bytes, stdout) of ``python -c code`` (RSS from getrusage of the child)."""
    # VmHWM is this process image's own peak (getrusage's maxrss would carry the forking
    # parent's size across exec).
    wrapper = (
        "import sys\n"
        f"exec(compile({code!r}, '<bench>', 'exec'))\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
        "print('RSS', int(hwm) * 1024)\n"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [PY, "-P", "-c", wrapper, *args], capture_output=True, text=True, env=env(), timeout=1200
    )
    took = time.perf_counter() - start
    assert done.returncode == 0, done.stderr[-2000:]
    rss = int(done.stdout.strip().splitlines()[-1].split()[1])
    return took, rss, done.stdout


def bench_summarizer(base: Path, answer_mb: int) -> None:
    pidfile = base / "grandchild.pid"
    script = f"setsid sh -c 'echo $$ > {pidfile}; exec sleep 600' & sleep 600"
    code = (
        "import sys, time\n"
        "from memkeeper.core.summarizers._process import run_with_timeout\n"
        "from memkeeper.core.summarizers import BackendError\n"
        "start = time.perf_counter()\n"
        "try:\n"
        f"    run_with_timeout(['sh', '-c', {script!r}], 'prompt', timeout=3)\n"
        "except BackendError as exc:\n"
        "    print('ERR', exc)\n"
        "print('TOOK', time.perf_counter() - start)\n"
    )
    _took, _rss, out = child_rss(code)
    took = float(next(line.split()[1] for line in out.splitlines() if line.startswith("TOOK")))
    try:
        os.kill(int(pidfile.read_text()), 9)
    except (OSError, ValueError):
        pass
    row(
        "summarizer with a setsid grandchild holding stdout, timeout 3 s",
        f"{took:.2f} s",
        "(BackendError, group killed)",
    )
    code = (
        "from memkeeper.core.summarizers._process import run_with_timeout, MAX_OUTPUT_BYTES\n"
        f"src = 'import sys\\nb = b\"x\" * (1 << 20)\\nfor _ in range({answer_mb}): sys.stdout.buffer.write(b)'\n"
        "r = run_with_timeout([sys.executable, '-c', src], '', timeout=300)\n"
        "print('LEN', len(r.stdout), MAX_OUTPUT_BYTES)\n"
    )
    took, rss, out = child_rss("import sys\n" + code)
    kept = next(line for line in out.splitlines() if line.startswith("LEN")).split()[1]
    row(
        f"summarizer answering {answer_mb} MB",
        f"peak RSS {rss / 2**20:.0f} MB",
        f"(kept {int(kept) / 2**20:.0f} MB, {took:.1f} s)",
    )


def bench_transcript_line(base: Path, line_mb: int) -> None:
    transcript = base / "big.jsonl"
    session = "bench-big-line-session"

    def line(text: str) -> bytes:
        record = {
            "type": "user",
            "sessionId": session,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": text},
        }
        return json.dumps(record).encode() + b"\n"

    with transcript.open("wb") as handle:
        handle.write(line("before the big line"))
        head, tail = line("@").split(b"@")
        handle.write(head)
        for _ in range(line_mb):  # written in pieces: this process stays small
            handle.write(b"x" * 2**20)
        handle.write(tail)
        handle.write(line("after the big line"))
    size = transcript.stat().st_size
    project = new_store(base, "bigline")
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from memkeeper.core.capture.l1 import refine_transcript\nfrom memkeeper.core.store.paths import StorePaths\n"
        f"r = refine_transcript(StorePaths(Path({str(project)!r})), Path({str(transcript)!r}), session_id={session!r})\n"
        "print('OK', r)\n"
    )
    took, rss, _out = child_rss(code)
    base_took, base_rss, _ = child_rss(
        "from memkeeper.core.capture.l1 import refine_transcript\nfrom memkeeper.core.store.paths import StorePaths\n"
    )
    line_bytes = line_mb * 2**20
    row(
        f"L1 job on a transcript with a {line_mb} MB line",
        f"peak RSS {rss / 2**20:.0f} MB = {rss / line_bytes:.2f}× the line",
        f"(interpreter + imports alone {base_rss / 2**20:.0f} MB; {took:.1f} s; file {size / 2**20:.0f} MB)",
    )
    transcript.unlink()


def bench_deep_index(base: Path) -> None:
    project = new_store(base, "deep")
    index = project / ".claude" / "memory" / "memory-index.json"
    deep = '{"rotatedFiles": [], "x": ' + "[" * 1200 + "]" * 1200 + "}"
    results = []
    took, done = hook(project, "SessionStart", source="startup")
    results.append(f"SessionStart rc {done.returncode} {took * 1000:.0f} ms")
    for command in (["status"], ["rotate", "--force"], ["doctor"]):
        index.write_text(deep)
        start = time.perf_counter()
        ran = subprocess.run(
            [PY, "-P", "-m", "memkeeper.cli.main", "--project", str(project), *command],
            capture_output=True,
            text=True,
            env=env(),
            timeout=120,
            check=False,
        )
        crashed = "Traceback" in ran.stderr or "RecursionError" in ran.stdout + ran.stderr
        results.append(
            f"{command[0]} rc {ran.returncode}{' CRASH' if crashed else ''} {(time.perf_counter() - start) * 1000:.0f} ms"
        )
    backups = len(list(index.parent.glob("memory-index.json.corrupt-*")))
    row("memory-index.json nested 1,200 deep", "; ".join(results), f"({backups} corrupt copies kept)")


def bench_legacy(base: Path, legacy_mb: int) -> None:
    from memkeeper.core.store.paths import StorePaths

    project = new_store(base, "legacy")
    paths = StorePaths(project)
    day_block = "".join(f"- [fact]: legacy line {i} with some words to make it longer\n" for i in range(400))
    days = legacy_mb * 2**20 // len(day_block) + 1
    with paths.memory.open("w") as handle:
        for d in range(days):
            handle.write(f"## {2000 + d // 336}-{1 + d // 28 % 12:02d}-{1 + d % 28:02d}\n{day_block}")
    size = paths.memory.stat().st_size
    took, done = hook(project, "PostToolUse")
    unchanged = paths.memory.stat().st_size == size and not list(paths.root.glob("memory_*.md"))
    start = time.perf_counter()
    ran = subprocess.run(
        [PY, "-P", "-m", "memkeeper.cli.main", "--project", str(project), "job", "migrate"],
        capture_output=True,
        text=True,
        env=env(),
        timeout=1200,
        check=False,
    )
    job = time.perf_counter() - start
    archives = len(list(paths.root.glob("memory_*.md")))
    row(
        f"{size / 2**20:.0f} MB legacy memory.md",
        f"PostToolUse {took * 1000:.0f} ms, memory.md {'untouched' if unchanged else 'CHANGED'}",
        f"(the migrate job: rc {ran.returncode}, {job:.1f} s, {archives} archives"
        + (f"; {(ran.stderr.strip().splitlines() or [''])[-1][:200]}" if ran.returncode else "")
        + ")",
    )


def bench_l1_files(base: Path, count: int, runs: int) -> None:
    small = new_store(base, "few-l1")
    many = new_store(base, "many-l1")
    body = b'{"ts": "2026-01-01T00:00:00Z", "role": "user", "text": "hello"}\n'
    for project, n in ((small, 20), (many, count)):
        sessions = project / ".claude" / "memory" / "sessions"
        for i in range(n):
            (sessions / f"2026-01-01_{i:06d}_{i:08x}.l1.jsonl").write_bytes(body)
    few = median_hook(small, "SessionStart", runs, source="startup")
    lots = median_hook(many, "SessionStart", runs, source="startup")
    row(
        f"SessionStart with {count:,} L1 files",
        f"{lots * 1000:.0f} ms",
        f"(20 files: {few * 1000:.0f} ms; {lots / few:.2f}×)",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--line-mb", type=int, default=200)
    parser.add_argument("--answer-mb", type=int, default=300)
    parser.add_argument("--legacy-mb", type=int, default=50)
    parser.add_argument("--l1-files", type=int, default=100_000)
    args = parser.parse_args()
    print(subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip())
    with tempfile.TemporaryDirectory(prefix="memkeeper-waits-") as tmp:
        base = Path(tmp)
        os.environ["HOME"] = str(base / "home")
        (base / "home").mkdir()
        bench_locks(base, args.runs)
        bench_summarizer(base, args.answer_mb)
        bench_transcript_line(base, args.line_mb)
        bench_deep_index(base)
        bench_legacy(base, args.legacy_mb)
        bench_l1_files(base, args.l1_files, args.runs)
    print("\n| what | measured | notes |\n|---|---|---|")
    for what, figure, note in ROWS:
        print(f"| {what} | {figure} | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
