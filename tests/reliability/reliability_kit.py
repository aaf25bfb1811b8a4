"""Crash, concurrency and fault trials shared by ``tests/reliability`` and ``bench/reliability_full.py``.

Every trial works in a fresh project folder, runs the operation in a child process,
SIGKILLs it at a delay drawn from a seeded RNG over the operation's measured duration,
runs ``doctor.repair`` and then checks the invariants:

* conservation: every line the child had certainly written is present exactly where the
  spec puts it (the archives in name order plus ``memory.md``, each archive starting with
  the carryover of the one before), whole, and not duplicated beyond the carryover;
* the index agrees with the files (``diagnose`` finds nothing after ``repair``);
* the next operation succeeds and conserves too.

Results are plain dataclasses so the bench script can add them up into its table.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memkeeper.core.store.paths import StorePaths

REPO = Path(__file__).resolve().parents[2]

# Lines are self-checking: id, a payload derived from the id, and the id's checksum.
LINE_RE = re.compile(rb"^L(\d{8}) ([a-z\xea-\xed\x80-\xbf ]*)\|([0-9a-f]{4})$")
WORKER_LINE_RE = re.compile(rb"^W(\d{2})-(\d{7}) ([a-z]*)\|([0-9a-f]{4})$")


def payload(n: int) -> str:
    words = ["alpha", "beta", "gamma", "delta", "한국어", "memory", "rotation"]
    rng = random.Random(n)
    return " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))


def check4(text: str) -> str:
    import zlib

    return f"{zlib.crc32(text.encode('utf-8')) & 0xFFFF:04x}"


def make_line(n: int) -> bytes:
    body = f"L{n:08d} {payload(n)}"
    return f"{body}|{check4(body)}\n".encode()


def line_ok(raw: bytes) -> int | None:
    """The id of a whole, intact trial line, else None."""
    text = raw.decode("utf-8", "replace")
    head, sep, crc = text.rpartition("|")
    if not sep or check4(head) != crc or not head.startswith("L"):
        return None
    try:
        n = int(head[1:9])
    except ValueError:
        return None
    return n if make_line(n) == raw + b"\n" else None


def child_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["HOME"] = str(home)
    env["MEMKEEPER_NO_JOBS"] = "1"
    env.pop("CLAUDE_PROJECT_DIR", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@dataclass(kw_only=True)
class Outcome:
    """What a trial found after a kill or a race: bytes lost, lines there twice, other problems."""

    bytes_lost: int = 0
    duplicated_lines: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.problems or self.bytes_lost or self.duplicated_lines)

    def count_duplicates(self, counts: Counter[Any]) -> None:
        """``duplicated_lines``: the extra copies among ``counts`` (each line found, how many times)."""
        self.duplicated_lines = sum(c - 1 for c in counts.values() if c > 1)


@dataclass
class TrialResult(Outcome):
    operation: str
    killed_at: float  # seconds after the child said it was ready
    required_lines: int = 0
    torn_lines: int = 0
    # A kill inside a multi-page append() can leave a short write (the kernel checks for a
    # fatal signal between pages): the writer's own unconfirmed line, cut. Counted, not lost.
    inflight_torn: int = 0
    cut_ids: set[int] = field(default_factory=set)
    repaired: list[str] = field(default_factory=list)  # what doctor found and fixed after the kill

    @property
    def ok(self) -> bool:
        return super().ok and not self.torn_lines


# --------------------------------------------------------------------------- child runner


def run_child(
    code: str, args: list[str], env: dict[str, str], kill_after: float | None, timeout: float = 120.0
) -> tuple[int, float, str]:
    """Run ``python -c code args``; SIGKILL it ``kill_after`` seconds after it prints "ready".

    Returns (returncode, seconds from ready to exit or kill, stderr).
    """
    proc = subprocess.Popen(
        [sys.executable, "-P", "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    start = time.monotonic()
    if first.strip() != b"ready":
        proc.kill()
        _out, err = proc.communicate()
        return proc.returncode, 0.0, (first + err).decode("utf-8", "replace")
    if kill_after is not None:
        try:
            proc.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
    _out, err = proc.communicate(timeout=timeout)
    return proc.returncode, time.monotonic() - start, err.decode("utf-8", "replace")


def kill_delay(seed: int, duration: float) -> float:
    """The trial's kill delay: seeded, in [0, duration)."""
    return random.Random(seed).uniform(0, duration)


