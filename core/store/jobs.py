"""Detached, single-flight background jobs: hooks decide, jobs do.

A hook never does heavy work itself: it calls :func:`start_job`, which spawns
``memkeeper --project P job KIND`` (started as :func:`memkeeper.core.basics.interpreter.memkeeper_command`
says) detached (a new session, or on Windows a new process group with no console) with stdio on
the null device, so it survives Claude Code killing the hook (SessionEnd allows 1.5 s).
The job takes ``.state/job-KIND.lock`` without waiting; if another instance holds it,
it appends its request (its options: why, for which session and transcript) to
``.state/job-KIND.rerun`` and exits, and the holder runs each request it finds there
before it quits, with that request's own options, so work is never dropped, never done
twice at once, and never done for the wrong session or reason. Runners are plain functions
registered in :data:`JOB_RUNNERS` as ``"module:function"`` taking (paths, options).
Set ``MEMKEEPER_NO_JOBS=1`` to run nothing in the background (tests, the jobs themselves).
"""

from __future__ import annotations

import json
import os
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from ..basics.interpreter import memkeeper_command
from .atomic import append_text
from .boundary import check_path
from .lock import try_lock
from .paths import StorePaths, ensure_store, guard

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable
    from typing import IO, Any

#: kind -> "module:function(paths, options) -> None".
JOB_RUNNERS: dict[str, str] = {
    "summary": "memkeeper.core.summaries.summary:run_summary_job",  # pending L3 summaries
    "l1": "memkeeper.core.capture.l1:run_l1_job",  # refine a transcript into its L1 copy
    "flush": "memkeeper.core.log.flush:run_flush_job",  # L1 → L2 bullets, then rotation, then L3
    "migrate": "memkeeper.core.log.migrate:run_migrate_job",  # split a far oversized memory.md
    "index": "memkeeper.core.search.indexer:run_index_job",  # keep the search index fresh
    "recall": "memkeeper.core.recall.lookup:run_recall_job",  # serve per-prompt recall while prompts come
}
#: Jobs that change what search reads: the index is refreshed after them, in the same process.
INDEX_AFTER = frozenset({"summary", "l1", "flush", "migrate"})

MAX_RERUNS = 5


def _rerun_flag(paths: StorePaths, kind: str) -> Path:
    return paths.state / f"job-{kind}.rerun"


def jobs_disabled() -> bool:
    return os.environ.get("MEMKEEPER_NO_JOBS") == "1"


#: Set in the environment of every child :func:`start_child` starts, to a value of its own:
#: its descendants inherit it, so :func:`end_tree` finds one that left the tree (a
#: grandchild in a session of its own whose parent has exited).
TREE_ENV = "MEMKEEPER_TREE"
_tree_tags: dict[int, str] = {}


