"""core/log/pulled.py without git: what a pull brought is taken in once, and only in a shared store."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from memkeeper.core.log.pulled import take_in
from memkeeper.core.sharing.share import store_gitattributes_text
from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.paths import StorePaths, ensure_store

ARCHIVE = "memory_20261129_100000.md"


def pulled_store(tmp_path: Path, shared: bool) -> StorePaths:
    """A store as a pull leaves it: an archive whose index entry says summarized, no summary."""
    paths = StorePaths(tmp_path)
    ensure_store(paths)
    if shared:
        (paths.root / ".gitattributes").write_text(store_gitattributes_text(), "utf-8")
    (paths.root / ARCHIVE).write_text("\n## 2026-11-29_0900\n- [note]: pulled\n", "utf-8")
    size = (paths.root / ARCHIVE).stat().st_size
    entry = {"file": ARCHIVE, "tokens": 9, "bytes": size, "summaryGenerated": True}
    paths.index.write_text(json.dumps({"version": 1, "rotatedFiles": [entry]}), "utf-8")
    (paths.root / ARCHIVE).chmod(0o644)
    return paths


def test_a_summary_that_did_not_arrive_is_pending_once_and_files_are_private(tmp_path: Path) -> None:
    paths = pulled_store(tmp_path, shared=True)
    assert take_in(paths)["pending"] == [ARCHIVE]
    assert read_index(paths)["rotatedFiles"][0]["summaryGenerated"] is False
    assert stat.S_IMODE((paths.root / ARCHIVE).stat().st_mode) == 0o600
    assert take_in(paths) == {}  # nothing changed since the last look: a few stats, nothing done
    (paths.root / ARCHIVE.replace(".md", ".summary.json")).write_text('{"overallSummary": "s"}', "utf-8")
    paths.index.write_text(paths.index.read_text("utf-8") + " ", "utf-8")  # a pull changed the index
    assert take_in(paths)["pending"] == []
    assert read_index(paths)["rotatedFiles"][0]["summaryGenerated"] is True  # the summary that came


def test_a_store_not_shared_is_left_alone(tmp_path: Path) -> None:
    paths = pulled_store(tmp_path, shared=False)
    assert take_in(paths) == {}
    assert read_index(paths)["rotatedFiles"][0]["summaryGenerated"] is True


def test_only_whole_shared_leading_sections_are_cut_from_a_later_archive() -> None:
    from memkeeper.core.log.pulled import _shared_head

    base = b"tail of the one before\n\n## 2026-11-28_0900\n- a\n\n## 2026-11-28_1000\n- b\n"
    ours = base + b"\n## 2026-11-29_0900\n- ours\n"
    theirs = base + b"\n## 2026-11-29_0901\n- theirs\n"
    assert theirs[_shared_head(ours, theirs) :] == b"## 2026-11-29_0901\n- theirs\n"
    # the next archive of one machine starts with the carryover (the earlier one's tail): kept whole
    assert _shared_head(ours, b"- b\n\n## 2026-11-29_0900\n- ours\n\n## 2026-11-29_1100\n- c\n") == 0
    assert _shared_head(ours, ours) == 0  # all of it would go: kept
    assert _shared_head(b"## a\n- 1\n", b"## b\n- 2\n") == 0
    # a shared section that goes on differently in the later archive is not a whole section
    assert _shared_head(base + b"- more\n", base + b"- other\n\n## 2026-11-29_0900\n- x\n") == len(
        b"tail of the one before\n\n## 2026-11-28_0900\n- a\n\n"
    )