def run_killed(code: str, args: list[str], base: Path, result: TrialResult) -> bool:
    """``code`` in a child SIGKILLed ``result.killed_at`` s after it is ready (unless done by then).

    False, with the problem noted in ``result``, when the child failed by itself.
    """
    rc, _t, err = run_child(code, args, child_env(base / "home"), result.killed_at)
    if rc not in (0, -signal.SIGKILL):
        result.problems.append(f"child failed rc={rc}: {err.strip()[-300:]}")
        return False
    return True


def repair_after_kill(paths: StorePaths, result: TrialResult) -> None:
    """``doctor.repair`` (what it repaired goes into ``result``); whatever it leaves is a problem."""
    from memkeeper.core import doctor

    result.repaired += [f.code for f in doctor.repair(paths, stale_seconds=0) if f.repaired]
    left = doctor.diagnose(paths, stale_seconds=0)
    if left:
        result.problems.append("after repair: " + "; ".join(f"{f.code} {f.path}" for f in left))


# --------------------------------------------------------------------------- rotation


ROTATION_CHILD = r"""
import sys
from pathlib import Path
from memkeeper.core.store.atomic import append_bytes
from memkeeper.core.store.lock import reentrant_lock
from memkeeper.core.log import rotation
from memkeeper.core.store.paths import StorePaths
from tests.reliability.reliability_kit import make_line
project, start, chunks, per_chunk, threshold, carry = sys.argv[1:7]
paths = StorePaths(Path(project))
progress = Path(project) / "progress"
start, chunks, per_chunk, threshold, carry = int(start), int(chunks), int(per_chunk), int(threshold), int(carry)
print("ready", flush=True)
n = start
for c in range(chunks):
    data = b"".join(make_line(n + i) for i in range(per_chunk))
    with reentrant_lock(paths.lock):
        append_bytes(paths.memory, data)
    append_bytes(progress, f"{c}\n".encode())
    n += per_chunk
    rotation.rotate(paths, threshold, carry)
"""

ROT_THRESHOLD = 3000  # tokens: small, so one child run rotates many times
ROT_CARRY = 300
# The same values in config.json (scaled by 0.95 as the JS plugin does), so doctor knows them.
ROT_CONFIG = {"memoryRotation": {"thresholdTokens": 3158, "carryoverTokens": 316}}
ROT_PER_CHUNK = 60
ROT_CHUNKS = 40
ROT_INITIAL = 150


def _rotation_args(paths: StorePaths) -> list[str]:
    """ROTATION_CHILD's arguments: project, start, chunks, per chunk, threshold, carry."""
    numbers = (ROT_INITIAL, ROT_CHUNKS, ROT_PER_CHUNK, ROT_THRESHOLD, ROT_CARRY)
    return [str(paths.project), *map(str, numbers)]


def new_project(base: Path, name: str) -> StorePaths:
    from memkeeper.core.store.atomic import atomic_write_json
    from memkeeper.core.store.paths import StorePaths, ensure_store

    project = base / name
    project.mkdir(parents=True)
    paths = StorePaths(project)
    ensure_store(paths)
    atomic_write_json(paths.config, ROT_CONFIG)
    return paths


def reconstruct(paths: StorePaths, carry: int) -> tuple[list[bytes], list[str]]:
    """The stream of user lines as the spec lays them out, and any structural problems.

    archive_1, then each later archive minus the carryover of the one before, then
    memory.md minus the carryover of the newest archive.
    """
    from memkeeper.core.basics.tokens import extract_tail_bytes
    from memkeeper.core.store.memory_index import list_archives

    problems: list[str] = []
    pieces: list[bytes] = []
    previous: bytes | None = None
    names = list_archives(paths)
    files = [(n, (paths.root / n).read_bytes()) for n in names]
    memory = paths.memory.read_bytes() if paths.memory.exists() else b""
    files.append(("memory.md", memory))
    for name, data in files:
        if previous is None:
            pieces.append(data)
        else:
            expected = extract_tail_bytes(previous, carry)
            if data.startswith(expected):
                pieces.append(data[len(expected) :])
            else:
                problems.append(f"{name} does not start with the carryover of the file before it")
                pieces.append(data)
        if name != "memory.md":
            previous = data
    stream = b"".join(pieces)
    return [ln for ln in stream.split(b"\n") if ln], problems


def _cut_line_id(raw: bytes) -> int | None:
    """The id of ``raw`` if it is a strict prefix of a trial line (a write cut short)."""
    prefix = re.match(rb"^L(\d{8}) ", raw)
    if prefix is None:
        return None
    n = int(prefix.group(1))
    return n if make_line(n).startswith(raw) else None


