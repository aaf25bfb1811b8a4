"""Real processes at once: rotations, checks and locked appends never lose a byte."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.paths import StorePaths

ROTATE_AT = """
import sys, time
from pathlib import Path
from memkeeper.core.log.rotation import rotate
from memkeeper.core.store.paths import StorePaths
start = float(sys.argv[2])
while time.time() < start:
    time.sleep(0.0005)
result = rotate(StorePaths(Path(sys.argv[1])))
print(result.archive if result else "-")
"""

APPEND_LOCKED = """
import sys
from pathlib import Path
from memkeeper.core.store.atomic import append_text
from memkeeper.core.store.lock import reentrant_lock
from memkeeper.core.store.paths import StorePaths
paths = StorePaths(Path(sys.argv[1]))
for i in range(int(sys.argv[3])):
    with reentrant_lock(paths.lock):
        append_text(paths.memory, f"- [w{sys.argv[2]}]: line {i:04d} " + "x" * 200 + "\\n")
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["MEMKEEPER_NO_JOBS"] = "1"
    return env


def _lines_everywhere(store: StorePaths) -> list[bytes]:
    found: list[bytes] = []
    for path in [*sorted(store.root.glob("memory_*.md")), store.memory]:
        found.extend(line for line in path.read_bytes().split(b"\n") if line)
    return found


def test_two_processes_rotating_at_once_make_one_archive(store: StorePaths) -> None:
    original = b"".join(b"- [fact]: line %06d of the old memory\n" % i for i in range(3000))
    assert len(original) > 100_000
    store.memory.write_bytes(original)
    start = time.time() + 1.0  # both start rotating at the same instant
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ROTATE_AT, str(store.project), repr(start)],
            stdout=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for _ in range(2)
    ]
    outputs = sorted(p.communicate(timeout=60)[0].strip() for p in procs)
    assert all(p.returncode == 0 for p in procs)
    archives = sorted(store.root.glob("memory_*.md"))
    assert len(archives) == 1
    assert outputs == ["-", archives[0].name]
    assert archives[0].read_bytes() == original
    assert original.endswith(store.memory.read_bytes())
    index = read_index(store)
    assert [e["file"] for e in index["rotatedFiles"]] == [archives[0].name]
    assert index["stats"]["totalRotations"] == 1


def test_parallel_checks_and_appends_lose_nothing(store: StorePaths) -> None:
    # Four writers append under the store lock while eight `memkeeper check` processes
    # run (each may rotate): every appended line must end up in an archive or memory.md.
    store.config.write_text('{"memoryRotation": {"thresholdTokens": 8000, "carryoverTokens": 500}}')
    writers = [
        subprocess.Popen([sys.executable, "-c", APPEND_LOCKED, str(store.project), str(w), "150"], env=_env())
        for w in range(4)
    ]
    checks = []
    for _ in range(8):
        checks.append(
            subprocess.Popen(
                [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(store.project), "check"],
                stdout=subprocess.PIPE,
                env=_env(),
            )
        )
        time.sleep(0.05)
    for proc in writers + checks:
        proc.wait(timeout=120)
        assert proc.returncode == 0
    from memkeeper.core.log.rotation import rotate

    rotate(store, threshold_tokens=7600, carryover_tokens=475)
    expected = {b"- [w%d]: line %04d " % (w, i) + b"x" * 200 for w in range(4) for i in range(150)}
    found = _lines_everywhere(store)
    assert expected <= set(found)
    index = read_index(store)
    assert len(index["rotatedFiles"]) == len(list(store.root.glob("memory_*.md")))
    assert int(index["stats"]["totalRotations"]) == len(index["rotatedFiles"])


def test_lock_is_released_when_holder_is_killed(store: StorePaths) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from pathlib import Path\n"
            "from memkeeper.core.store.lock import reentrant_lock\n"
            "with reentrant_lock(Path(sys.argv[1])):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(60)\n",
            str(store.lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    from memkeeper.core.basics.platform import kill
    from memkeeper.core.store.lock import is_locked, reentrant_lock

    assert is_locked(store.lock)
    kill(holder)  # killed outright (SIGKILL, or TerminateProcess): the system drops its lock
    holder.wait(timeout=10)
    with reentrant_lock(store.lock, timeout=5):
        pass
    assert not is_locked(store.lock)
