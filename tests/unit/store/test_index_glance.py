"""What SessionStart needs of memory-index.json, kept in .state: used while the index is unchanged,
made again from the index whenever it is stale, unparsable, a link or made elsewhere."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.store import index_glance
from memkeeper.core.store.atomic import atomic_write_text, dumps_js
from memkeeper.core.store.index_entries import mark_generated
from memkeeper.core.store.index_glance import GLANCE_FILE, glance_of, read_glance
from memkeeper.core.store.memory_index import update_index
from memkeeper.core.store.paths import StorePaths


def entry(n: int, generated: bool = True, error: str | None = None) -> dict[str, Any]:
    name = f"memory_2026{n // 28 + 1:02d}{n % 28 + 1:02d}_100000.md"
    found: dict[str, Any] = {
        "file": name,
        "rotatedAt": f"2026-{n // 28 + 1:02d}-{n % 28 + 1:02d}T10:00:00.000Z",
        "tokens": 100,
        "bytes": 400,
        "summary": name.replace(".md", ".summary.json"),
        "summaryGenerated": generated,
    }
    if error:
        found["summaryError"] = error
    return found


def write_index(
    store: StorePaths, entries: list[dict[str, Any]], watermark: str | None = None, age: float = 5
) -> dict[str, Any]:
    """Write the index as the JavaScript plugin would (not through update_index), ``age`` seconds old."""
    index: dict[str, Any] = {"version": 1, "current": "memory.md", "rotatedFiles": entries, "counter": 0}
    if watermark:
        index["lastMemoryUpdateTs"] = watermark
    atomic_write_text(store.index, dumps_js(index))
    then = time.time() - age
    os.utime(store.index, (then, then))
    return index


def unread_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the index is read (the saved glance must answer)."""

    def refuse(path: object) -> object:
        raise AssertionError(f"read {path}")

    monkeypatch.setattr("memkeeper.core.store.atomic.open_read", refuse)


def saved(store: StorePaths) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((store.state / GLANCE_FILE).read_text())
    return data


def test_the_glance_holds_what_session_start_shows(store: StorePaths) -> None:
    entries = [entry(n) for n in range(20)] + [
        entry(30 + n, False, "timeout" if n % 2 else None) for n in range(7)
    ]
    entries.insert(3, {"file": "../../outside.md", "summaryGenerated": True, "rotatedAt": "2099-01-01"})
    index = write_index(store, entries, "2026-05-01T00:00:00.000Z")
    glance = read_glance(str(store.root))
    assert glance == glance_of(index)
    assert [e["file"] for e in glance["newest"]] == [entry(n)["file"] for n in range(19, 11, -1)]
    assert glance["moreGenerated"] is True
    assert [e["file"] for e in glance["pending"]] == [e["file"] for e in entries[21:26]]
    assert (glance["pendingCount"], glance["failedCount"]) == (7, 3)
    assert glance["lastMemoryUpdateTs"] == "2026-05-01T00:00:00.000Z"
    assert saved(store)["index"][2] == store.index.stat().st_size