def check_conservation(
    result: TrialResult, lines: list[bytes], required: int, possible: int, cut_ok: set[int] | None = None
) -> None:
    """Lines must be ids 0..k in order, each once, whole; k+1 >= required, k < possible.

    A line cut short is accepted only when nobody confirmed writing it (id >= required) or
    it was already accepted as such (``cut_ok``); its id goes into ``result.cut_ids``.
    """
    ids: list[int] = []
    for raw in lines:
        n = line_ok(raw)
        if n is None:
            cut = _cut_line_id(raw)
            if cut is not None and (cut >= required or cut in (cut_ok or set())):
                result.inflight_torn += 1
                result.cut_ids.add(cut)
                continue
            result.torn_lines += 1
            result.problems.append(f"torn or foreign line: {raw[:60]!r}")
        else:
            ids.append(n)
    counts = Counter(ids)
    result.count_duplicates(counts)
    present = set(ids)
    result.required_lines = required
    result.bytes_lost = sum(len(make_line(n)) for n in range(required) if n not in present)
    if any(n >= possible for n in present):
        result.problems.append("lines that were never written appeared")
    if ids != sorted(ids):
        result.problems.append("lines are out of order")


def _progress(project: Path) -> int:
    try:
        done = [int(x) for x in (project / "progress").read_text().split()]
    except FileNotFoundError:
        return -1
    return max(done) if done else -1


def rotation_trial(base: Path, seed: int, duration: float, name: str | None = None) -> TrialResult:
    """One rotation crash trial: kill at a seeded delay in [0, duration)."""
    from memkeeper.core import doctor
    from memkeeper.core.log import rotation
    from memkeeper.core.store.atomic import append_bytes

    delay = kill_delay(seed, duration)
    paths = new_project(base, name or f"rot{seed}")
    append_bytes(paths.memory, b"".join(make_line(i) for i in range(ROT_INITIAL)))
    result = TrialResult("rotation", delay)
    if not run_killed(ROTATION_CHILD, _rotation_args(paths), base, result):
        return result
    done = _progress(paths.project)
    required = ROT_INITIAL + (done + 1) * ROT_PER_CHUNK
    possible = required + ROT_PER_CHUNK
    _finish(paths, result, required, possible)
    if result.problems:
        return result
    # The next operation: append one more chunk past everything and force a rotation.
    total = max([line_ok(ln) or 0 for ln in reconstruct(paths, ROT_CARRY)[0]] + list(result.cut_ids)) + 1
    # A line cut by the kill stays a line of its own (as a flush section starts with "\n").
    ends_clean = not paths.memory.exists() or paths.memory.read_bytes().endswith(b"\n")
    lead = b"" if ends_clean else b"\n"
    append_bytes(paths.memory, lead + b"".join(make_line(total + i) for i in range(ROT_PER_CHUNK)))
    if rotation.rotate(paths, ROT_THRESHOLD, ROT_CARRY, force=True) is None:
        result.problems.append("the next rotation did nothing")
    after = TrialResult("rotation", delay)
    _finish(paths, after, total + ROT_PER_CHUNK, total + ROT_PER_CHUNK, cut_ok=result.cut_ids)
    # ids cut by the kill were never confirmed: they are not missing
    after.bytes_lost -= sum(len(make_line(n)) for n in result.cut_ids)
    result.problems += [f"after the next rotation: {p}" for p in after.problems]
    result.bytes_lost += after.bytes_lost
    if doctor.diagnose(paths, stale_seconds=0):
        result.problems.append("doctor finds problems after the next rotation")
    return result


def _finish(
    paths: StorePaths, result: TrialResult, required: int, possible: int, cut_ok: set[int] | None = None
) -> None:

    repair_after_kill(paths, result)
    lines, structure = reconstruct(paths, ROT_CARRY)
    result.problems += structure
    check_conservation(result, lines, required, possible, cut_ok)
    _check_index_agrees(paths, result)


def _check_index_agrees(paths: StorePaths, result: TrialResult) -> None:
    from memkeeper.core.store.memory_index import list_archives

    try:
        index = json.loads(paths.index.read_text("utf-8"))
    except FileNotFoundError:
        if list_archives(paths):
            result.problems.append("no index although archives exist")
        return
    listed = [e["file"] for e in index["rotatedFiles"]]
    if sorted(listed) != list_archives(paths) or len(set(listed)) != len(listed):
        result.problems.append("index entries do not match the archives")
    for entry in index["rotatedFiles"]:
        size = (paths.root / entry["file"]).stat().st_size
        if entry["bytes"] != size:
            result.problems.append(f"index bytes wrong for {entry['file']}")


