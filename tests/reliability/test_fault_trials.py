"""Faults: disk full, read-only store, permission denied, a summarizer that hangs or dies.

Each one must end in a clear one-line error (or a logged one for hooks, which exit 0),
with nothing lost: memory.md and the archives byte-identical to before.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.store.paths import StorePaths
from tests.reliability import reliability_kit as kit

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def can_mount() -> bool:
    if not IS_ROOT or not shutil.which("mount"):
        return False
    probe = Path(tempfile.mkdtemp(prefix="memkeeper-mount-probe-"))
    try:
        ok = (
            subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True
            ).returncode
            == 0
        )
        if ok:
            subprocess.run(["umount", str(probe)], check=True)
        return ok
    finally:
        probe.rmdir()


MOUNT_OK = can_mount()


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def filled_store(project: Path) -> tuple[StorePaths, bytes]:
    """A store whose memory.md is over the (small) rotation threshold."""
    from memkeeper.core.store.atomic import atomic_write_bytes, atomic_write_json
    from memkeeper.core.store.paths import ensure_store

    project.mkdir(parents=True, exist_ok=True)
    paths = StorePaths(project)
    ensure_store(paths)
    atomic_write_json(paths.config, kit.ROT_CONFIG)
    content = b"".join(kit.make_line(i) for i in range(400))  # ~20 KB, over 3000 tokens
    atomic_write_bytes(paths.memory, content)
    return paths, content


def hook(
    paths: StorePaths,
    event: str,
    env: dict[str, str],
    prefix: tuple[str, ...] = (),
    preexec_fn: Callable[[], object] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    payload = json.dumps(
        {
            "session_id": "fault-session",
            "cwd": str(paths.project),
            "hook_event_name": event,
            "tool_name": "Bash",
            "tool_input": {"command": "true"},
        }
    )
    return subprocess.run(
        [*prefix, sys.executable, "-P", "-m", "memkeeper.cli.main", "hook", event],
        input=payload.encode(),
        capture_output=True,
        env=env,
        timeout=60,
        preexec_fn=preexec_fn,
    )


def check(
    paths: StorePaths,
    env: dict[str, str],
    prefix: tuple[str, ...] = (),
    preexec_fn: Callable[[], object] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*prefix, sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(paths.project), "check"],
        capture_output=True,
        env=env,
        timeout=60,
        preexec_fn=preexec_fn,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[bytes], *words: str) -> None:
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("memkeeper: error:"), err
    assert any(w.lower() in err.lower() for w in words), err


def assert_untouched(paths: StorePaths, content: bytes) -> None:
    from memkeeper.core.store.memory_index import list_archives

    assert paths.memory.read_bytes() == content
    for name in list_archives(paths):  # a partial archive would be a copy with bytes missing
        assert (paths.root / name).read_bytes() == content
    assert not list(paths.root.rglob(".*.tmp"))


def then_rotation_works(paths: StorePaths, content: bytes) -> None:
    from memkeeper.core import doctor
    from memkeeper.core.log import rotation

    doctor.repair(paths, stale_seconds=0)
    assert rotation.rotate(paths, kit.ROT_THRESHOLD, kit.ROT_CARRY) is not None
    stream, problems = kit.reconstruct(paths, kit.ROT_CARRY)
    assert problems == [] and b"".join(ln + b"\n" for ln in stream) == content
    assert doctor.diagnose(paths, stale_seconds=0) == []


# --------------------------------------------------------------------------- disk full


def _limit_file_size(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of a kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_file_size_limit_during_rotation(tmp_path: Path) -> None:
    """A file-size limit below the archive's size: the archive write fails half way."""
    paths, content = filled_store(tmp_path / "project")
    env = kit.child_env(tmp_path / "home")
    limit = len(content) // 2
    proc = check(paths, env, preexec_fn=lambda: _limit_file_size(limit))
    assert_one_line_error(proc, "too large", "file")
    assert_untouched(paths, content)
    hooked = hook(paths, "PostToolUse", env, preexec_fn=lambda: _limit_file_size(limit))
    assert hooked.returncode == 0 and hooked.stderr == b""
    assert_untouched(paths, content)
    then_rotation_works(paths, content)


