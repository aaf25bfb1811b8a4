"""Every kind of secret, planted in every way text reaches the store, reaches no file of it.

The corpus (``tests/secret_corpus.py``: 60 kinds, bare and in context) is planted in user
prompts, assistant text, tool inputs and tool results of a Claude Code transcript, in
``memkeeper save`` and ``memkeeper memory-set``, and in a summarizer's answer and in its
error text. Then every job runs: L1 refine, flush (extractive backend), a rotation, L3
summaries (a summarizer that echoes its input, then one that fails quoting it) and a
search reindex. No secret may be found in any file under the store: memory.md, archives,
summaries, raw answers, memory-index.json, L1 copies (gzip ones decompressed), logs,
model-calls.jsonl, state files and the SQLite search index.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from memkeeper.cli.main import main as cli_main
from memkeeper.core.capture import l1
from memkeeper.core.log import flush, rotation
from memkeeper.core.search import indexer
from memkeeper.core.store.atomic import atomic_write_json
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.summaries import summary
from tests.planted import store_files
from tests.secret_corpus import samples

SESSION = "5ec12e75-1111-4000-8000-000000000001"


def _ts(n: int) -> str:
    return f"2026-05-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def _transcript(folder: Path) -> Path:
    records: list[dict[str, Any]] = []

    def add(kind: str, message: dict[str, Any]) -> None:
        records.append(
            {
                "type": kind,
                "timestamp": _ts(len(records)),
                "sessionId": SESSION,
                "cwd": "/p",
                "message": message,
            }
        )

    for n, sample in enumerate(samples()):
        add("user", {"role": "user", "content": f"please use this: {sample.text}"})
        add(
            "assistant",
            {
                "role": "assistant",
                "model": "m",
                "content": [
                    {"type": "text", "text": f"I will configure it with {sample.text} now."},
                    {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": sample.text}},
                    {
                        "type": "tool_use",
                        "id": f"w{n}",
                        "name": "Write",
                        "input": {"file_path": "/p/.env", "content": sample.text},
                    },
                ],
            },
        )
        add(
            "user",
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"t{n}",
                        "content": f"output:\n{sample.text}\ndone",
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": f"w{n}",
                        "content": [{"type": "text", "text": sample.text}],
                    },
                ],
            },
        )
    path = folder / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def _summarizer(tmp_path: Path, fail: bool) -> list[str]:
    """A summarizer that answers with (or fails quoting) every line it was given."""
    script = tmp_path / ("fail.py" if fail else "echo.py")
    body = "import sys\ntext = sys.stdin.read()\n"
    if fail:
        body += "lines = [l for l in text.splitlines() if 'note' in l]\n"
        body += "sys.stderr.write('cannot summarize: ' + ' '.join(lines))\nsys.exit(3)\n"
    else:
        body += "for line in text.splitlines():\n    print('- [echo]: ' + line)\n"
    script.write_text(body)
    return [sys.executable, "-P", str(script)]


@pytest.mark.slow
def test_no_planted_secret_reaches_any_file_of_the_store(store: StorePaths, tmp_path: Path) -> None:
    corpus = samples()
    assert len({s.kind for s in corpus}) >= 40
    transcript = _transcript(tmp_path)
    config = store.config
    atomic_write_json(config, {"summarizer": {"backend": "extractive"}})

    # save and memory-set: a few samples each (every kind goes through the transcript)
    for sample in corpus[::3]:
        assert cli_main(["--project", str(store.project), "save", f"remember {sample.text}"]) == 0
    for name, sample in zip(("project", "architecture", "conventions"), corpus[1::40], strict=False):
        assert (
            cli_main(["--project", str(store.project), "memory-set", name, f"deploy notes: {sample.text}"])
            == 0
        )

    options = {"transcript_path": str(transcript), "session_id": SESSION, "reason": "test"}
    l1.run_l1_job(store, options)
    flush.run_flush_job(store, options)
    assert rotation.rotate(store, threshold_tokens=100, carryover_tokens=50, force=True) is not None

    atomic_write_json(
        config, {"summarizer": {"backend": "command", "command": _summarizer(tmp_path, fail=False)}}
    )
    summary.run_summary_job(store, {"all": True})
    atomic_write_json(
        config, {"summarizer": {"backend": "command", "command": _summarizer(tmp_path, fail=True)}}
    )
    summary.run_summary_job(store, {"all": True})
    indexer.reindex(store)

    files = store_files(store.root)
    names = {path.name for path in files}
    assert "memory.md" in names and ".search.sqlite3" in names
    assert any(name.endswith(".l1.jsonl") for name in names)
    assert any(name.startswith("memory_") and name.endswith(".md") for name in names)
    everything = b"\n".join(files.values())
    assert b"[REDACTED:" in everything
    leaks = [
        f"{sample.kind}/{sample.variant} in {path.relative_to(store.root)}"
        for sample in corpus
        for path, data in files.items()
        if sample.secret.encode() in data
    ]
    assert leaks == []
