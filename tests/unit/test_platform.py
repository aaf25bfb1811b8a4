"""The platform module's portable branches, and the one bounded-wait helper.

The branches a Windows Python takes are run here on this system by taking the POSIX
facility away (``monkeypatch``); ``scripts/foreign-tests.sh`` runs the whole suite so.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from memkeeper.core.basics import platform, waits
from memkeeper.core.store import lock
from tests.lock_holder import held


@pytest.fixture(params=["O_NOFOLLOW", "lstat"])
def no_follow(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of refusing a link: the kernel's flag, and lstat + compare where there is none."""
    if request.param == "lstat":
        monkeypatch.setattr(platform, "_O_NOFOLLOW", 0)
    elif not platform._O_NOFOLLOW:
        pytest.skip("this system has no O_NOFOLLOW")
    return str(request.param)


def test_a_link_is_refused_and_its_target_untouched(tmp_path: Path, no_follow: str) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"keep me")
    link = tmp_path / "link"
    link.symlink_to(target)
    for flags in (os.O_RDONLY, os.O_WRONLY | os.O_TRUNC, os.O_RDWR | os.O_APPEND | os.O_CREAT):
        with pytest.raises(OSError) as raised:
            platform.open_no_follow(link, flags)
        assert raised.value.errno == errno.ELOOP
    assert target.read_bytes() == b"keep me"


def test_a_plain_file_opens_and_a_new_one_is_made(tmp_path: Path, no_follow: str) -> None:
    fd = platform.open_no_follow(tmp_path / "new", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"made")
    os.close(fd)
    fd = platform.open_no_follow(tmp_path / "new", os.O_RDONLY)
    assert os.read(fd, 10) == b"made"
    os.close(fd)


def test_without_o_nofollow_a_file_renamed_in_meanwhile_is_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counters' log is renamed away and started again while hooks append to it: that is
    not a link, and the open must not fail (counts were lost when it did)."""
    monkeypatch.setattr(platform, "_O_NOFOLLOW", 0)
    log = tmp_path / "counters.pending"
    log.write_bytes(b"old\n")
    real_open, swaps = os.open, list[int]()

    def open_then_swap(path: str, flags: int, mode: int = 0o777) -> int:
        fd = real_open(path, flags, mode)
        if not swaps:  # the first open: a fold renames the log and a new one starts
            swaps.append(1)
            os.rename(log, tmp_path / "counters.pending.1.closed")
            log.write_bytes(b"new\n")
        return fd

    monkeypatch.setattr(os, "open", open_then_swap)
    fd = platform.open_no_follow(log, os.O_RDWR | os.O_APPEND)
    try:
        assert platform.read_at(fd, 100, 0) == b"new\n"
    finally:
        os.close(fd)


def test_read_at_without_pread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "data"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        with_pread = platform.read_at(fd, 4, 3)
        monkeypatch.delattr(os, "pread", raising=False)
        assert platform.read_at(fd, 4, 3) == with_pread == b"3456"
        assert platform.read_at(fd, 100, 8) == b"89"
    finally:
        os.close(fd)


def test_kill_ends_a_process_with_or_without_sigkill(monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    for take_away in (False, True):
        if take_away:
            monkeypatch.delattr(signal, "SIGKILL", raising=False)
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        platform.kill(proc)
        assert proc.wait(timeout=30) != 0


# --------------------------------------------------------------------------- locks


@pytest.fixture(params=["queued", "polled"])
def lock_wait(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of waiting for a lock: in the kernel's queue (POSIX), polling (Windows)."""
    if request.param == "polled":
        monkeypatch.setattr(platform, "queued_lock_wait", lambda: False)
    elif not platform.queued_lock_wait():
        pytest.skip("no queued lock wait on this system")
    return str(request.param)


