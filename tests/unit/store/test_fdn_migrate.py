"""Legacy migration: nothing lost (property test), backup, dateRange, idempotent, dry run."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memkeeper.cli.main import main
from memkeeper.core.log import migrate
from memkeeper.core.store import jobs
from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.paths import StorePaths, ensure_store


def _legacy(
    days: int, lines_per_day: int, preamble: str = "# Memory\n\nOld notes before any date.\n\n"
) -> bytes:
    parts = [preamble]
    for d in range(1, days + 1):
        parts.append(f"## 2026-01-{d:02d}_0930 (local 01-{d:02d}_1830)\n")
        parts.extend(f"- [topic{d}]: fact {i} " + "word " * 25 + "\n" for i in range(lines_per_day))
        parts.append("\n")
    return "".join(parts).encode()


def _pieces(store: StorePaths, plan: migrate.MigrationPlan) -> bytes:
    return b"".join(store.archive(a.name).read_bytes() for a in plan.archives) + store.memory.read_bytes()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_reference_shaped_file_is_split_without_loss(store: StorePaths) -> None:
    data = _legacy(10, 120)  # ~190 KB over 10 days, like the reference's observed case
    store.memory.write_bytes(data)
    plan = migrate.migrate_legacy(store)
    assert plan.needed and len(plan.archives) >= 2
    assert _pieces(store, plan) == data  # every byte, in order, nothing added
    assert b"Old notes before any date." in store.archive(plan.archives[0].name).read_bytes()
    for archive in plan.archives:
        assert archive.name.startswith("memory_202601") and archive.name[-9:-5] == "2359"
        assert archive.tokens <= 23_750
    assert [a.name[-7:-3] for a in plan.archives] == [f"59{n:02d}" for n in range(len(plan.archives))]
    # backup first, identical to the original
    assert plan.backup is not None and (store.backups / plan.backup).read_bytes() == data
    # index entries with dateRange, and the carryover is a line-aligned tail
    entries = {e["file"]: e for e in read_index(store)["rotatedFiles"]}
    for archive in plan.archives:
        entry = entries[archive.name]
        assert entry["dateRange"] == {"first": archive.first_date, "last": archive.last_date}
        assert entry["summaryGenerated"] is False
        assert entry["bytes"] == archive.bytes
    assert store.memory.stat().st_size <= 2_375 * 4
    assert data.endswith(store.memory.read_bytes())


def test_no_blank_lines_added(store: StorePaths) -> None:
    data = _legacy(12, 100)
    store.memory.write_bytes(data)
    plan = migrate.migrate_legacy(store)
    blank = sum(content.count(b"\n\n") for content in [_pieces(store, plan)])
    assert blank == data.count(b"\n\n")


def test_second_run_does_nothing(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    store.memory.write_bytes(_legacy(10, 120))
    assert migrate.migrate_legacy(store).needed
    before = _snapshot(store.root)
    second = migrate.migrate_legacy(store)
    assert not second.needed and second.archives == []
    assert _snapshot(store.root) == before
    assert main(["--project", str(store.project), "migrate-legacy"]) == 3
    assert "No migration needed" in capsys.readouterr().out


def test_dry_run_changes_nothing_and_matches_the_real_run(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    store.memory.write_bytes(_legacy(10, 120))
    before = _snapshot(store.root)
    plan = migrate.migrate_legacy(store, dry_run=True)
    assert plan.needed and plan.dry_run
    assert main(["--project", str(store.project), "migrate-legacy", "--dry-run", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [a["file"] for a in shown["archives"]] == [a.name for a in plan.archives]
    assert main(["--project", str(store.project), "migrate-legacy", "--dry-run"]) == 0
    assert "nothing is changed" in capsys.readouterr().out
    assert _snapshot(store.root) == before
    done = migrate.migrate_legacy(store)
    assert [a.name for a in done.archives] == [a.name for a in plan.archives]


def test_existing_archive_names_are_never_clobbered(store: StorePaths) -> None:
    data = _legacy(10, 120)
    first = migrate.plan_migration(store) if store.memory.exists() else None
    assert first is None
    store.memory.write_bytes(data)
    planned = migrate.plan_migration(store).archives[0].name
    store.archive(planned).write_bytes(b"an archive that was already here\n")
    plan = migrate.migrate_legacy(store)
    assert planned not in [a.name for a in plan.archives]
    assert store.archive(planned).read_bytes() == b"an archive that was already here\n"
    assert _pieces(store, plan) == data


def test_cli_prints_triggers_and_starts_summary_job(
    store: StorePaths, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    monkeypatch.setattr(jobs, "start_job", lambda paths, kind, options=None: started.append(kind))
    store.memory.write_bytes(_legacy(10, 120))
    assert main(["--project", str(store.project), "migrate-legacy"]) == 0
    out = capsys.readouterr().out.splitlines()
    archives = sorted(p.name for p in store.root.glob("memory_*.md"))
    assert out[0] == f"[MEMORY_KEEPER] Legacy split: {len(archives)} archives created"
    assert out[1 : 1 + len(archives)] == [f"[MEMORY_KEEPER_ROTATE] file={n}" for n in archives]
    assert started == ["summary"]


def test_no_header_and_oversized_section_are_force_split(store: StorePaths) -> None:
    data = b"".join(b"- undated line %05d " % i + b"z" * 60 + b"\n" for i in range(5000))
    store.memory.write_bytes(data)
    plan = migrate.migrate_legacy(store)
    assert len(plan.archives) >= 3  # one section of ~400 KB, split at line boundaries
    assert _pieces(store, plan) == data
    for archive in plan.archives:
        content = store.archive(archive.name).read_bytes()
        assert content.endswith(b"\n") and archive.tokens <= 23_750


# --- property: the multiset of original lines is kept -----------------------------------------

_line = st.one_of(
    st.just(""),
    st.builds(lambda d: f"## 2026-0{d % 9 + 1}-{d % 28 + 1:02d}_1200", st.integers(0, 400)),
    st.builds(lambda d: f"## 2026-11-{d % 28 + 1:02d}", st.integers(0, 400)),
    st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\n"), max_size=60),
    st.builds(lambda n: "- [big]: " + "w" * n, st.integers(0, 900)),
    st.just("한국어 메모 줄 - [결정]: 캐시는 60초"),
    st.just("crlf line\r"),
)


@pytest.mark.slow  # over 10 s on two busy cores: left out of the quick subset
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(_line, min_size=0, max_size=120),
    trailing_newline=st.booleans(),
    percent=st.integers(5, 130),
    carryover=st.integers(1, 60),
)
def test_migration_conserves_every_line(
    lines: list[str], trailing_newline: bool, percent: int, carryover: int
) -> None:
    text = "\n".join(lines) + ("\n" if trailing_newline and lines else "")
    data = text.encode("utf-8")
    # The threshold is a share of the file, so most examples split and some do not.
    threshold = max(2, -(-len(data) // 4) * percent // 100)
    with tempfile.TemporaryDirectory() as tmp:
        store = StorePaths(Path(tmp))
        ensure_store(store)
        store.memory.write_bytes(data)
        plan = migrate.migrate_legacy(store, threshold_tokens=threshold, carryover_tokens=carryover)
        if not plan.needed:
            event("under the threshold")
            assert store.memory.read_bytes() == data
            return
        event(f"split into {min(len(plan.archives), 3)}+ archives")
        outputs = [store.archive(a.name).read_bytes() for a in plan.archives] + [store.memory.read_bytes()]
        original = Counter(data.split(b"\n"))
        kept: Counter[bytes] = Counter()
        for content in outputs:
            kept.update(content.split(b"\n"))
        assert not original - kept  # multiset inclusion
        assert b"".join(outputs) == data  # and in fact an exact partition
        assert (store.backups / str(plan.backup)).read_bytes() == data
        assert tuple(a.name for a in plan.archives) == tuple(dict.fromkeys(a.name for a in plan.archives))
        assert plan.archives
        again = migrate.migrate_legacy(store, threshold_tokens=threshold, carryover_tokens=carryover)
        if carryover <= threshold:
            assert not again.needed  # idempotent


def test_migration_needs_strictly_more_than_the_threshold(store: StorePaths) -> None:
    store.memory.write_bytes(
        b"## 2026-01-01_0000\n" + b"a" * (94_999 - 19) + b"\n"
    )  # 95,000 B = 23,750 tokens
    assert store.memory.stat().st_size == 95_000
    assert not migrate.plan_migration(store).needed  # JS: only when > 23,750
    store.memory.write_bytes(store.memory.read_bytes() + b"b")
    assert migrate.plan_migration(store).needed
