"""Two real ``memkeeper regenerate`` processes at once: each archive is summarized once, the index stays whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.memory_index_model import pending_summaries
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.summaries.summary import load_summary, summary_path
from tests.unit.summary.summary_helpers import GOOD_ANSWER, add_archive, write_config, write_script

#: A slow fake model that records which archive it was asked about (one whole line per call).
SLOW_MODEL = """
import os, re, sys, time
prompt = sys.stdin.read()
name = re.search(r"Archive file: (\\S+);", prompt).group(1)
fd = os.open(os.environ["FAKE_CALLS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
os.write(fd, (name + "\\n").encode())
os.close(fd)
time.sleep(0.4)
print(os.environ["FAKE_ANSWER"])
"""


def test_two_regenerate_processes_summarize_each_archive_once(store: StorePaths, tmp_path: Path) -> None:
    script = write_script(tmp_path / "bin", "slow-model", SLOW_MODEL)
    write_config(store, {"summarizer": {"backend": "command", "command": [str(script)]}})
    names = [f"memory_2026030{d}_120000.md" for d in range(1, 6)]
    for name in names:
        add_archive(store, name)
    calls = tmp_path / "calls.txt"
    env = dict(os.environ, FAKE_CALLS=str(calls), FAKE_ANSWER=json.dumps(GOOD_ANSWER), MEMKEEPER_NO_JOBS="1")
    argv = [
        sys.executable,
        "-m",
        "memkeeper.cli.main",
        "--project",
        str(store.project),
        "regenerate",
        "--json",
    ]
    procs = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    for proc, (_, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err.decode()

    asked = calls.read_text().split()
    assert sorted(asked) == names  # every archive once, none twice
    outcomes = [o for out, _ in results for o in json.loads(out)["outcomes"]]
    generated = sorted(o["file"] for o in outcomes if o["outcome"] == "generated")
    assert generated == names
    assert {o["outcome"] for o in outcomes} <= {"generated", "busy", "skipped"}

    index = read_index(store)
    files = [e["file"] for e in index["rotatedFiles"]]
    assert sorted(files) == names  # no entry lost or duplicated
    assert all(e["summaryGenerated"] is True for e in index["rotatedFiles"])
    assert pending_summaries(store) == []
    for name in names:
        assert load_summary(summary_path(store, name)).generator == "command:slow-model"