def test_a_held_lock_times_out_in_any_thread_and_is_taken_once_free(tmp_path: Path, lock_wait: str) -> None:
    path = tmp_path / "store.lock"
    outcome: list[str] = []

    def wait_briefly() -> None:
        try:
            with lock.file_lock(path, timeout=0.3):
                outcome.append("taken")
        except lock.LockTimeout:
            outcome.append("timed out")

    with held(path):
        assert lock.is_locked(path)
        wait_briefly()  # the main thread
        other = threading.Thread(target=wait_briefly)
        other.start()
        other.join(timeout=30)
    assert outcome == ["timed out", "timed out"]
    with lock.file_lock(path, timeout=5):
        assert lock.is_locked(path)  # (another opener sees it held, in this process too)
    assert not lock.is_locked(path)


def test_a_waiter_gets_the_lock_when_it_is_released(tmp_path: Path, lock_wait: str) -> None:
    path = tmp_path / "store.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-P",
            "-c",
            "import sys, time\nfrom memkeeper.core.store.lock import file_lock\n"
            "with file_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(0.5)\n",
            str(path),
        ],
        stdout=subprocess.PIPE,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    with lock.file_lock(path, timeout=30):
        assert holder.poll() is not None or holder.wait(timeout=30) == 0
    holder.wait(timeout=30)


def test_a_wait_that_gave_up_leaves_the_lock_free_once_the_holder_goes(tmp_path: Path) -> None:
    """The queued wait abandoned at its deadline goes on in its thread: when the lock comes to
    it, the thread lets go of it (the caller's descriptor is closed), so no one is locked out."""
    if not platform.queued_lock_wait():
        pytest.skip("no queued lock wait on this system")
    path = tmp_path / "store.lock"
    with held(path), pytest.raises(lock.LockTimeout):
        with lock.file_lock(path, timeout=0.2):
            pass
    deadline = time.monotonic() + 10
    while lock.is_locked(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not lock.is_locked(path)


# --------------------------------------------------------------------------- waits


def test_run_bounded_returns_the_value_or_gives_up_at_the_deadline() -> None:
    assert waits.run_bounded(lambda: 42, 5) == (True, 42)
    release = threading.Event()
    assert waits.run_bounded(lambda: release.wait(30), 0.05) == (False, None)
    release.set()


def test_run_bounded_raises_what_the_work_raised() -> None:
    def fail() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        waits.run_bounded(fail, 5)


@pytest.mark.parametrize(
    ("system", "environ", "expected"),
    [
        ("linux", {"XDG_RUNTIME_DIR": "/run/user/1234"}, "/run/user/1234"),
        ("darwin", {}, os.path.join("~", "Library", "Caches", "TemporaryItems")),
        ("win32", {"LOCALAPPDATA": os.path.join("C", "Users", "me", "AppData", "Local")}, None),
        ("linux", {"TMPDIR": "/var/tmp/x"}, None),
    ],
    ids=["xdg", "macos", "windows", "linux-no-xdg"],
)
def test_the_runtime_base_is_where_platformdirs_puts_it(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    system: str,
    environ: dict[str, str],
    expected: str | None,
) -> None:
    """What ``platformdirs.user_runtime_dir`` answers (its parent), without importing it on the hook path."""
    monkeypatch.setattr(sys, "platform", system)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_RUNTIME_DIR", "LOCALAPPDATA", "TMPDIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    base = platform.user_runtime_base()
    if system == "win32":
        assert base == os.path.join(environ["LOCALAPPDATA"], "Temp")
    elif expected is None:  # no XDG_RUNTIME_DIR: the user's /run/user folder when it exists, else TMPDIR
        uid = str(os.getuid())
        run = os.path.join("/run/user", uid)
        assert base == (run if os.path.isdir(run) else os.path.join("/var/tmp/x", f"runtime-{uid}"))
    else:
        assert base == expected.replace("~", str(tmp_path))


def test_free_bytes_is_what_shutil_tells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From ``os.statvfs`` without importing shutil (SessionStart asks); shutil's answer where there is none."""
    import shutil

    before = shutil.disk_usage(tmp_path).free
    free = platform.free_bytes(tmp_path)
    after = shutil.disk_usage(tmp_path).free
    assert min(before, after) - 2**20 <= free <= max(before, after) + 2**20
    monkeypatch.delattr(os, "statvfs", raising=False)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: SimpleNamespace(total=100, used=40, free=60))
    assert platform.free_bytes(tmp_path) == 60
