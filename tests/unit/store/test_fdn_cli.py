"""The store commands of the CLI and the demo store."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memkeeper.cli.main import main
from memkeeper.core.demo import create_demo_store
from memkeeper.core.store.paths import StorePaths


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def demo(tmp_path: Path) -> StorePaths:
    return create_demo_store(tmp_path / "demo")


def test_status_json_on_demo(demo: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--project", str(demo.project), "status", "--json")
    assert code == 0
    status = json.loads(out)
    assert status["summaries"] == {"generated": 3, "pending": 1, "failed": 1}
    assert status["archives"]["count"] == 5
    assert status["sessions"]["count"] == len(list(demo.sessions.glob("*.l1.jsonl"))) >= 5
    assert status["memory"]["thresholdTokens"] == 23_750
    assert 0 < status["memory"]["tokens"] < 23_750
    assert status["warnings"] == []
    failed = [f for f in status["archives"]["files"] if f["summary"] == "failed"]
    assert failed and failed[0]["error"]


def test_status_human_and_config_warning(demo: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    demo.config.write_text(json.dumps({"memoryRotation": {"thresholdTokens": "big"}, "colour": 1}))
    code, out, _ = _run(capsys, "--project", str(demo.project), "status")
    assert code == 0
    assert "█" in out and "/ 23,750 tokens" in out
    assert "1 failed" in out and "pending" in out
    assert "memoryRotation.thresholdTokens" in out  # the bad value is reported, defaults used


def test_status_reports_refused_and_missing_entries(
    demo: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    index = json.loads(demo.index.read_text())
    index["rotatedFiles"].append({"file": "../../outside.md", "summaryGenerated": False})
    index["rotatedFiles"].append({"file": "memory_20200101_000000.md", "summaryGenerated": False})
    demo.index.write_text(json.dumps(index))
    status = json.loads(_run(capsys, "--project", str(demo.project), "status", "--json")[1])
    assert any("outside the memory folder" in w for w in status["warnings"])
    assert any("memory_20200101_000000.md" in w and "missing" in w for w in status["warnings"])


def test_rotate_refuses_when_nothing_to_do_then_force(
    demo: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "--project", str(demo.project), "rotate")
    assert code == 3 and "Nothing to rotate" in out and "--force" in out
    before = demo.memory.read_bytes()
    code, out, _ = _run(capsys, "--project", str(demo.project), "rotate", "--force")
    assert code == 0
    name = re.fullmatch(r"\[MEMORY_KEEPER_ROTATE\] file=(memory_\d{8}_\d{6}\.md)\n", out)
    assert name and demo.archive(name.group(1)).read_bytes() == before


def test_rotate_with_bad_config_is_usage_error(demo: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    demo.config.write_text("{broken")
    code, _, err = _run(capsys, "--project", str(demo.project), "rotate")
    assert code == 2 and err.startswith("memkeeper: error:") and "config.json" in err


def test_memory_set_get_list(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    p = str(store.project)
    code, out, _ = _run(capsys, "--project", p, "memory-set", "architecture", "FastAPI", "+", "Postgres")
    assert code == 0 and "architecture.md" in out
    assert (store.root / "architecture.md").read_text() == "FastAPI + Postgres\n"
    assert not (store.project / "architecture.md").exists()  # not the project root (JS bug)
    code, out, _ = _run(capsys, "--project", p, "memory-get", "architecture")
    assert code == 0 and "FastAPI + Postgres" in out
    code, out, _ = _run(capsys, "--project", p, "memory-get", "--json")
    got = json.loads(out)
    assert got["architecture"]["content"] == "FastAPI + Postgres\n" and got["project"]["content"] is None
    assert _run(capsys, "--project", p, "memory-get", "project")[0] == 3
    code, out, _ = _run(capsys, "--project", p, "memory-list", "--json")
    rows = {r["file"]: r for r in json.loads(out)["files"]}
    assert rows["architecture.md"]["exists"] and not rows["conventions.md"]["exists"]
    assert _run(capsys, "--project", p, "memory-list")[0] == 0


@pytest.mark.parametrize("name", ["memory", "../x", "secrets", "CLAUDE"])
def test_memory_set_refuses_other_names(
    store: StorePaths, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, _, err = _run(capsys, "--project", str(store.project), "memory-set", name, "text")
    assert code == 2 and "allowed: project, architecture, conventions" in err
    assert sorted(p.name for p in store.root.glob("*.md")) == []


def test_reset(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(3):
        main(["--project", str(store.project), "check"])
    from memkeeper.core.log.progress import read_counters

    assert read_counters(store)["toolUses"] == 3
    code, out, _ = _run(capsys, "--project", str(store.project), "reset")
    assert code == 0 and out == "[MEMORY_KEEPER] Counter reset.\n"
    assert read_counters(store)["toolUses"] == 0


def test_help_lists_the_store_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in (
        "status",
        "check",
        "rotate",
        "migrate-legacy",
        "reset",
        "memory-set",
        "memory-get",
        "memory-list",
        "demo",
    ):
        assert command in out


def test_check_through_module_entry_point(store: StorePaths, home: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", "check"],
        cwd=store.project,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home), "MEMKEEPER_NO_JOBS": "1"},
    )
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    assert json.loads(store.counters.read_text())["toolUses"] == 1


# --- demo -------------------------------------------------------------------------------------


def test_demo_is_deterministic_and_refuses_an_existing_store(tmp_path: Path) -> None:
    a = create_demo_store(tmp_path / "a", seed=7)
    b = create_demo_store(tmp_path / "b", seed=7)
    c = create_demo_store(tmp_path / "c", seed=8)

    def files(paths: StorePaths) -> dict[str, bytes]:
        return {
            str(p.relative_to(paths.root)): p.read_bytes()
            for p in sorted(paths.root.rglob("*"))
            if p.is_file() and p.name != "stamp"  # (runtime state: whose, where)
        }

    assert files(a) == files(b)
    assert files(a) != files(c)
    with pytest.raises(FileExistsError):
        create_demo_store(tmp_path / "a")


def _check_memory_format(memory: str) -> None:
    """Check memory.md has dated section headers and only `- [tag]: text` bullets."""
    headers = re.findall(
        r"^## (\d{4}-\d{2}-\d{2}_\d{4}) \(local (\d{2}-\d{2}_\d{4})\)$", memory, re.MULTILINE
    )
    assert len(headers) >= 10
    assert all(
        re.fullmatch(r"- \[[^\]]+\]: .+", line) for line in memory.splitlines() if line.startswith("-")
    )


def _check_summary_format(data: dict[str, Any]) -> None:
    """Check a generated archive summary has every field, and its themes, decisions and issues theirs."""
    assert {
        "dateRange",
        "sectionCount",
        "themes",
        "keyDecisions",
        "issues",
        "overallSummary",
        "sourceFile",
        "generatedAt",
        "generator",
    } <= set(data)
    assert all({"name", "summary", "sessions"} <= set(t) for t in data["themes"])
    assert all({"decision", "reason", "date"} <= set(d) for d in data["keyDecisions"])
    assert all(i["status"] in ("open", "resolved") for i in data["issues"])


def _check_index_entries(demo: StorePaths, index: dict[str, Any]) -> None:
    """Check each rotated file in the index: its name, size, date range and summary agree with the files."""
    assert len(index["rotatedFiles"]) >= 4
    for entry in index["rotatedFiles"]:
        archive = demo.archive(entry["file"])
        assert re.fullmatch(r"memory_\d{8}_\d{6}\.md", entry["file"])
        assert (
            entry["bytes"] == archive.stat().st_size
            and entry["dateRange"]["first"] <= entry["dateRange"]["last"]
        )
        summary = demo.archive(entry["summary"])
        assert summary.exists() == entry["summaryGenerated"]
        if entry["summaryGenerated"]:
            _check_summary_format(json.loads(summary.read_text("utf-8")))


def _check_l1_files(l1: list[Path]) -> list[dict[str, Any]]:
    """Check the L1 files span several days, are named after their session and hold every kind of entry."""
    assert len({p.name[:10] for p in l1}) >= 5  # several days
    entries = [json.loads(line) for p in l1 for line in p.read_text("utf-8").splitlines()]
    for path in l1:
        first = json.loads(path.read_text("utf-8").splitlines()[0])
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}_\d{6}_" + first["session"][:8] + r"\.l1\.jsonl", path.name)
    assert {e["role"] for e in entries} == {"user", "assistant", "tool", "tool_result"}
    calls = {e["tool_use_id"] for e in entries if e["role"] == "tool"}
    results = {e["tool_use_id"] for e in entries if e["role"] == "tool_result"}
    assert calls == results
    assert any(e.get("sidechain") and e.get("agentId") for e in entries)
    return entries


def test_demo_content_is_in_the_real_formats(demo: StorePaths) -> None:
    memory = demo.memory.read_text("utf-8")
    _check_memory_format(memory)
    everything = memory + "".join(p.read_text("utf-8") for p in demo.root.glob("memory_*.md"))
    assert re.search(r"[\uac00-\ud7a3]", everything)  # some Korean
    index = json.loads(demo.index.read_text())
    _check_index_entries(demo, index)
    l1 = sorted(demo.sessions.glob("*.l1.jsonl"))
    entries = _check_l1_files(l1)
    assert index["lastMemoryUpdateTs"] < max(e["ts"] for e in entries)  # the newest session is unflushed
    for name in ("project", "architecture", "conventions"):
        assert demo.named(name).read_text("utf-8").startswith("# ")


def test_demo_bullets_about_code_name_a_code_module(tmp_path: Path) -> None:
    """A refactor, a test, coverage or a lint finding is about a module, never about a Dockerfile."""
    about_code = re.compile(
        r"(?:Split|tests for|Coverage of|failure in|helper in|unused import in) (\S+?)[;\s]"
    )
    named: list[str] = []
    for seed in range(4):
        paths = create_demo_store(tmp_path / str(seed), seed=seed)
        text = "".join(p.read_text("utf-8") for p in sorted(paths.root.glob("memory*.md")))
        named += about_code.findall(text)
    assert len(named) >= 20
    assert all(name.startswith("app/") and name.endswith(".py") for name in named), sorted(set(named))


def test_demo_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "demo", str(tmp_path / "d"))
    assert code == 0 and out.strip() == str((tmp_path / "d").absolute())
    code, _, err = _run(capsys, "demo", str(tmp_path / "d"))
    assert code == 2 and "already holds" in err
    code, out, _ = _run(capsys, "demo")
    made = Path(out.strip())
    try:
        assert (made / ".claude" / "memory" / "memory.md").is_file()
    finally:
        import shutil

        shutil.rmtree(made)


def test_check_path_imports_only_stdlib_and_core(store: StorePaths) -> None:
    # The hook path runs on every tool call: no pydantic, rich, argparse, and none of the
    # stdlib modules it has no use for (json and typing it imports as any module does).
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from memkeeper.cli.main import main\n"
        "rc = main(['--project', sys.argv[1], 'check'])\n"
        "heavy = ('pydantic', 'rich', 'argparse', 'dataclasses', 'subprocess', 'tempfile',\n"
        "         'datetime', 'threading', 'pathlib', 'inspect')\n"
        "print(rc, ','.join(sorted(m for m in heavy if m in sys.modules and m not in before)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(store.project)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(store.project), "MEMKEEPER_NO_JOBS": "1"},
    )
    assert proc.stdout.strip() == "0", proc.stdout + proc.stderr