@pytest.mark.skipif(not MOUNT_OK, reason="needs root and tmpfs mounts to fill a real file system")
def test_disk_full_during_rotation_and_flush(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "small", "256k") as mount:
        paths, content = filled_store(mount / "project")
        env = kit.child_env(tmp_path / "home")
        filler = mount / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        with contextlib.suppress(OSError):  # fill the disk to the last byte
            for size in (4096, 512, 1):
                while True:
                    os.write(fd, b"\0" * size)
        os.close(fd)
        proc = check(paths, env)
        assert_one_line_error(proc, "no space")
        assert_untouched(paths, content)
        hooked = hook(paths, "PostToolUse", env)
        assert hooked.returncode == 0 and hooked.stderr == b""
        assert_untouched(paths, content)
        hooked = hook(paths, "SessionStart", env)
        assert hooked.returncode == 0
        assert_untouched(paths, content)
        filler.unlink()
        then_rotation_works(paths, content)


# --------------------------------------------------------------------------- read-only, permissions


@contextlib.contextmanager
def read_only(paths: StorePaths) -> Iterator[None]:
    """The store on a read-only bind mount of itself."""
    subprocess.run(["mount", "--bind", str(paths.root), str(paths.root)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(paths.root)], check=True)
        yield
    finally:
        subprocess.run(["umount", "-l", str(paths.root)], check=False)


# Permission bits cannot simulate it: memkeeper restores the modes of its own folders.
@pytest.mark.skipif(
    not MOUNT_OK, reason="a read-only store needs a read-only mount (root and mount permission)"
)
def test_read_only_store(tmp_path: Path) -> None:
    paths, content = filled_store(tmp_path / "project")
    env = kit.child_env(tmp_path / "home")
    with read_only(paths):
        assert_one_line_error(check(paths, env), "read-only", "permission")
        for event in ("PostToolUse", "UserPromptSubmit", "SessionStart", "Stop", "SessionEnd"):
            hooked = hook(paths, event, env)
            assert hooked.returncode == 0, (event, hooked.stderr)
            assert b"Traceback" not in hooked.stderr
        doctor = subprocess.run(
            [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(paths.project), "doctor"],
            capture_output=True,
            env=env,
            timeout=60,
        )
        assert doctor.returncode in (0, 1) and b"Traceback" not in doctor.stderr
        repair = subprocess.run(
            [
                sys.executable,
                "-m",
                "memkeeper.cli.main",
                "--project",
                str(paths.project),
                "doctor",
                "--repair",
            ],
            capture_output=True,
            env=env,
            timeout=60,
        )
        assert repair.returncode in (0, 1) and b"Traceback" not in repair.stderr
        assert_untouched(paths, content)
    then_rotation_works(paths, content)


# Root ignores permission bits; without these two capabilities it obeys them like anyone.
NO_DAC = ("setpriv", "--bounding-set=-dac_override,-dac_read_search", "--")


@pytest.mark.skipif(
    IS_ROOT and not shutil.which("setpriv"),
    reason="as root, needs setpriv to drop the capability to ignore permissions",
)
def test_permission_denied(tmp_path: Path) -> None:
    """The store cannot be reached (``.claude`` is mode 000): hooks exit 0, commands say why in one line.

    (memkeeper fixes the mode of its own store folders when it can, so the folder above is closed.)
    """
    paths, content = filled_store(tmp_path / "project")
    env = kit.child_env(tmp_path / "home")
    prefix = NO_DAC if IS_ROOT else ()
    closed = paths.project / ".claude"
    os.chmod(closed, 0o000)
    try:
        assert_one_line_error(check(paths, env, prefix), "permission")
        for event in ("PostToolUse", "UserPromptSubmit", "SessionStart", "SessionEnd"):
            hooked = hook(paths, event, env, prefix)
            assert hooked.returncode == 0 and b"Traceback" not in hooked.stderr, hooked.stderr
    finally:
        os.chmod(closed, 0o700)
    assert_untouched(paths, content)
    then_rotation_works(paths, content)


# --------------------------------------------------------------------------- summarizer faults


FAKE_SUMMARIZERS = {
    "hangs": "import time\ntime.sleep(600)\n",
    "dies": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
    "fails": "import sys\nsys.stderr.write('model exploded\\n')\nsys.exit(3)\n",
    "babbles": "print('this is not JSON at all')\n",
}


