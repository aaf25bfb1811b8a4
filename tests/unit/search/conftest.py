"""A small, varied store for the search tests (written here, no external data)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

from memkeeper.core.store.paths import StorePaths, ensure_store

T = TypeVar("T")

MEMORY_MD = """# Project memory

## 2026-11-01_0900 (local 11-01_1800)
- [design]: chose SQLite FTS5 for search because grep was too slow
- [lock]: the rotation lock uses flock

## 2026-11-20_1015 (local 11-20_1915)
- [한국어]: 메모리 검색은 트라이그램 인덱스를 사용한다
- [db]: WAL mode for the search index
"""

ARCHIVE_1 = """## 2026-10-01_1200
- [setup]: created the plugin skeleton
- [hooks]: PostToolUse counter added

## 2026-10-03_0800
- [rotation]: rotation threshold is 23,750 tokens
- [버그]: 세션 파일 이름 충돌을 고쳤다
"""

ARCHIVE_2 = """preamble line without a header about pydantic

## 2026-10-10_1000
- [search]: JS search crashed on a missing folder
- [NEAR]: the word NEAR and a-b:c (parens) "quotes" *stars*
"""

SUMMARY_1 = {
    "dateRange": {"first": "2026-10-01", "last": "2026-10-03"},
    "themes": [
        {"name": "Plugin skeleton", "summary": "Hooks and counters were set up", "sessions": ["2026-10-01"]},
        {"name": "회전", "summary": "로테이션 임계값을 정했다"},
    ],
    "keyDecisions": [
        {
            "decision": "Use flock for the store lock",
            "reason": "a killed process never leaves it stuck",
            "date": "2026-10-02",
        }
    ],
    "issues": [{"issue": "session file name collision", "status": "resolved", "date": "2026-10-03"}],
    "overallSummary": "The plugin skeleton, hooks and rotation were built. SQLite was considered.",
}

# a partial summary: a theme without summary, a decision without reason, odd items
SUMMARY_2 = {
    "themes": [{"name": "Search rewrite"}, "plain string theme about sqlite", 42],
    "keyDecisions": [{"decision": "Index every tier with FTS5"}],
}


def l1_lines(session: str, day: str, texts: list[tuple[str, str]]) -> str:
    lines = []
    for i, (role, text) in enumerate(texts):
        entry: dict[str, object] = {"ts": f"{day}T10:{i:02d}:00.000Z", "role": role}
        if role == "tool":
            entry.update({"name": "Bash", "cmd": text, "tool_use_id": f"t{i}"})
        elif role == "tool_result":
            entry.update({"tool_use_id": f"t{i - 1}", "result": "ok", "output": text})
        else:
            entry["text"] = text
        entry["session"] = session
        lines.append(json.dumps(entry, ensure_ascii=False))
    return "\n".join(lines)  # no trailing newline, like the JS plugin


def refresh_cut_short(paths: StorePaths, after_files: int) -> None:
    """A refresh interrupted as a user's Ctrl-C would, once ``after_files`` files are written."""
    from memkeeper.core.search import refresh

    calls = 0

    def cut_short(_done: int, _total: int, _file: str) -> None:
        nonlocal calls
        calls += 1
        if calls == after_files + 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        refresh(paths, progress=cut_short)


def build_store(project: Path) -> StorePaths:
    paths = StorePaths(project)
    ensure_store(paths)
    paths.memory.write_text(MEMORY_MD, "utf-8")
    paths.named("project").write_text(
        "# Project\n\n## Goals\nLong-term memory for Claude Code with sqlite search\n", "utf-8"
    )
    paths.archive("memory_20261003_090000.md").write_text(ARCHIVE_1, "utf-8")
    paths.archive("memory_20261010_110000.md").write_text(ARCHIVE_2, "utf-8")
    paths.archive("memory_20261003_090000.summary.json").write_text(
        json.dumps(SUMMARY_1, ensure_ascii=False), "utf-8"
    )
    paths.archive("memory_20261010_110000.summary.json").write_text(json.dumps(SUMMARY_2), "utf-8")
    paths.archive("memory_20261011_110000.summary.json").write_text("{ not json", "utf-8")
    (paths.sessions / "2026-11-01_090000_aaaa1111.l1.jsonl").write_text(
        l1_lines(
            "aaaa1111-full",
            "2026-11-01",
            [
                ("user", "검색 기능을 만들어줘 with sqlite please"),
                ("assistant", "I will build the SQLite FTS5 index; 트라이그램 토크나이저를 쓰겠습니다"),
                ("tool", "pytest -q tests/search"),
                ("tool_result", "12 passed in 0.5s"),
            ],
        ),
        "utf-8",
    )
    (paths.sessions / "2026-11-02_100000_bbbb2222.l1.jsonl").write_text(
        l1_lines(
            "bbbb2222-full",
            "2026-11-02",
            [
                ("user", "why is the rotation lock stuck?"),
                ("assistant", "The flock is released when the process dies."),
            ],
        )
        + "\n",
        "utf-8",
    )
    return paths


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StorePaths:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMKEEPER_NO_JOBS", "1")
    return build_store(tmp_path / "proj")


@pytest.fixture
def empty_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StorePaths:
    """A store with nothing in it yet, no jobs started, HOME in the test's folder."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMKEEPER_NO_JOBS", "1")
    paths = StorePaths(tmp_path / "proj")
    ensure_store(paths)
    return paths


@dataclass(frozen=True)
class Screen(Generic[T]):
    """How a test watches the activity screen build one of its lists: ``show(paths)`` builds it,
    ``module.read(path, ...)`` reads one file for it, ``module.indexed(paths)`` asks the index."""

    module: object
    read: str
    indexed: str
    show: Callable[[StorePaths], T]

    def reads(self, store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> tuple[T, list[str]]:
        """The list, and the names of the files read for it."""
        reads: list[str] = []
        original = getattr(self.module, self.read)

        def counting(path: str | Path, *rest: Any) -> Any:
            reads.append(Path(path).name)
            return original(path, *rest)

        with monkeypatch.context() as patch:
            patch.setattr(self.module, self.read, counting)
            return self.show(store), reads

    def without_index(self, store: StorePaths, monkeypatch: pytest.MonkeyPatch) -> T:
        """The list when the index has nothing (every file read)."""
        with monkeypatch.context() as patch:
            patch.setattr(self.module, self.indexed, lambda paths: {})
            return self.show(store)


def as_made_before(store: StorePaths, table: str, flag: str) -> None:
    """The store's index as an index made before ``table`` was added (nor filled: meta ``flag``)."""
    from memkeeper.core.search import schema

    conn = schema.connect(store.search_db)
    conn.execute(f"DROP TABLE {table}")
    conn.execute("DELETE FROM meta WHERE key=?", (flag,))
    conn.close()


def from_index(store: StorePaths, read: Callable[[Any], T]) -> T:
    """``read(conn)`` on a read-only connection to the store's index."""
    from memkeeper.core.search import schema

    conn = schema.connect_readonly(store.search_db, 1.0)
    assert conn is not None
    try:
        return read(conn)
    finally:
        conn.close()
