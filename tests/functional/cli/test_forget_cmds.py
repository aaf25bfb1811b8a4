"""``memkeeper forget / trash / restore`` round trip through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memkeeper.cli.main import main
from memkeeper.core.demo import create_demo_store
from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.paths import StorePaths


@pytest.fixture()
def store(tmp_path: Path) -> StorePaths:
    return create_demo_store(tmp_path / "project")


def _trash(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main(["--project", str(store.project), "trash", "--json"]) == 0
    answer: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return answer


def test_forget_archive_moves_it_and_its_summary_then_restore_puts_them_back(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = next(e["file"] for e in read_index(store)["rotatedFiles"] if e["summaryGenerated"])
    summary = archive.replace(".md", ".summary.json")
    original = (store.root / archive).read_bytes()

    assert main(["--project", str(store.project), "forget", "archive", archive]) == 0
    assert not (store.root / archive).exists() and not (store.root / summary).exists()
    assert archive not in {e["file"] for e in read_index(store)["rotatedFiles"]}

    [item] = _trash(store, capsys)
    assert item["name"] == archive and item["kind"] == "archive"
    assert main(["--project", str(store.project), "restore", str(item["id"])]) == 0
    assert (store.root / archive).read_bytes() == original
    assert (store.root / summary).exists()
    assert archive in {e["file"] for e in read_index(store)["rotatedFiles"]}
    assert _trash(store, capsys) == []


def test_forget_session_and_unknown_names_are_refused_clearly(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    session = sorted(p.name for p in store.sessions.glob("*.l1.jsonl"))[0]
    assert main(["--project", str(store.project), "forget", "session", session]) == 0
    assert not (store.sessions / session).exists()
    assert [i["name"] for i in _trash(store, capsys)] == [session]

    assert main(["--project", str(store.project), "forget", "archive", "../../etc/passwd"]) == 2
    assert main(["--project", str(store.project), "restore", "no-such-id"]) == 2
    err = capsys.readouterr().err
    assert err.count("memkeeper: error:") == 2 and "Traceback" not in err