@pytest.mark.parametrize("behaviour", list(FAKE_SUMMARIZERS))
def test_summarizer_fault_leaves_the_archive_pending(
    behaviour: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memkeeper.core.summaries.summary as summary_module
    from memkeeper.core.log import rotation
    from memkeeper.core.store.atomic import atomic_write_json
    from memkeeper.core.store.memory_index import read_index
    from memkeeper.core.summaries.summary import SummaryError, generate_summary

    monkeypatch.setattr(summary_module, "BACKOFF_SECONDS", (0.0, 0.0, 0.0))
    paths, content = filled_store(tmp_path / "project")
    script = tmp_path / "fake_summarizer.py"
    script.write_text(FAKE_SUMMARIZERS[behaviour])
    config: dict[str, object] = dict(kit.ROT_CONFIG)
    config["summarizer"] = {
        "backend": "command",
        "command": [sys.executable, str(script)],
        "timeoutSeconds": 1,
    }
    atomic_write_json(paths.config, config)
    result = rotation.rotate(paths, kit.ROT_THRESHOLD, kit.ROT_CARRY)
    assert result is not None
    with pytest.raises(SummaryError) as info:
        generate_summary(paths, result.archive, sleep=lambda _s: None)
    message = str(info.value)
    assert "\n" not in message and result.archive in message
    entry = read_index(paths)["rotatedFiles"][0]
    assert entry["summaryGenerated"] is False and entry["summaryError"]
    assert (paths.root / result.archive).read_bytes() == content  # nothing lost
    assert not (paths.root / result.archive.replace(".md", ".summary.json")).exists()
    # The job that runs it in the background never raises into a hook.
    from memkeeper.core.store.jobs import run_job

    assert run_job(paths, "summary", {"archives": [result.archive]}) is True


def test_flush_with_a_dead_summarizer_keeps_the_entries(tmp_path: Path) -> None:
    """The flush falls back to extractive bullets: the session's facts still reach memory.md."""
    from memkeeper.core.log import flush
    from memkeeper.core.store.atomic import atomic_write_json
    from memkeeper.core.store.memory_index import read_index

    paths = kit.new_project(tmp_path, "flushfault")
    kit.flush_seed(paths)
    script = tmp_path / "fake.py"
    script.write_text(FAKE_SUMMARIZERS["dies"])
    atomic_write_json(
        paths.config,
        {"summarizer": {"backend": "command", "command": [sys.executable, str(script)], "timeoutSeconds": 1}},
    )
    result = flush.flush_pending(paths, max_chunks=1)
    assert result.sections == 1 and result.generators == ["extractive"]
    assert b"F000000" in paths.memory.read_bytes()
    assert read_index(paths)["lastMemoryUpdateTs"] == result.watermark


FLUSH_UNDER_LIMIT = r"""
import resource, signal, sys
from pathlib import Path
from typing import Any
from memkeeper.core.log import flush
from memkeeper.core.store.paths import StorePaths
paths = StorePaths(Path(sys.argv[1]))
original_chunks = flush.chunk_entries
flush.chunk_entries = lambda entries, max_chars=600: original_chunks(entries, 600)
limit = paths.memory.stat().st_size + int(sys.argv[2])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
print("ready", flush=True)
try:
    flush.flush_pending(paths, summarize=lambda _p, es: ([f"- [trial]: {e['text']}" for e in es], "trial"),
                        max_chunks=1)
except OSError as exc:
    sys.stderr.write(f"{exc.strerror}\n")
    sys.exit(1)
"""


@pytest.mark.parametrize("room", [0, 40, 400])
def test_disk_full_during_a_flush_append(room: int, tmp_path: Path) -> None:
    """The append of a flushed section fails part way: no torn text stays, the next flush finishes it."""
    from memkeeper.core import doctor
    from memkeeper.core.log import flush
    from memkeeper.core.store.atomic import atomic_write_bytes

    paths = kit.new_project(tmp_path, "flushfull")
    kit.flush_seed(paths)
    # memory.md is the biggest file, so the limit bites on its append, not on the journal
    atomic_write_bytes(paths.memory, b"# memory\n" + b"".join(kit.make_line(i) for i in range(200)))
    before = paths.memory.read_bytes()
    rc, _t, err = kit.run_child(
        FLUSH_UNDER_LIMIT, [str(paths.project), str(room)], kit.child_env(tmp_path / "home"), None
    )
    assert rc == 1 and "large" in err
    after = paths.memory.read_bytes()
    assert after.startswith(before)
    assert after == before  # a cut append is undone: no torn text stays
    doctor.repair(paths, stale_seconds=0)
    flush.flush_pending(paths, summarize=lambda _p, es: ([f"- [trial]: {e['text']}" for e in es], "trial"))
    text = paths.memory.read_bytes()
    facts = kit._flush_facts(paths)
    assert sorted(facts) == list(range(kit.FLUSH_ENTRIES)) and set(facts.values()) == {1}
    body = text[len(before) :]
    for line in body.split(b"\n"):  # only whole section headers and whole bullets
        assert line == b"" or line.startswith(b"## ") or re.match(rb"^- \[trial\]: F\d{6} ", line), line


# --------------------------------------------------------------------------- the search index, disk full


def words_store(project: Path, name: str, lines: int, seed: int) -> StorePaths:
    """A store with one session of ``lines`` prompts of varied words (an index several times its size)."""
    import random

    from memkeeper.core.store.paths import ensure_store

    project.mkdir(parents=True, exist_ok=True)
    paths = StorePaths(project)
    ensure_store(paths)
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(20000)]
    with open(paths.sessions / name, "w", encoding="utf-8") as handle:
        for _ in range(lines):
            text = " ".join(rng.choice(words) for _ in range(40))
            handle.write(json.dumps({"ts": "2026-11-01T10:00:00.000Z", "role": "user", "text": text}) + "\n")
    return paths


