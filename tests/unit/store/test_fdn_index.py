"""memory-index.json: corruption recovery, unknown keys, refused entries, the typed view."""

from __future__ import annotations

import json
from pathlib import Path

from memkeeper.core.demo import create_demo_store
from memkeeper.core.store.memory_index import read_index, safe_entries, update_index
from memkeeper.core.store.memory_index_model import RotatedFile, index_from_dict, load_index, pending_entries
from memkeeper.core.store.paths import StorePaths

ARCHIVE = "memory_20261101_093000.md"
SUMMARY = "memory_20261101_093000.summary.json"


def _archive_with_summary(store: StorePaths) -> None:
    store.archive(ARCHIVE).write_text("## 2026-10-30_0100\n- [a]: b\n\n## 2026-11-01_0900\n- [c]: d\n")
    store.archive(SUMMARY).write_text(json.dumps({"overallSummary": "ok", "themes": []}))
    store.archive("memory_20261110_101010.md").write_text("## 2026-11-10_1000\n- [e]: f\n")


def test_corrupt_index_is_backed_up_and_rebuilt_from_disk(store: StorePaths) -> None:
    _archive_with_summary(store)
    bad = b'{"version": 1, "lastMemoryUpdateTs": "2026-11-20T10:00:00.000Z", "rotatedFiles": [ {oops'
    store.index.write_bytes(bad)
    index = read_index(store)
    backups = list(store.root.glob("memory-index.json.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == bad
    files = {e["file"]: e for e in index["rotatedFiles"]}
    assert set(files) == {ARCHIVE, "memory_20261110_101010.md"}  # never reset to empty
    assert files[ARCHIVE]["summaryGenerated"] is True
    assert files[ARCHIVE]["dateRange"] == {"first": "2026-10-30", "last": "2026-11-01"}
    assert files["memory_20261110_101010.md"]["summaryGenerated"] is False
    assert index["lastMemoryUpdateTs"] == "2026-11-20T10:00:00.000Z"  # salvaged
    assert index["recoveredFrom"] == backups[0].name
    assert json.loads(store.index.read_text()) == index  # the rebuilt index is on disk


def test_index_of_wrong_shape_is_treated_as_corrupt(store: StorePaths) -> None:
    store.index.write_text('["a list", "not an index"]')
    assert read_index(store)["rotatedFiles"] == []
    assert list(store.root.glob("memory-index.json.corrupt-*"))


def test_unknown_keys_survive_every_write(store: StorePaths) -> None:
    original = {
        "version": 1,
        "current": "memory.md",
        "rotatedFiles": [
            {"file": ARCHIVE, "summary": SUMMARY, "summaryGenerated": False, "futureField": [1, 2]}
        ],
        "stats": {"totalRotations": 1, "lastRotation": None, "statsExtra": "x"},
        "counter": 4,
        "deltaCreatedAtMemoryMtime": 1763800000000.5,
        "rulesInjectionCount": 3,
        "somethingNew": {"nested": True},
    }
    store.index.write_text(json.dumps(original))

    def bump(index: dict[str, object]) -> None:
        index["counter"] = 5

    update_index(store, bump)
    after = json.loads(store.index.read_text())
    assert after["counter"] == 5
    for key in ("deltaCreatedAtMemoryMtime", "rulesInjectionCount", "somethingNew"):
        assert after[key] == original[key]
    assert after["rotatedFiles"][0]["futureField"] == [1, 2]
    assert after["stats"]["statsExtra"] == "x"
    # Written as JSON.stringify(obj, null, 2): two-space indent, no trailing newline.
    raw = store.index.read_text()
    assert raw.startswith('{\n  "version": 1') and not raw.endswith("\n")
    # The typed view keeps them too.
    model = load_index(store)
    assert model.model_extra is not None and model.model_extra["somethingNew"] == {"nested": True}
    assert model.rotatedFiles[0].model_extra == {"futureField": [1, 2]}


def test_entries_naming_files_outside_the_folder_are_refused(store: StorePaths) -> None:
    index = {
        "version": 1,
        "rotatedFiles": [
            {"file": "../../etc/passwd", "summaryGenerated": False},
            {"file": "memory_ok.md", "summary": "../outside.summary.json"},
            {"file": "/abs/memory_x.md"},
            "not an object",
            {"file": "memory_20261101_093000.md", "summaryGenerated": True},
        ],
    }
    good, refused = safe_entries(index)
    assert [e["file"] for e in good] == ["memory_20261101_093000.md"]
    assert len(refused) == 4 and all("refused" in r or "not an object" in r for r in refused)
    model = index_from_dict(index)
    assert [e.file for e in model.rotatedFiles] == ["memory_20261101_093000.md"]
    assert len(model.refused) == 4


def test_an_entry_with_bad_types_is_refused_alone() -> None:
    model = index_from_dict(
        {"rotatedFiles": [{"file": "memory_a.md", "tokens": "many"}, {"file": "memory_b.md"}], "counter": "x"}
    )
    assert [e.file for e in model.rotatedFiles] == ["memory_b.md"]
    assert "tokens" in model.refused[0]
    assert model.counter == 0


def test_summary_states_and_pending(tmp_path: Path) -> None:
    paths = create_demo_store(tmp_path / "demo")
    index = load_index(paths)
    states = [e.state for e in index.rotatedFiles]
    assert states.count("generated") == 3 and states.count("pending") == 1 and states.count("failed") == 1
    pending = pending_entries(index)
    assert [e.state for e in pending] == ["pending", "failed"]
    assert pending[1].summaryError and pending[1].summaryAttempts == 3
    assert all(isinstance(e, RotatedFile) and e.summary_file.endswith(".summary.json") for e in pending)


def test_missing_index_is_rebuilt_not_empty(store: StorePaths) -> None:
    _archive_with_summary(store)
    assert not store.index.exists()
    assert len(read_index(store)["rotatedFiles"]) == 2
    assert store.index.exists()


def test_an_update_that_changes_nothing_writes_nothing(store: StorePaths) -> None:
    update_index(store, lambda index: index.__setitem__("counter", 3))
    before = store.index.stat()
    assert update_index(store, lambda index: len(index["rotatedFiles"])) == 0
    after = store.index.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    update_index(store, lambda index: index.__setitem__("counter", 4))
    assert store.index.stat().st_ino != before.st_ino  # a real change is written (atomically: a new file)