def test_an_unchanged_index_is_not_read_again(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    index = write_index(store, [entry(1), entry(2, False)])
    read_glance(str(store.root))
    unread_index(monkeypatch)
    assert read_glance(str(store.root)) == glance_of(index)


def test_an_index_changed_by_another_writer_is_read_again(store: StorePaths) -> None:
    write_index(store, [entry(1), entry(2, False)])
    read_glance(str(store.root))
    index = write_index(store, [entry(1), entry(2)], age=3)  # the JavaScript plugin flags the summary
    assert read_glance(str(store.root)) == glance_of(index)
    assert saved(store)["pendingCount"] == 0


def test_an_index_rewritten_in_place_to_the_same_size_is_read_again(store: StorePaths) -> None:
    """(setCounter and an Edit write the file in place: same inode; the time tells.)"""
    write_index(store, [entry(1, False)])
    read_glance(str(store.root))
    text = store.index.read_text().replace('"summaryGenerated": false', '"summaryGenerated": true ')
    with open(store.index, "r+", encoding="utf-8") as handle:
        handle.write(text)
    then = time.time() - 2
    os.utime(store.index, (then, then))
    glance = read_glance(str(store.root))
    assert glance["pendingCount"] == 0 and [e["file"] for e in glance["newest"]] == [entry(1)["file"]]


def test_an_index_changed_this_moment_is_answered_but_not_saved(store: StorePaths) -> None:
    """A reading in the clock tick of a change could miss a second change in that tick."""
    write_index(store, [entry(1)], age=0)
    assert read_glance(str(store.root))["newest"][0]["file"] == entry(1)["file"]
    assert not (store.state / GLANCE_FILE).exists()


@pytest.mark.parametrize("content", ["{not json", "[]", '{"index": 7}', ""])
def test_an_unparsable_or_foreign_glance_is_made_again(store: StorePaths, content: str) -> None:
    index = write_index(store, [entry(1), entry(2, False)])
    (store.state / GLANCE_FILE).write_text(content)
    assert read_glance(str(store.root)) == glance_of(index)
    assert saved(store)["pendingCount"] == 1


def test_a_forged_glance_with_the_right_stamp_names_nothing_outside(store: StorePaths) -> None:
    write_index(store, [entry(1)])
    read_glance(str(store.root))
    forged = saved(store)
    forged["newest"] = [{"file": "../../x.md", "summary": "/etc/passwd", "summaryGenerated": True}, entry(1)]
    forged["pending"] = [{"file": "../secret.md"}, 7]
    (store.state / GLANCE_FILE).write_text(json.dumps(forged))
    glance = read_glance(str(store.root))
    assert [e["file"] for e in glance["newest"]] == [entry(1)["file"]] and glance["pending"] == []


def test_a_linked_glance_is_never_read_nor_written_through(store: StorePaths, tmp_path: Path) -> None:
    index = write_index(store, [entry(1), entry(2, False)])
    outside = tmp_path / "outside.json"
    forged = {"index": None, **glance_of({"rotatedFiles": [entry(9)]})}
    stamp = store.index.stat()
    forged["index"] = [stamp.st_dev, stamp.st_ino, stamp.st_size, stamp.st_mtime_ns]
    outside.write_text(json.dumps(forged))
    (store.state / GLANCE_FILE).symlink_to(outside)
    assert read_glance(str(store.root)) == glance_of(index)
    assert json.loads(outside.read_text()) == forged
    assert (store.state / GLANCE_FILE).is_symlink()


def test_a_linked_index_is_never_read(store: StorePaths, tmp_path: Path) -> None:
    outside = tmp_path / "index.json"
    outside.write_text(json.dumps({"rotatedFiles": [entry(1)], "lastMemoryUpdateTs": "2026-01-01"}))
    store.index.symlink_to(outside)
    assert read_glance(str(store.root)) == index_glance.EMPTY


def test_an_unparsable_index_shows_nothing_and_is_left_to_its_recovery(store: StorePaths) -> None:
    store.index.write_text('{"rotatedFiles": [')
    assert read_glance(str(store.root)) == index_glance.EMPTY
    assert store.index.read_text() == '{"rotatedFiles": ['  # (the next locked read backs it up)


def test_no_index(store: StorePaths) -> None:
    assert read_glance(str(store.root)) == index_glance.EMPTY


def test_each_write_of_the_index_saves_its_glance(store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    write_index(store, [entry(1, False), entry(2, False)])
    read_glance(str(store.root))

    def flag(index: dict[str, Any]) -> None:
        mark_generated(index["rotatedFiles"][0])
        index["lastMemoryUpdateTs"] = "2026-06-01T00:00:00.000Z"

    update_index(store, flag)
    unread_index(monkeypatch)  # saved by the writer: SessionStart right after need not parse it
    glance = read_glance(str(store.root))
    assert [e["file"] for e in glance["newest"]] == [entry(1)["file"]]
    assert glance["pendingCount"] == 1 and glance["lastMemoryUpdateTs"] == "2026-06-01T00:00:00.000Z"
