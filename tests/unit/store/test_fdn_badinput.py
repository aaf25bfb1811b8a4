"""Bad input: binary memory.md, a 1 MB line, missing and read-only folders: clear errors, no loss."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from memkeeper.cli.main import main
from memkeeper.core.log import rotation
from memkeeper.core.log.migrate import migrate_legacy
from memkeeper.core.store.memory_index import read_index
from memkeeper.core.store.paths import StorePaths


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_non_utf8_memory_rotates_byte_for_byte(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    data = (b"## 2026-11-01_1000\n- caf\xe9 latin-1 \xff\xfe binary \x00 bytes\n") * 2500
    store.memory.write_bytes(data)
    code, out, _ = _run(capsys, "--project", str(store.project), "check")
    assert code == 0 and "[MEMORY_KEEPER_ROTATE]" in out
    archive = next(store.root.glob("memory_*.md"))
    assert archive.read_bytes() == data
    assert data.endswith(store.memory.read_bytes())
    code, out, _ = _run(capsys, "--project", str(store.project), "status", "--json")
    assert code == 0 and json.loads(out)["archives"]["count"] == 1


def test_non_utf8_memory_migrates_losslessly(store: StorePaths) -> None:
    data = b"".join(b"## 2026-10-%02d_1000\n" % d + b"- \xc3\x28 bad \xa0 utf8\n" * 400 for d in range(1, 20))
    store.memory.write_bytes(data)
    plan = migrate_legacy(store)
    assert plan.needed
    pieces = b"".join(store.archive(a.name).read_bytes() for a in plan.archives) + store.memory.read_bytes()
    assert pieces == data


def test_single_1mb_line(store: StorePaths) -> None:
    data = b"x" * (1024 * 1024)  # one line, no newline
    store.memory.write_bytes(data)
    result = rotation.rotate(store)
    assert result is not None
    assert store.archive(result.archive).read_bytes() == data
    assert store.memory.read_bytes() == b""  # the line cannot be carried over; it is archived whole


def test_single_1mb_line_migration(store: StorePaths) -> None:
    data = b"## 2026-11-01_1000\n" + b"y" * (1024 * 1024) + b"\n- [after]: small line\n"
    store.memory.write_bytes(data)
    plan = migrate_legacy(store)
    pieces = b"".join(store.archive(a.name).read_bytes() for a in plan.archives) + store.memory.read_bytes()
    assert pieces == data
    assert store.memory.read_bytes() == b"- [after]: small line\n"


def test_missing_store_status_is_clear_and_creates_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "--project", str(project), "status")
    assert code == 3 and "No memory store" in out and err == ""
    code, out, _ = _run(capsys, "--project", str(project), "status", "--json")
    assert code == 3 and json.loads(out)["exists"] is False
    assert not (project / ".claude").exists()


def test_missing_subfolders_and_memory(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / ".claude" / "memory").mkdir(parents=True)  # no sessions/, logs/, memory.md
    code, out, _ = _run(capsys, "--project", str(project), "status", "--json")
    assert code == 0 and json.loads(out)["sessions"]["count"] == 0
    code, out, _ = _run(capsys, "--project", str(project), "rotate", "--force")
    assert code == 3 and "Nothing to rotate" in out
    assert _run(capsys, "--project", str(project), "check")[0] == 0
    assert (project / ".claude" / "memory" / "sessions").is_dir()


def test_missing_project_directory_for_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "not" / "yet"
    assert _run(capsys, "--project", str(project), "check")[0] == 0
    assert (project / ".claude" / "memory").is_dir()


def _really_read_only(folder: Path) -> bool:
    probe = folder / ".probe"
    try:
        probe.write_bytes(b"")
    except PermissionError:
        return True
    probe.unlink()
    return False


def test_read_only_folder_real(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    data = b"- [x]: keep me\n" * 7000
    store.memory.write_bytes(data)
    read_index(store)
    os.chmod(store.root, stat.S_IRUSR | stat.S_IXUSR)
    try:
        if not _really_read_only(store.root):
            pytest.skip(
                "running as root (or without permission checks): chmod cannot make a folder read-only"
            )
        code, _, err = _run(capsys, "--project", str(store.project), "rotate")
        assert code == 1 and err.startswith("memkeeper: error:") and err.count("\n") == 1
        code, out, _ = _run(capsys, "--project", str(store.project), "status", "--json")
        assert code == 0 and json.loads(out)["memory"]["bytes"] == len(data)
    finally:
        os.chmod(store.root, 0o700)
    assert store.memory.read_bytes() == data
    assert not list(store.root.glob("memory_*.md"))


def test_unwritable_folder_simulated(
    store: StorePaths, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Same failure as a read-only folder, injected where every write goes, so it runs as root too.
    data = b"- [x]: keep me\n" * 7000
    store.memory.write_bytes(data)

    def refuse(path: Path, *_: object, **__: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(rotation, "atomic_write_bytes", refuse)
    code, _, err = _run(capsys, "--project", str(store.project), "rotate")
    assert code == 1
    assert err.startswith("memkeeper: error: Permission denied") and err.count("\n") == 1
    assert store.memory.read_bytes() == data
    assert not list(store.root.glob("memory_*.md"))


def test_unreadable_memory_in_check_is_one_line(
    store: StorePaths, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store.memory.write_bytes(b"x\n" * 60_000)

    def refuse(*_: object, **__: object) -> None:
        raise PermissionError(13, "Permission denied", str(store.memory))

    monkeypatch.setattr(rotation, "rotate", refuse)
    code, out, err = _run(capsys, "--project", str(store.project), "check")
    assert code == 1 and out == ""
    assert err == f"memkeeper: error: Permission denied: {store.memory}\n"
