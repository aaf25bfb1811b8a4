"""Another process holding a file's lock: what the bounded-wait tests and ``bench/bench_waits.py`` wait against."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memkeeper.core.basics.platform import kill

HOLDER = r"""
import sys, time
from memkeeper.core.store.lock import file_lock
with file_lock(sys.argv[1], timeout=60):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@contextmanager
def held(path: Path, seconds: float = 120.0) -> Iterator[None]:
    """``path`` locked by another process for the duration (which it ends; ``seconds`` bounds a lost one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-P", "-c", HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"held"
        yield
    finally:
        kill(proc)
        proc.wait()
