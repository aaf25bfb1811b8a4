"""A bounded coverage-guided run (atheris) of the transcript parser and the L1 conversion."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "transcripts"
SECONDS = int(os.environ.get("RELIABILITY_ATHERIS_SECONDS", "20"))


def seed_corpus(folder: Path) -> int:
    """One corpus file per line of the small real transcripts kept in the fixtures."""
    folder.mkdir()
    n = 0
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for line in path.read_bytes().splitlines()[:40]:
            (folder / f"seed{n:04d}").write_bytes(line + b"\n")
            n += 1
    return n


def run_atheris(tmp: Path, seconds: int) -> tuple[int, str]:
    corpus = tmp / "corpus"
    seed_corpus(corpus)
    proc = subprocess.run(
        [
            sys.executable,
            str(HERE / "atheris_transcript_target.py"),
            f"-max_total_time={seconds}",
            "-seed=1",
            "-timeout=10",
            "-rss_limit_mb=2048",
            f"-artifact_prefix={tmp}/",
            str(corpus),
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 120,
        env={**os.environ, "MEMKEEPER_NO_JOBS": "1"},
    )
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("atheris") is None,
    reason="atheris is not installed (it builds on Linux only: pip install atheris)",
)
def test_transcript_parser_survives_coverage_guided_fuzzing(tmp_path: Path) -> None:
    code, output = run_atheris(tmp_path, SECONDS)
    assert code == 0, output[-3000:]
    runs = re.search(r"Done (\d+) runs", output)
    assert runs and int(runs.group(1)) > 0, output[-2000:]
    print(f"atheris tried {runs.group(1)} inputs in {SECONDS} s")
