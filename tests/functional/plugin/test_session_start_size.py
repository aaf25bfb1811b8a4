"""SessionStart, Stop and the others cost the same at any store size: they read what they need of the
index (its glance), look at the root entries they use by name instead of listing 4,000, and load no
summarizer when none rests; a link is still never followed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.store import index_glance
from memkeeper.core.store.memory_index import update_index
from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import hook_modules_loaded, payload_for, write_config
from tests.l1_data import write_l1

HookRunner = Callable[[str, dict[str, Any] | bytes], tuple[int, str]]
MARK = "OUTSIDE-MARKER"


def summary(text: str) -> dict[str, object]:
    return {"overallSummary": text, "issues": [], "keyDecisions": [], "themes": []}


def add_archives(store: StorePaths, summaries: dict[str, str | None]) -> None:
    """Archives of November (day -> archive name), with the summary text given (None: unreadable)."""

    def change(index: dict[str, Any]) -> None:
        for day, text in summaries.items():
            name = f"memory_202611{day}_000000.md"
            store.archive(name).write_text(f"## 2026-11-{day}\n- old\n")
            summary_path = store.archive(name.replace(".md", ".summary.json"))
            summary_path.write_text("{not json" if text is None else json.dumps(summary(text)))
            index["rotatedFiles"].append(
                {
                    "file": name,
                    "rotatedAt": f"2026-11-{day}T00:00:00.000Z",
                    "tokens": 1,
                    "bytes": 1,
                    "summary": summary_path.name,
                    "summaryGenerated": True,
                }
            )

    update_index(store, change)


@pytest.fixture
def kept(store: StorePaths) -> StorePaths:
    store.memory.write_text("## 2026-11-20_1000 (local 11-20_1000)\n- [marker]: KEPTMARKER\n")
    store.named("project").write_text("PROJECTMARKER\n")
    add_archives(store, {"05": "SUMMARYMARKER"})
    write_l1(
        store,
        "2026-11-21_090000_prevsess.l1.jsonl",
        [
            {
                "ts": "2026-11-21T09:00:00.000Z",
                "role": "user",
                "text": "SESSIONMARKER",
                "session": "prevsess-1",
            }
        ],
    )
    return store


def context(run_hook: HookRunner, store: StorePaths) -> str:
    code, out = run_hook("SessionStart", payload_for("SessionStart", store.project, source="startup"))
    assert code == 0
    if not out.strip():
        return ""
    text: str = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return text


def log_lines(store: StorePaths) -> list[str]:
    log = store.logs / "memkeeper.log"
    return log.read_text().splitlines() if log.exists() else []


def test_a_link_among_the_archives_leaves_session_start_its_memory(
    kept: StorePaths, run_hook: HookRunner, started_jobs: list[Any], tmp_path: Path
) -> None:
    """SessionStart does not list the root (4,000 entries in a 1 GB store): an archive it never
    reads may be a link; the jobs, the CLI and doctor, which read archives, refuse the store."""
    outside = tmp_path / "outside.md"
    outside.write_text(f"{MARK}\n")
    link = kept.root / "memory_20250101_000000.md"
    link.symlink_to(outside)
    text = context(run_hook, kept)
    for marker in ("KEPTMARKER", "PROJECTMARKER", "SUMMARYMARKER", "SESSIONMARKER"):
        assert marker in text
    assert MARK not in text
    assert outside.read_text() == f"{MARK}\n" and link.is_symlink()


def _outside_for(placement: str, tmp_path: Path) -> Path:
    """What a link at ``placement`` points at: the same kind of file, saying MARK."""
    target = tmp_path / "outside" / placement.replace("/", "_")
    target.parent.mkdir(parents=True, exist_ok=True)
    if placement == "sessions":
        target.mkdir()
        l1 = {"ts": "2026-11-22T09:00:00.000Z", "role": "user", "text": MARK, "session": "theirs-1"}
        (target / "2026-11-22_090000_theirs00.l1.jsonl").write_text(json.dumps(l1) + "\n")
    elif placement == "memory-index.json":
        entry = {"file": "memory_20261105_000000.md", "summaryGenerated": True, "rotatedAt": "2099"}
        target.write_text(json.dumps({"rotatedFiles": [entry], "lastMemoryUpdateTs": MARK}))
    elif placement.endswith(".json"):
        target.write_text(json.dumps(summary(MARK)))
    else:
        target.write_text(f"## 2026-11-22\n- {MARK}\n")
    return target


#: A link where SessionStart reads -> whether the hook refuses the store (else the file is left out).
READ_PLACES = {
    "memory.md": True,
    "memory-index.json": True,
    "config.json": True,
    "sessions": True,
    "project.md": False,
    "memory_20261105_000000.summary.json": False,
}


@pytest.mark.parametrize("placement", list(READ_PLACES))
def test_session_start_never_reads_through_a_link(
    kept: StorePaths, run_hook: HookRunner, started_jobs: list[Any], tmp_path: Path, placement: str
) -> None:
    context(run_hook, kept)  # (the glance of the index saved, the newest L1 names too)
    target = _outside_for(placement, tmp_path)
    path = kept.root / placement
    if path.is_dir():
        for child in path.iterdir():
            child.unlink()
        path.rmdir()
    elif path.exists():
        path.unlink()
    path.symlink_to(target)
    text = context(run_hook, kept)
    assert MARK not in text
    if READ_PLACES[placement]:
        assert text == ""
        assert any("symbolic link" in line and str(path) in line for line in log_lines(kept))
    else:
        assert "KEPTMARKER" in text and "SESSIONMARKER" in text


def test_a_glance_made_elsewhere_is_set_aside_not_trusted(
    kept: StorePaths, run_hook: HookRunner, started_jobs: list[Any]
) -> None:
    """A copied store brings its .state: the glance in it, even with the right stamp, is not used."""
    add_archives(kept, {"06": "FORGEDMARKER"})
    context(run_hook, kept)
    glance_path = kept.state / index_glance.GLANCE_FILE
    forged = json.loads(glance_path.read_text())
    forged["newest"] = [e for e in forged["newest"] if "20261106" in e["file"]]
    forged["newest"][0]["summary"] = "memory_20261106_000000.summary.json"
    glance_path.write_text(json.dumps(forged))
    update_index(kept, lambda index: index["rotatedFiles"][-1].update(summaryGenerated=False))
    glance_path.write_text(json.dumps({**forged, "index": json.loads(glance_path.read_text())["index"]}))
    (kept.state / "stamp").unlink()  # made by another machine: no stamp of this one
    text = context(run_hook, kept)
    assert "FORGEDMARKER" not in text and "SUMMARYMARKER" in text


def test_the_newest_readable_summary_is_found_past_the_glance(
    kept: StorePaths, run_hook: HookRunner, started_jobs: list[Any]
) -> None:
    """The glance keeps the 8 newest generated summaries; when none of them reads, the index is."""
    add_archives(kept, {f"{day:02d}": None for day in range(10, 10 + index_glance.NEWEST)})
    text = context(run_hook, kept)
    assert "SUMMARYMARKER" in text and "memory_20261105_000000.md" in text


def test_session_start_loads_no_summarizer_when_none_rests(kept: StorePaths, home: Path) -> None:
    """The summarizers' package imports shutil, datetime and more (8 ms of the hook's CPU): only a
    recorded rest needs them, to tell whether it is over."""
    unwanted = ("memkeeper.core.summarizers", "shutil", "datetime")
    payload = payload_for("SessionStart", kept.project, source="startup")
    out, loaded = hook_modules_loaded("SessionStart", payload, home, unwanted)
    assert "KEPTMARKER" in out
    assert loaded == ""


def test_stop_does_not_list_the_store_root(
    store: StorePaths, run_hook: HookRunner, started_jobs: list[Any]
) -> None:
    """Stop reads the config and the session's count: a link among the archives is not its to see
    (the flush it starts refuses the store)."""
    write_config(store, {"memory": {"flushEvery": 50}})
    for _ in range(3):
        assert run_hook("PostToolUse", payload_for("PostToolUse", store.project, session_id="s1"))[0] == 0
    write_config(store, {"memory": {"flushEvery": 2}})
    (store.root / "memory_20250101_000000.md").symlink_to(store.memory)
    assert started_jobs == []
    assert run_hook("Stop", payload_for("Stop", store.project, session_id="s1"))[0] == 0
    assert [(kind, (options or {}).get("reason")) for kind, options in started_jobs] == [("flush", "stop")]
    assert log_lines(store) == []
