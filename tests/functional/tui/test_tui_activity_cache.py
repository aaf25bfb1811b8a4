"""The activity screen reads each file once: its per-file readings are kept in the store's .state,
keyed by (inode, size, mtime), so the next open reads only the files that changed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from textual.widgets import OptionList

import memkeeper.core.search.history as history
from memkeeper.core.capture import l1_counts
from memkeeper.core.search.history import CACHE_NAME, daily_activity, findings, load_cache
from memkeeper.core.store.atomic import append_text
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.screens.activity import FINDINGS_PAGE, ActivityScreen
from tests.functional.tui.scenes import open_screen, settle


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    scan = history._scan

    def counting(path: object) -> dict[str, tuple[int, int]]:
        reads.append(str(path))
        return scan(path)  # type: ignore[arg-type]

    monkeypatch.setattr(history, "_scan", counting)
    return reads


async def _open_activity(store: StorePaths) -> str:
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_screen(pilot, "A", ActivityScreen)
        return str(screen.query_one("#activity-summary").render())


async def test_a_second_open_reads_only_the_session_that_grew(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _count_reads(monkeypatch)
    sessions = sorted(store.sessions.glob("*.l1.jsonl"))
    first = await _open_activity(store)
    assert len(reads) == len(sessions) and (store.state / CACHE_NAME).is_file()
    assert "counting" not in first and f"{len(sessions)} sessions" in first
    reads.clear()
    again = await _open_activity(store)  # a new app: the cache comes from the store
    assert reads == [] and again == first
    grown = sessions[0]
    day = grown.name[:10]
    append_text(grown, json.dumps({"ts": f"{day}T23:59:00.000Z", "role": "user", "text": "one more"}) + "\n")
    reads.clear()
    await _open_activity(store)
    assert reads == [str(grown)]
    assert sum(d.prompts for d in daily_activity(store)) == sum(
        d.prompts for d in daily_activity(store, load_cache(store))
    )


def test_cached_findings_equal_a_fresh_reading_and_a_broken_cache_is_ignored(store: StorePaths) -> None:
    cache = load_cache(store)
    fresh = findings(store)
    assert findings(store, cache) == fresh and cache.dirty
    history.save_cache(store, cache)
    assert findings(store, load_cache(store)) == fresh
    (store.state / CACHE_NAME).write_text("{not json")
    broken = load_cache(store)
    assert broken.files == {} and broken.summaries == {}
    assert findings(store, broken) == fresh


def test_a_cache_of_the_old_layout_is_read_as_empty(store: StorePaths) -> None:
    cache = load_cache(store)
    fresh = findings(store, cache)
    history.save_cache(store, cache)
    saved = json.loads((store.state / CACHE_NAME).read_text())
    saved["version"] = 1  # findings were objects with their archive then
    (store.state / CACHE_NAME).write_text(json.dumps(saved))
    old = load_cache(store)
    assert old.summaries == {} and findings(store, old) == fresh


def test_thousands_of_rotations_plot_as_at_most_a_screenful_of_bars() -> None:
    from memkeeper.tui.screens.activity import GROWTH_BARS, _bars

    sizes = list(range(1, 2001))
    bars, per_bar = _bars(sizes)
    assert len(bars) <= GROWTH_BARS and per_bar == 34
    assert bars[0] == 34 and bars[-1] == 2000  # each bar the largest of its rotations
    assert _bars([5, 7]) == ([5, 7], 1)


def _per_line(path: Path) -> dict[str, tuple[int, int]]:
    """The reading line by line: each line's first role, on its first timestamp's day."""
    days: dict[str, list[int]] = {}
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        for line in handle:
            role = l1_counts.ROLE.search(line)
            day = l1_counts.TS.search(line)
            if role is None or day is None or (role.group(1) == b"user" and l1_counts.SIDE.search(line)):
                continue
            counts = days.setdefault(day.group(1).decode(), [0, 0])
            counts[0 if role.group(1) == b"user" else 1] += 1
    return {day: (c[0], c[1]) for day, c in days.items()}


@pytest.mark.parametrize("block", [16, 200, 1 << 22])
def test_the_block_scan_counts_as_a_reading_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    lines = [
        {"ts": "2026-03-01T23:59:00Z", "role": "user", "text": "a prompt"},
        {"ts": "2026-03-01T23:59:30Z", "role": "tool", "name": "Bash"},
        {"ts": "2026-03-02T00:00:10Z", "role": "user", "text": "subagent", "sidechain": True},
        {"ts": "2026-03-02T00:00:20Z", "role": "tool", "input": {"role": "user"}, "sidechain": True},
        {"role": "user", "text": "no time"},
        {"ts": "2026-03-02T00:01:00Z", "role": "assistant", "text": '"role": "user" quoted'},
        {"ts": "2026-03-02T00:02:00Z", "role": "tool_result", "output": "x" * 300},
        {"ts": "2026-03-03T08:00:00Z", "role": "user", "text": "한국어 prompt"},
    ]
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines)  # no newline at the end
    plain = tmp_path / "2026-03-01_235900_abcd1234.l1.jsonl"
    plain.write_text(text + "\n" + json.dumps(lines[0]).replace(" ", ""), "utf-8")
    packed = tmp_path / "2026-03-01_235900_abcd1234.l1.jsonl.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    monkeypatch.setattr(history, "SCAN_BLOCK", block)
    for path in (plain, packed):
        assert history._scan(path) == _per_line(path)
    assert history._scan(plain) == {"2026-03-01": (2, 1), "2026-03-02": (0, 1), "2026-03-03": (1, 0)}


async def test_reloading_while_counting_ends_with_one_whole_count(store: StorePaths) -> None:
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_screen(pilot, "A", ActivityScreen)
        screen.action_reload()
        screen.action_reload()  # two readings replaced before they end
        await settle(pilot)
        shown = screen._shown
        assert shown is not None and shown.counted is None and screen._reading == 3
        assert shown.days == daily_activity(store)
        assert "counting" not in str(screen.query_one("#activity-summary").render())


def test_saved_readings_of_every_summary_need_no_summary_parser(store: StorePaths) -> None:
    """With every summary's findings saved, listing them neither reads a summary nor loads the
    summary models (building them costs tens of ms on a warm open)."""
    import subprocess
    import sys

    cache = load_cache(store)
    found = findings(store, cache)
    assert found and cache.summaries
    history.save_cache(store, cache)
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from memkeeper.core.search.history import findings, load_cache\n"
        "from memkeeper.core.store.paths import StorePaths\n"
        "paths = StorePaths(Path(sys.argv[1]))\n"
        "print(len(findings(paths, load_cache(paths))), 'memkeeper.core.summaries.summary' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-P", "-c", probe, str(store.project)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == [str(len(found)), "False"]


async def test_decisions_listed_from_the_search_index_open_their_summaries_unread(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the store indexed, the list comes from the index (no summary is opened for it), is
    the list the files give, and each item still opens the summary it came from."""
    from memkeeper.core.search import indexer
    from memkeeper.tui.model import Target
    from memkeeper.tui.screens.browse import BrowseScreen
    from memkeeper.tui.widgets.docview import DocView

    with monkeypatch.context() as patch:
        patch.setattr(history, "_indexed_findings", lambda paths: {})
        expected = findings(store)
    indexer.refresh(store)
    reads: list[str] = []
    read = history._read_findings

    def counting(path: str, archive: str) -> list[history.Finding]:
        reads.append(path)
        return read(path, archive)

    monkeypatch.setattr(history, "_read_findings", counting)
    app = MemkeeperApp(store, watch=False, prefs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_screen(pilot, "A", ActivityScreen)
        assert screen.findings == expected and len(expected) > 1 and reads == []
        for index in (0, min(len(expected), FINDINGS_PAGE) - 1):  # the first and last listed
            screen.query_one("#findings", OptionList).highlighted = index
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, BrowseScreen)
            document = app.screen.pane.document
            assert document is not None and document.target == Target("summary", expected[index].archive)
            assert app.screen.query_one(DocView).hits  # the item is highlighted in its summary
            screen = await open_screen(pilot, "A", ActivityScreen)
            assert screen.findings == expected and reads == []