def measure(code_runner: Callable[[Path], float], base: Path, runs: int = 2) -> float:
    """Median time of an uninterrupted child run, to spread the kill delays over."""
    times = sorted(code_runner(base / f"calib{i}") for i in range(runs))
    return times[len(times) // 2]


def rotation_duration(base: Path) -> float:
    paths = new_project(base, "calibrate-rotation")
    from memkeeper.core.store.atomic import append_bytes

    append_bytes(paths.memory, b"".join(make_line(i) for i in range(ROT_INITIAL)))
    rc, took, err = run_child(ROTATION_CHILD, _rotation_args(paths), child_env(base / "home"), None)
    assert rc == 0, err
    return took


# --------------------------------------------------------------------------- index writes


INDEX_CHILD = r"""
import sys
from pathlib import Path
from memkeeper.core.store.atomic import append_bytes
from memkeeper.core.store.memory_index import update_index
from memkeeper.core.store.paths import StorePaths
project, rounds = sys.argv[1], int(sys.argv[2])
paths = StorePaths(Path(project))
progress = Path(project) / "progress"
print("ready", flush=True)
def change(index):
    index["trialCounter"] = int(index.get("trialCounter", 0)) + 1
    index.setdefault("trialLog", []).append(index["trialCounter"])
for i in range(rounds):
    update_index(paths, change)
    append_bytes(progress, f"{i}\n".encode())
"""

INDEX_ROUNDS = 150


def index_seed(paths: StorePaths) -> None:
    from memkeeper.core.store.atomic import atomic_write_bytes, atomic_write_json
    from memkeeper.core.store.memory_index import archive_entry, default_index

    index = default_index()
    for i in range(40):
        name = f"memory_202601{(i % 28) + 1:02d}_{i:06d}.md"
        atomic_write_bytes(paths.root / name, b"".join(make_line(j) for j in range(i * 10, i * 10 + 10)))
        index["rotatedFiles"].append(archive_entry(paths, name))
    index["customKey"] = {"kept": "by every write"}
    atomic_write_json(paths.index, index)


def index_trial(base: Path, seed: int, duration: float) -> TrialResult:
    from memkeeper.core.store.memory_index import update_index

    delay = kill_delay(seed, duration)
    paths = new_project(base, f"idx{seed}")
    index_seed(paths)
    result = TrialResult("index write", delay)
    if not run_killed(INDEX_CHILD, [str(paths.project), str(INDEX_ROUNDS)], base, result):
        return result
    try:
        raw = json.loads(paths.index.read_bytes().decode("utf-8"))
    except ValueError:
        result.problems.append("the index does not parse after the kill")
        raw = None
    done = _progress(paths.project) + 1
    if raw is not None:
        counter = int(raw.get("trialCounter", 0))
        if not done <= counter <= done + 1:
            result.problems.append(f"index write lost: counter {counter}, completed writes {done}")
        if raw.get("trialLog", []) != list(range(1, counter + 1)):
            result.problems.append("index history is not exactly the writes made")
        if raw.get("customKey") != {"kept": "by every write"}:
            result.problems.append("an unknown key was dropped")
        if len(raw.get("rotatedFiles", [])) != 40:
            result.problems.append("index entries were lost")
    repair_after_kill(paths, result)
    update_index(paths, lambda index: index.__setitem__("next", True))
    if json.loads(paths.index.read_text("utf-8")).get("next") is not True:
        result.problems.append("the next index write failed")
    _check_index_agrees(paths, result)
    return result


def index_duration(base: Path) -> float:
    paths = new_project(base, "calibrate-index")
    index_seed(paths)
    rc, took, err = run_child(
        INDEX_CHILD, [str(paths.project), str(INDEX_ROUNDS)], child_env(base / "home"), None
    )
    assert rc == 0, err
    return took


# --------------------------------------------------------------------------- concurrency


WORKER = r"""
import os, sys, time
from pathlib import Path
from memkeeper.core.store.atomic import append_bytes
from memkeeper.core.store.lock import reentrant_lock
from memkeeper.core.store.paths import StorePaths
from memkeeper.cli.fast import run_check
project, wid, seconds, mode = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
# With a deadline given, go on past `seconds` until a rotation has happened (the event the
# trial needs), however slow the machine; the deadline only bounds a broken run.
deadline = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
paths = StorePaths(Path(project))
from tests.reliability.reliability_kit import worker_line
devnull = open(os.devnull, "w")
print("ready", flush=True)
start = time.monotonic()
end = start + seconds
checks = appends = failures = 0

def going_on():
    now = time.monotonic()
    if now < end:
        return True
    return now < start + deadline and not any(Path(project, ".claude", "memory").glob("memory_*.md"))

while going_on():
    if mode == "check":
        import subprocess
        rc = subprocess.run([sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", project, "check"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
    elif mode == "hook":
        import json, subprocess
        payload = json.dumps({"session_id": f"worker-{wid}", "cwd": project, "hook_event_name": "PostToolUse",
                              "tool_name": "Bash", "tool_input": {"command": "true"}, "tool_response": {}})
        rc = subprocess.run([sys.executable, "-P", "-m", "memkeeper.cli.main", "hook", "PostToolUse"],
                            input=payload.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
    else:
        out = sys.stdout
        sys.stdout = devnull
        try:
            rc = run_check(project)
        finally:
            sys.stdout = out
    if rc == 0:
        checks += 1
    else:
        failures += 1
    line = worker_line(wid, appends)
    with reentrant_lock(paths.lock):
        append_bytes(paths.memory, line)
    appends += 1
print(f"{checks} {appends} {failures}", flush=True)
"""


def worker_line(wid: int, i: int) -> bytes:
    body = f"W{wid:02d}-{i:07d} " + "abcdefghij"[: (i % 10) + 1] * ((i * 7) % 13 + 1)
    return f"{body}|{check4(body)}\n".encode()


@dataclass
class ConcurrencyResult(Outcome):
    processes: int
    seconds: float
    checks: int = 0
    appends: int = 0
    counted: int = 0
    archives: int = 0
    lines_lost: int = 0
    torn: int = 0


def concurrency_run(
    base: Path,
    processes: int,
    seconds: float,
    threshold_tokens: int = 4000,
    carry_tokens: int = 400,
    hook_every: int = 4,
    rotation_deadline: float = 0.0,
) -> ConcurrencyResult:
    """``processes`` workers run checks (the hook's work) and locked appends for ``seconds``
    (and, with ``rotation_deadline``, on until the first rotation or that many seconds).

    Of every ``hook_every`` workers, one runs the real ``memkeeper hook PostToolUse`` and one
    the real ``memkeeper check`` (a new interpreter each call); the others call the check's
    code in-process to push harder. Every call counts one tool use.
    """
    from memkeeper.core.store.atomic import atomic_write_json

    paths = new_project(base, "concurrency")
    # The config file holds thresholds before the 0.95 scaling, as the JS plugin's.
    atomic_write_json(
        paths.config,
        {"memoryRotation": {"thresholdTokens": threshold_tokens, "carryoverTokens": carry_tokens}},
    )
    threshold = int(threshold_tokens * 0.95)
    carry = int(carry_tokens * 0.95)
    env = child_env(base / "home")
    procs = [
        _start_worker(paths, env, w, _worker_mode(w, hook_every), seconds, rotation_deadline)
        for w in range(processes)
    ]
    result = ConcurrencyResult(processes, seconds)
    per_worker = _collect_workers(procs, result, max(seconds, rotation_deadline) + 300)
    _check_counter_archives_and_doctor(paths, threshold, result)
    lines, structure = reconstruct(paths, carry)
    result.problems += structure
    seen, order = _tally_worker_lines(lines, result)
    result.count_duplicates(seen)
    _check_worker_lines(per_worker, seen, order, result)
    return result


def _worker_mode(w: int, hook_every: int) -> str:
    """Worker ``w``'s mode: of every ``hook_every``, one ``hook``, one ``check``, the others ``inproc``."""
    slot = w % hook_every if hook_every else -1
    return "hook" if slot == 0 else "check" if slot == 1 else "inproc"


def _start_worker(
    paths: StorePaths, env: dict[str, str], w: int, mode: str, seconds: float, rotation_deadline: float
) -> subprocess.Popen[bytes]:
    """Start worker ``w`` (the WORKER script) in ``mode``, its output piped."""
    return subprocess.Popen(
        [
            sys.executable,
            "-P",
            "-c",
            WORKER,
            str(paths.project),
            str(w),
            str(seconds),
            mode,
            str(rotation_deadline),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _collect_workers(
    procs: list[subprocess.Popen[bytes]], result: ConcurrencyResult, timeout: float
) -> dict[int, int]:
    """Check every worker finished with no failed check, adding up its counts; the appends of each worker."""
    per_worker: dict[int, int] = {}
    for w, proc in enumerate(procs):
        out, err = proc.communicate(timeout=timeout)
        words = out.decode().split()
        if proc.returncode != 0 or len(words) < 4:
            result.problems.append(f"worker {w} failed: {err.decode()[-300:]}")
            continue
        checks, appends, failures = map(int, words[1:4])
        result.checks += checks
        result.appends += appends
        per_worker[w] = appends
        if failures:
            result.problems.append(f"worker {w}: {failures} checks failed")
    return per_worker


def _check_counter_archives_and_doctor(paths: StorePaths, threshold: int, result: ConcurrencyResult) -> None:
    """Check the tool-use counter equals the checks, no archive is below the threshold, and doctor finds nothing."""
    from memkeeper.core import doctor
    from memkeeper.core.basics.tokens import tokens_for_bytes
    from memkeeper.core.log.progress import read_counters
    from memkeeper.core.store.memory_index import list_archives

    counters = read_counters(paths)
    result.counted = int(counters.get("toolUses", 0))
    if result.counted != result.checks:
        result.problems.append(f"counter {result.counted} != checks {result.checks}")
    archives = list_archives(paths)
    result.archives = len(archives)
    for name in archives:
        tokens = tokens_for_bytes((paths.root / name).stat().st_size)
        if tokens < threshold:
            result.problems.append(f"{name} rotated below the threshold ({tokens} tokens): a double rotation")
    findings = doctor.diagnose(paths, stale_seconds=0)
    if findings:
        result.problems.append("doctor: " + "; ".join(f"{f.code} {f.path}" for f in findings))


def _tally_worker_lines(
    lines: list[bytes], result: ConcurrencyResult
) -> tuple[Counter[tuple[int, int]], dict[int, list[int]]]:
    """Count the intact worker lines (torn ones in ``result.torn``); (each line's count, each worker's order)."""
    seen: Counter[tuple[int, int]] = Counter()
    order: dict[int, list[int]] = {}
    for raw in lines:
        m = WORKER_LINE_RE.match(raw)
        body, _, crc = raw.decode("utf-8", "replace").rpartition("|")
        if not m or check4(body) != crc or worker_line(int(m.group(1)), int(m.group(2))) != raw + b"\n":
            result.torn += 1
            continue
        key = (int(m.group(1)), int(m.group(2)))
        seen[key] += 1
        order.setdefault(key[0], []).append(key[1])
    return seen, order


def _check_worker_lines(
    per_worker: dict[int, int],
    seen: Counter[tuple[int, int]],
    order: dict[int, list[int]],
    result: ConcurrencyResult,
) -> None:
    """Check every appended line is there, each worker's in order, none torn, duplicated or lost."""
    for w, count in per_worker.items():
        missing = [i for i in range(count) if (w, i) not in seen]
        result.lines_lost += len(missing)
        result.bytes_lost += sum(len(worker_line(w, i)) for i in missing)
        if order.get(w, []) != sorted(order.get(w, [])):
            result.problems.append(f"worker {w}'s lines are out of order")
    if result.torn:
        result.problems.append(f"{result.torn} torn or interleaved lines")
    if result.duplicated_lines:
        result.problems.append(f"{result.duplicated_lines} duplicated lines")
    if result.lines_lost:
        result.problems.append(f"{result.lines_lost} lines lost")


# --------------------------------------------------------------------------- legacy migration


MIGRATION_CHILD = r"""
import sys
from pathlib import Path
from memkeeper.core.log.migrate import migrate_legacy
from memkeeper.core.store.paths import StorePaths
paths = StorePaths(Path(sys.argv[1]))
print("ready", flush=True)
migrate_legacy(paths, start_summaries=False)
"""

MIG_SECTIONS = 60
MIG_LINES_PER_SECTION = 40


def legacy_content() -> bytes:
    """A legacy memory.md: a preamble, then dated sections of self-checking lines."""
    out = [b"# Project memory\n", b"preamble line kept by the migration\n"]
    n = 0
    for s in range(MIG_SECTIONS):
        day = 1 + s % 28
        month = 1 + s // 28
        out.append(f"## 2025-{month:02d}-{day:02d}_1200\n".encode())
        for _ in range(MIG_LINES_PER_SECTION):
            out.append(make_line(n))
            n += 1
    return b"".join(out)


def migration_layout(paths: StorePaths) -> bytes:
    """Archives in name order, then memory.md: for a migration this is the original file."""
    from memkeeper.core.store.memory_index import list_archives

    parts = [(paths.root / n).read_bytes() for n in list_archives(paths)]
    parts.append(paths.memory.read_bytes() if paths.memory.exists() else b"")
    return b"".join(parts)


def migration_trial(base: Path, seed: int, duration: float) -> TrialResult:
    from memkeeper.core.log.migrate import migrate_legacy
    from memkeeper.core.store.atomic import atomic_write_bytes

    delay = kill_delay(seed, duration)
    paths = new_project(base, f"mig{seed}")
    original = legacy_content()
    atomic_write_bytes(paths.memory, original)
    result = TrialResult("migration", delay)
    if not run_killed(MIGRATION_CHILD, [str(paths.project)], base, result):
        return result
    repair_after_kill(paths, result)
    # The next operation: the migration runs (again) to completion.
    migrate_legacy(paths, start_summaries=False)
    _check_migration_result(paths, original, result)
    return result


def _check_migration_result(paths: StorePaths, original: bytes, result: TrialResult) -> None:
    from memkeeper.core import doctor

    layout = migration_layout(paths)
    want = [ln for ln in original.split(b"\n") if ln]
    have = [ln for ln in layout.split(b"\n") if ln]
    counts = Counter(have)
    result.required_lines = len(want)
    result.bytes_lost = sum(len(ln) + 1 for ln in want if ln not in counts)
    result.count_duplicates(counts)
    if layout != original:
        result.problems.append("archives + memory.md are not the original file byte for byte")
    if doctor.diagnose(paths, stale_seconds=0):
        result.problems.append("doctor finds problems after the migration completed")
    _check_index_agrees(paths, result)
    from memkeeper.core.basics.tokens import tokens_for_bytes

    if tokens_for_bytes(paths.memory.stat().st_size) > ROT_THRESHOLD:
        result.problems.append("memory.md is still over the threshold")


def migration_duration(base: Path) -> float:
    from memkeeper.core.store.atomic import atomic_write_bytes

    paths = new_project(base, "calibrate-migration")
    atomic_write_bytes(paths.memory, legacy_content())
    rc, took, err = run_child(MIGRATION_CHILD, [str(paths.project)], child_env(base / "home"), None)
    assert rc == 0, err
    result = TrialResult("migration", 0)
    _check_migration_result(paths, legacy_content(), result)
    assert result.ok, result
    return took


# --------------------------------------------------------------------------- flush (L1 → memory.md)


FLUSH_CHILD = r"""
import sys
from pathlib import Path
from memkeeper.core.log import flush
from memkeeper.core.store.paths import StorePaths
paths = StorePaths(Path(sys.argv[1]))
original_chunks = flush.chunk_entries
flush.chunk_entries = lambda entries, max_chars=600: original_chunks(entries, 600)
def summarize(_paths, entries):
    # one bullet per entry, so every entry's fact can be found in memory.md afterwards
    return [f"- [trial]: {e['text']}" for e in entries], "trial"
print("ready", flush=True)
flush.flush_pending(paths, summarize=summarize, max_chunks=100000)
"""

FLUSH_ENTRIES = 400
FLUSH_SESSION = "0f1e2d3c-trial-session-000000000000"


def flush_seed(paths: StorePaths) -> None:
    from memkeeper.core.store.atomic import atomic_write_bytes
    from memkeeper.core.store.memory_index import default_index

    lines = []
    for i in range(FLUSH_ENTRIES):
        ts = f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
        lines.append(
            json.dumps(
                {"ts": ts, "role": "user", "text": f"F{i:06d} {payload(i)}", "session": FLUSH_SESSION},
                ensure_ascii=False,
            )
        )
    atomic_write_bytes(
        paths.sessions / "2026-01-01_000000_0f1e2d3c.l1.jsonl", ("\n".join(lines) + "\n").encode()
    )
    index = default_index()
    index["lastMemoryUpdateTs"] = "2025-12-31T23:59:59.000Z"
    from memkeeper.core.store.atomic import atomic_write_json

    atomic_write_json(paths.index, index)
    atomic_write_bytes(paths.memory, b"# memory\n")


def _flush_facts(paths: StorePaths) -> Counter[int]:
    found: Counter[int] = Counter()
    for m in re.finditer(rb"^- \[trial\]: F(\d{6}) ", paths.memory.read_bytes(), re.MULTILINE):
        found[int(m.group(1))] += 1
    return found


def flush_trial(base: Path, seed: int, duration: float) -> TrialResult:
    from memkeeper.core import doctor
    from memkeeper.core.log import flush
    from memkeeper.core.store.memory_index import read_index

    delay = kill_delay(seed, duration)
    paths = new_project(base, f"flush{seed}")
    flush_seed(paths)
    result = TrialResult("flush", delay)
    if not run_killed(FLUSH_CHILD, [str(paths.project)], base, result):
        return result
    # Every entry at or before the watermark must be in memory.md, exactly once.
    mark = read_index(paths).get("lastMemoryUpdateTs")
    repair_after_kill(paths, result)
    facts = _flush_facts(paths)
    covered = [
        i
        for i in range(FLUSH_ENTRIES)
        if f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z" <= str(mark)
    ]
    missing = [i for i in covered if i not in facts]
    if missing:
        result.problems.append(f"{len(missing)} flushed entries are missing from memory.md")
    # The next operation: the flush runs to the end; now every entry is there once.
    original_chunks = flush.chunk_entries
    try:
        flush.chunk_entries = lambda entries, max_chars=600: original_chunks(entries, 600)
        flush.flush_pending(
            paths,
            summarize=lambda _p, es: ([f"- [trial]: {e['text']}" for e in es], "trial"),
            max_chunks=100000,
        )
    finally:
        flush.chunk_entries = original_chunks
    facts = _flush_facts(paths)
    result.required_lines = FLUSH_ENTRIES
    lost = [i for i in range(FLUSH_ENTRIES) if i not in facts]
    result.bytes_lost = sum(len(f"F{i:06d} {payload(i)}".encode()) for i in lost)
    result.count_duplicates(facts)
    if doctor.diagnose(paths, stale_seconds=0):
        result.problems.append("doctor finds problems after the flush completed")
    return result


def flush_duration(base: Path) -> float:
    paths = new_project(base, "calibrate-flush")
    flush_seed(paths)
    rc, took, err = run_child(FLUSH_CHILD, [str(paths.project)], child_env(base / "home"), None)
    assert rc == 0, err
    assert sorted(_flush_facts(paths)) == list(range(FLUSH_ENTRIES))
    return took


# --------------------------------------------------------------------------- L1 update


L1_CHILD = r"""
import json, sys
from pathlib import Path
from memkeeper.core.store.atomic import append_bytes
from memkeeper.core.capture.l1 import refine_transcript
from memkeeper.core.store.paths import StorePaths
from tests.reliability.reliability_kit import transcript_record
paths = StorePaths(Path(sys.argv[1]))
transcript = Path(sys.argv[2])
progress = paths.project / "progress"
print("ready", flush=True)
n = 0
for batch in range(40):
    append_bytes(transcript, b"".join(transcript_record(n + i) for i in range(25)))
    n += 25
    refine_transcript(paths, transcript, "l1trial-session")
    append_bytes(progress, f"{n}\n".encode())
"""

L1_SESSION = "l1trial-session"


def transcript_record(i: int) -> bytes:
    ts = f"2026-02-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
    record = {
        "type": "user",
        "sessionId": L1_SESSION,
        "uuid": f"u-{i}",
        "timestamp": ts,
        "message": {"role": "user", "content": f"P{i:06d} {payload(i)}"},
    }
    return (json.dumps(record, ensure_ascii=False) + "\n").encode()


def _l1_prompts(paths: StorePaths) -> Counter[int]:
    found: Counter[int] = Counter()
    for path in sorted(paths.sessions.glob("*.l1.jsonl")):
        for raw in path.read_bytes().split(b"\n"):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            m = re.match(r"P(\d{6}) ", str(entry.get("text", "")))
            if m and entry.get("role") == "user":
                found[int(m.group(1))] += 1
    return found


def l1_trial(base: Path, seed: int, duration: float) -> TrialResult:
    from memkeeper.core import doctor
    from memkeeper.core.capture.l1 import refine_transcript

    delay = kill_delay(seed, duration)
    paths = new_project(base, f"l1-{seed}")
    transcript = paths.project / "transcript.jsonl"
    result = TrialResult("L1 update", delay)
    if not run_killed(L1_CHILD, [str(paths.project), str(transcript)], base, result):
        return result
    repair_after_kill(paths, result)
    # The next operation: the L1 update catches up with the whole transcript.
    written = transcript.read_bytes().count(b"\n") if transcript.exists() else 0
    if transcript.exists():
        refine_transcript(paths, transcript, L1_SESSION)
    prompts = _l1_prompts(paths)
    result.required_lines = written
    lost = [i for i in range(written) if i not in prompts]
    result.bytes_lost = sum(len(f"P{i:06d} {payload(i)}".encode()) for i in lost)
    result.count_duplicates(prompts)
    if any(i >= written for i in prompts):
        result.problems.append("L1 holds prompts the transcript never had")
    if doctor.diagnose(paths, stale_seconds=0):
        result.problems.append("doctor finds problems after the L1 update")
    return result


def l1_duration(base: Path) -> float:
    paths = new_project(base, "calibrate-l1")
    transcript = paths.project / "transcript.jsonl"
    rc, took, err = run_child(
        L1_CHILD,
        [str(paths.project), str(transcript)],
        child_env(base / "home"),
        None,
    )
    assert rc == 0, err
    assert sorted(_l1_prompts(paths)) == list(range(1000))
    return took


OPERATIONS = {
    "rotation": (rotation_duration, rotation_trial),
    "migration": (migration_duration, migration_trial),
    "index write": (index_duration, index_trial),
    "flush": (flush_duration, flush_trial),
    "L1 update": (l1_duration, l1_trial),
}