def start_child(
    argv: list[str],
    *,
    stdin: int | IO[bytes] | None,
    stdout: int | IO[bytes] | None,
    stderr: int | IO[bytes] | None,
    cwd: Path | str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` (a list: no shell) detached from us (its own session or process group,
    :func:`memkeeper.core.basics.platform.detached_popen_options`), so that it outlives the hook
    that started it, inheriting no descriptors, and :func:`end_tree` can end all of it.

    The background jobs and the summarizer backends start their children here.
    """
    import subprocess  # only when a child really starts: it costs the hook path ~4 ms

    from ..basics.platform import detached_popen_options

    new_session, flags = detached_popen_options()
    tag = os.urandom(8).hex()
    env = dict(os.environ if env is None else env)
    env[TREE_ENV] = tag
    proc = subprocess.Popen(  # noqa: S603 - argv list, no shell
        argv,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env=env,
        close_fds=True,
        start_new_session=new_session,
        creationflags=flags,
    )
    _tree_tags[proc.pid] = tag
    return proc


def end_tree(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` and everything it started, then reap it: its descendants, and any
    process carrying its :data:`TREE_ENV` value (one that left the tree: a grandchild that
    called ``setsid`` and whose parent has exited). Portable through ``psutil``."""
    import psutil

    from ..basics.platform import kill

    tag = _tree_tags.pop(proc.pid, None)
    for _ in range(3):  # again, for what a dying member started meanwhile
        victims = _tree_members(proc, tag)
        if not victims:
            break
        for member in victims:
            try:
                kill(member)
            except psutil.Error:
                pass
        _wait_gone(victims, 1.0)
    if proc.poll() is None:
        kill(proc)
    proc.wait()


def _wait_gone(members: list[Any], timeout: float) -> None:
    """Wait (at most ``timeout``) until every member has ended: gone, or a zombie (whose parent,
    not us, reaps it: ``psutil.wait_procs`` would wait out the timeout for one)."""
    import time

    import psutil

    deadline = time.monotonic() + timeout
    while members and time.monotonic() < deadline:
        alive = []
        for member in members:
            try:
                if member.is_running() and member.status() != psutil.STATUS_ZOMBIE:
                    alive.append(member)
            except psutil.Error:
                continue
        members = alive
        if members:
            time.sleep(0.01)


def _tree_members(proc: subprocess.Popen[bytes], tag: str | None) -> list[Any]:
    """The live processes of ``proc``'s tree: its descendants (while it runs) and the carriers of ``tag``."""
    import psutil

    found: dict[int, psutil.Process] = {}
    if proc.poll() is None:  # (once reaped, its pid may be another process's)
        try:
            root = psutil.Process(proc.pid)
            found = {p.pid: p for p in (root, *root.children(recursive=True))}
        except psutil.Error:
            pass
    if tag is not None:
        for candidate in psutil.process_iter():
            if candidate.pid in found or candidate.pid == os.getpid():
                continue
            try:
                if candidate.environ().get(TREE_ENV) == tag and candidate.status() != psutil.STATUS_ZOMBIE:
                    found[candidate.pid] = candidate
            except psutil.Error:
                continue
    return list(found.values())


def spawn_detached(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> int:
    """Start ``argv`` fully detached (own session or process group, no stdio); returns its pid."""
    from subprocess import DEVNULL

    return start_child(argv, stdin=DEVNULL, stdout=DEVNULL, stderr=DEVNULL, cwd=cwd, env=env).pid


def start_job(paths: StorePaths, kind: str, options: dict[str, Any] | None = None) -> int | None:
    """Spawn the job ``kind`` for this store in the background; None if jobs are disabled."""
    if jobs_disabled():
        return None
    argv = memkeeper_command("--project", str(paths.project), "job", kind)
    if options:
        argv += ["--options", json.dumps(options)]
    env = dict(os.environ)
    env["MEMKEEPER_IN_JOB"] = "1"
    return spawn_detached(argv, cwd=paths.project if paths.project.is_dir() else None, env=env)


def resolve_runner(kind: str) -> Callable[[StorePaths, dict[str, Any]], None]:
    try:
        target = JOB_RUNNERS[kind]
    except KeyError:
        raise ValueError(f"unknown job kind {kind!r} (known: {', '.join(sorted(JOB_RUNNERS))})") from None
    module, _, func = target.partition(":")
    runner: Callable[[StorePaths, dict[str, Any]], None] = getattr(import_module(module), func)
    return runner


def run_job(paths: StorePaths, kind: str, options: dict[str, Any] | None = None) -> bool:
    """Run ``kind`` in this process, single-flight. False if another instance was running.

    A call that finds the job busy leaves its request (its options) in the rerun file; the
    running instance runs each request it finds there, with the request's own options (at
    most MAX_RERUNS runs in all; the rest stay for the next instance), so a request is
    never lost nor run as another one. (Rerunning with the first caller's options made a
    flush asked for mid-turn run as the earlier Stop or SessionEnd flush, for its session.)
    """
    runner = resolve_runner(kind)
    guard(paths)  # never work in a refused folder or through a link in the store
    ensure_store(paths)
    flag = _rerun_flag(paths, kind)
    with try_lock(paths.state / f"job-{kind}.lock") as acquired:
        if not acquired:
            _request_rerun(flag, options or {})
            return False
        _run_requests(paths, kind, runner, options or {})
    if kind in INDEX_AFTER:
        run_job(paths, "index", {"if_worth": True})
    return True


def _run_requests(
    paths: StorePaths, kind: str, runner: Callable[[StorePaths, dict[str, Any]], None], first: dict[str, Any]
) -> None:
    """Run ``first``, then every request found in the rerun file meanwhile (each once, in order)."""
    flag = _rerun_flag(paths, kind)
    queue = [first]
    _queue(queue, _take_requests(flag, first))  # left by an instance that quit as they came
    runs = 0
    while queue and runs < MAX_RERUNS:
        current = queue.pop(0)
        try:
            runner(paths, current)
        except Exception as exc:  # a job never raises into a hook; it logs
            log_error(paths, f"job {kind}: {type(exc).__name__}: {exc}")
        runs += 1
        _queue(queue, _take_requests(flag, current))
    for left in queue:  # past MAX_RERUNS: the next instance runs them
        _request_rerun(flag, left)


def _queue(queue: list[dict[str, Any]], requests: list[dict[str, Any]]) -> None:
    queue.extend(r for i, r in enumerate(requests) if r not in queue and r not in requests[:i])


#: The longest a request waits for the rerun file's lock (held only for an append or a rename).
REQUEST_LOCK_WAIT = 1.0


def _request_lock(flag: Path) -> Any:
    from .lock import file_lock

    return file_lock(flag.with_name(flag.name + ".lock"), timeout=REQUEST_LOCK_WAIT)


def _request_rerun(flag: Path, options: dict[str, Any]) -> None:
    """Append one request (its options, one JSON line), under the file's lock: the holder renames
    the file under it too, so no request is written into a file already taken and read."""
    from .lock import LockTimeout

    line = json.dumps(options, sort_keys=True, separators=(",", ":")) + "\n"
    try:
        with _request_lock(flag):
            append_text(flag, line)
    except LockTimeout:  # never lose the request: an unlocked append is still one whole line
        append_text(flag, line)


def _take_requests(flag: Path, current: dict[str, Any]) -> list[dict[str, Any]]:
    """The requests in the rerun file, which is taken away (renamed first: a request appended
    meanwhile starts a new file). An empty file (an older version's flag) asks for ``current``
    again; a damaged line asks for a run with no options."""
    from .lock import LockTimeout

    taken = flag.with_name(f".{flag.name}.{os.getpid()}.tmp")
    try:
        with _request_lock(flag):
            os.replace(flag, taken)
    except (FileNotFoundError, LockTimeout):
        return []  # none, or a request being written: taken at the next look
    try:
        raw = taken.read_text("utf-8", errors="replace")
    finally:
        taken.unlink(missing_ok=True)
    requests: list[dict[str, Any]] = []
    for line in raw.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            value = {}
        requests.append(value if isinstance(value, dict) else {})
    return requests or [current]


LOG_MAX_BYTES = 256 * 1024


def log_error(paths: StorePaths, message: str) -> None:
    """One line in ``logs/memkeeper.log``, which is kept under 256 KB (halved when full)."""
    log_line(paths.logs, message)


def log_line(logs: str | Path, message: str) -> None:
    """One line in ``memkeeper.log`` of the store's ``logs`` folder (never raises for I/O)."""
    from ..basics.timestamps import iso_now

    try:
        logs = Path(logs)
        log = logs / "memkeeper.log"
        check_path(log)  # a link in the store: nowhere safe to log
        logs.mkdir(mode=0o700, parents=True, exist_ok=True)
        line = f"{iso_now()} {message}".replace("\n", " ")[:2000] + "\n"
        try:
            if log.stat().st_size > LOG_MAX_BYTES:
                keep = log.read_bytes()[-LOG_MAX_BYTES // 2 :]
                keep = keep[keep.find(b"\n") + 1 :]
                from .atomic import atomic_write_bytes

                atomic_write_bytes(log, keep)
        except FileNotFoundError:
            pass
        append_text(log, line)
    except OSError:
        pass
