"""What a search reads from the store's files: only what the hits it returns need."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.search import hits, scan_search, search, sources
from memkeeper.core.search.sources import parse_id
from memkeeper.core.store import StorePaths
from tests.l1_data import l1_entry, store_with_memory, write_l1


def _many_sessions(tmp_path: Path) -> StorePaths:
    """Three sessions (one gzipped) whose entries all hold ``quokka``, among other lines."""
    store = store_with_memory(tmp_path / "proj", "# Memory\n\n## 2026-11-01_0900\n- [db]: a quokka note\n")
    for n, name in enumerate(
        ("2026-11-18_100000_aaaa1111", "2026-11-19_100000_bbbb2222", "2026-11-20_100000_cccc3333")
    ):
        entries: list[dict[str, Any]] = []
        for i in range(40):
            entries.append(l1_entry(i, "user", text=f"session {n} question {i} about the quokka habitat"))
            entries.append(l1_entry(i, "tool_result", output=f"line {i}\nof output", result="ok"))
        path = write_l1(store, f"{name}.l1.jsonl", entries)
        if n == 0:  # an older session compressed, as compress leaves it
            path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))
            path.unlink()
    return store


def _line_in_file(store: StorePaths, file: str, offset: int) -> int:
    data = (store.root / file).read_bytes()
    if file.endswith(".gz"):
        data = gzip.decompress(data)
    return data[:offset].count(b"\n") + 1


@pytest.mark.parametrize("exact", [False, True])
def test_lines_are_counted_once_per_file_for_the_hits_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exact: bool
) -> None:
    store = _many_sessions(tmp_path)
    search(store, "quokka", deep=True)  # the index built
    asked: list[tuple[str, list[int]]] = []
    real = sources.lines_at

    def counting(path: Path, offsets: list[int], gz: bool = False) -> Any:
        asked.append((path.relative_to(store.root).as_posix(), list(offsets)))
        return real(path, offsets, gz)

    monkeypatch.setattr(hits, "lines_at", counting)
    found = search(store, "quokka", deep=True, limit=7, exact=exact).tiers[-1]
    assert found.tier == "l1" and len(found.hits) == 7 and found.total > 7
    files = [file for file, _offsets in asked]
    assert len(files) == len(set(files))  # each file read once
    offsets = {(h.file, int(place[2])) for h in found.hits if (place := parse_id(h.id))}
    assert {(file, o) for file, found_offsets in asked for o in found_offsets} == offsets  # the hits' only
    compressed = search(store, "session 0 question 39 quokka", deep=True, exact=exact).tiers[-1].hits
    assert compressed and compressed[0].file.endswith(".gz")
    for hit in (*found.hits, *compressed):
        assert hit.line == _line_in_file(store, hit.file, int(hit.id.rsplit("-", 1)[1]))
    if exact:  # the same lines as the full scan counts while reading
        assert (
            search(store, "quokka", deep=True, exact=True).tiers
            == scan_search(store, "quokka", deep=True).tiers
        )