def _memkeeper(paths: StorePaths, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(paths.project), *args]
    return subprocess.run(command, capture_output=True, env=env, timeout=60, check=False)


def _index_files(paths: StorePaths) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in paths.root.iterdir() if p.name.startswith(".search.sqlite3")}


@pytest.mark.skipif(not MOUNT_OK, reason="needs root and tmpfs mounts to fill a real file system")
def test_a_reindex_that_fills_the_disk_gives_the_space_back(tmp_path: Path) -> None:
    """It used to leave its write-ahead log (the pages written before the failure) behind, and the
    disk full: closing cannot check the log into a database that has no room to grow."""
    with tmpfs(tmp_path / "small", "2M") as mount:
        paths = words_store(mount / "project", "2026-11-01_100000_aaaa1111.l1.jsonl", 2500, 1)
        env = kit.child_env(tmp_path / "home")
        free = os.statvfs(mount).f_bavail
        proc = _memkeeper(paths, env, "reindex", "--json")
        assert_one_line_error(proc, "full")
        assert not any(name.endswith("-wal") for name in _index_files(paths)), _index_files(paths)
        assert os.statvfs(mount).f_bavail >= free - 8  # a log line at most
        word = json.loads(
            (paths.sessions / "2026-11-01_100000_aaaa1111.l1.jsonl").read_text().splitlines()[7]
        )
        found = _memkeeper(paths, env, "search", *word["text"].split()[:3])
        assert found.returncode == 0, found.stderr  # the files are still searched


def test_a_reindex_out_of_room_keeps_the_old_index_and_leaves_no_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same failure anywhere (SQLite's page limit stands for a full disk): rolled back, the index
    as it was, its write-ahead log emptied."""
    from memkeeper.core.search import refresh, reindex, schema, search

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMKEEPER_NO_JOBS", "1")
    paths = words_store(tmp_path / "project", "2026-11-01_100000_aaaa1111.l1.jsonl", 300, 1)
    refresh(paths)
    first = json.loads((paths.sessions / "2026-11-01_100000_aaaa1111.l1.jsonl").read_text().splitlines()[7])
    more = words_store(tmp_path / "more", "2026-11-02_100000_bbbb2222.l1.jsonl", 300, 2)
    shutil.copyfile(
        more.sessions / "2026-11-02_100000_bbbb2222.l1.jsonl",
        paths.sessions / "2026-11-02_100000_bbbb2222.l1.jsonl",
    )
    real = schema.connect

    def out_of_room(path: Path, timeout: float = 1.0) -> Any:
        conn = real(path, timeout)
        ((pages,),) = conn.execute("PRAGMA page_count").fetchall()
        conn.execute(f"PRAGMA max_page_count={pages + 16}")
        return conn

    monkeypatch.setattr(schema, "connect", out_of_room)
    with pytest.raises(Exception, match="full"):
        reindex(paths)
    monkeypatch.setattr(schema, "connect", real)
    assert _index_files(paths).get(".search.sqlite3-wal", 0) == 0
    results = search(paths, " ".join(first["text"].split()[:3]))
    assert results.source == "index" and results.hits
