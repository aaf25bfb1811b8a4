"""``memkeeper hook EVENT``: what each Claude Code hook does, fast, and never failing the session.

Hooks decide, jobs do. Every handler reads the hook's JSON from stdin (with a short
timeout), finds the project from its ``cwd``, does a few small locked writes at most,
and hands anything heavy to a detached single-flight job:

- ``SessionStart``: prepare the store, print the memory as ``additionalContext``
  (:func:`memkeeper.core.session_context.build_context`), start any due work.
- ``UserPromptSubmit`` / ``PostToolUse`` (and ``PostToolUseFailure``): count a message /
  a tool use for the session (exact under parallel hooks), rotate memory.md when due,
  start the ``flush`` job when ``flushEvery`` events are unflushed. Synthetic ``<task-notification>`` prompts are not
  counted. Nothing is printed: no rules text, and CLAUDE.md / Claude Code's own
  MEMORY.md are never written.
- ``Stop`` (after every turn): only starts a flush that is already due.
- ``PreCompact``: flush now, before the context is lost.
- ``SessionEnd`` (Claude Code kills it after 1.5 s): start the detached L1 + flush work.

Any internal error ends in exit 0 and one line in the store's bounded log. This module
imports only the standard library and the lean core modules; heavier modules load only
when a handler needs them (check with ``python -X importtime``).
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from pathlib import Path

from memkeeper.core.store import StorePaths

TYPE_CHECKING = False  # typing is not imported at run time: this runs on every tool call
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Handler = Callable[[StorePaths, dict[str, Any]], None]

STDIN_TIMEOUT = 3.0
#: The longest a hook waits for the store lock before leaving a rotation to the next event.
HOOK_LOCK_TIMEOUT = 1.0
MAX_STDIN_BYTES = 64 * 1024 * 1024
#: Payloads bigger than this (large tool outputs) are not fully parsed: the few top-level
#: fields a hook needs come first in Claude Code's JSON and are read from the front.
FULL_PARSE_BYTES = 256 * 1024
TASK_NOTIFICATION = "<task-notification>"
#: The store folders whose entries a hook checks for links (besides the root's own);
#: jobs, the CLI and the TUI check the whole store.
HOOK_FOLDERS = {"SessionStart": (".state", "logs", "sessions")}
#: Set in every job's environment (and so in a `claude -p` a job runs): hooks do nothing.
CHILD_ENV = "MEMKEEPER_IN_JOB"

# --- input --------------------------------------------------------------------------


def read_stdin(timeout: float = STDIN_TIMEOUT) -> bytes:
    """All of stdin until EOF, or what arrived within ``timeout`` seconds."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return b""
    if os.isatty(fd):
        return b""
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + timeout
    while size < MAX_STDIN_BYTES:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], remaining)
        except (OSError, ValueError):
            break
        if not ready:
            break
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
        size += len(data)
    return b"".join(chunks)


def _field_from_front(text: str, key: str) -> Any:
    """The value of the first ``"key":`` in ``text``, decoded on its own."""
    marker = f'"{key}"'
    start = text.find(marker)
    if start < 0:
        return None
    colon = text.find(":", start + len(marker))
    if colon < 0:
        return None
    start = colon + 1
    while start < len(text) and text[start] in " \t\r\n":
        start += 1
    try:
        value, _end = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None
    return value


def parse_payload(raw: bytes) -> dict[str, Any]:
    """The hook's JSON object ({} when absent or unusable)."""
    if not raw.strip():
        return {}
    text = raw.decode("utf-8", "replace")
    if len(raw) <= FULL_PARSE_BYTES:
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return data
    # Too big (or broken): read the top-level fields the hooks use from the front.
    found: dict[str, Any] = {}
    head = text[:FULL_PARSE_BYTES]
    for key in (
        "session_id",
        "transcript_path",
        "cwd",
        "hook_event_name",
        "source",
        "prompt",
        "reason",
        "trigger",
    ):
        value = _field_from_front(head, key)
        if isinstance(value, str):
            found[key] = value
    return found


def _inside(child: str, parent: str) -> bool:
    child, parent = os.path.normpath(child), os.path.normpath(parent)
    return child != parent and child.startswith(parent.rstrip(os.sep) + os.sep)


def project_dir(payload: dict[str, Any], environ: dict[str, str] | None = None) -> Path:
    """The project of this hook call: the stdin ``cwd``, then CLAUDE_PROJECT_DIR, then the cwd.

    ``cwd`` follows ``cd`` (and worktrees). A ``cd`` into a subfolder of the project the
    session started in keeps the project's store, unless that subfolder has a store of
    its own; a worktree elsewhere gets its own.
    """
    env = os.environ if environ is None else environ
    cwd = payload.get("cwd")
    started = env.get("CLAUDE_PROJECT_DIR") or ""
    if isinstance(cwd, str) and os.path.isabs(cwd):
        if started and os.path.isabs(started) and _inside(cwd, started):
            if not os.path.isdir(os.path.join(cwd, ".claude", "memory")):
                return Path(started)
        return Path(cwd)
    if started:
        return Path(started).expanduser().absolute()
    return Path.cwd()


def _session(payload: dict[str, Any]) -> str | None:
    sid = payload.get("session_id")
    return sid if isinstance(sid, str) and sid else None


def job_options(payload: dict[str, Any], reason: str) -> dict[str, Any]:
    options: dict[str, Any] = {"reason": reason}
    sid = _session(payload)
    if sid:
        options["session_id"] = sid
    transcript = payload.get("transcript_path")
    if isinstance(transcript, str) and transcript:
        options["transcript_path"] = transcript
    return options


# --- shared steps -------------------------------------------------------------------


def _start(paths: StorePaths, kind: str, options: dict[str, Any] | None = None) -> None:
    from memkeeper.core.jobs import start_job

    start_job(paths, kind, options)


def _start_flush(paths: StorePaths, payload: dict[str, Any], reason: str) -> None:
    from memkeeper.core import counters

    # Zero the count first, so the next events do not spawn the job again meanwhile.
    counters.mark_flushed(paths, _session(payload))
    _start(paths, "flush", job_options(payload, reason))


def _rotate_if_due(paths: StorePaths, threshold: int, carryover: int) -> None:
    from memkeeper.core.tokens import tokens_for_bytes

    try:
        size = os.stat(paths.memory).st_size
    except OSError:
        return
    if tokens_for_bytes(size) < threshold:
        return
    from memkeeper.core.lock import LockTimeout, is_locked

    if is_locked(paths.lock):
        return  # a flush or rotation holds the store; it checks rotation itself
    from memkeeper.core import rotation

    try:
        result = rotation.rotate(paths, threshold, carryover, lock_timeout=HOOK_LOCK_TIMEOUT)
    except LockTimeout:
        return  # taken just now by another process: the next event rotates
    if result is not None:
        _start(paths, "summary")


def _after_count(paths: StorePaths, payload: dict[str, Any], unflushed: int) -> None:
    from memkeeper.core.settings import hook_settings

    settings = hook_settings(paths)
    if settings.rotation_enabled:
        _rotate_if_due(paths, settings.threshold_tokens, settings.carryover_tokens)
    if settings.memory_enabled and unflushed >= settings.flush_every:
        _start_flush(paths, payload, "count")


# --- handlers -----------------------------------------------------------------------


def on_session_start(paths: StorePaths, payload: dict[str, Any]) -> None:
    from memkeeper.core import live_sessions
    from memkeeper.core.session_context import build_context
    from memkeeper.core.store import ensure_store

    ensure_store(paths)
    sid = _session(payload)
    source = payload.get("source") if isinstance(payload.get("source"), str) else "startup"
    transcript = payload.get("transcript_path")
    transcript = transcript if isinstance(transcript, str) and transcript else None
    text = ""
    try:
        text = build_context(paths, str(source), session_id=sid, transcript_path=transcript)
    finally:
        if text:
            out = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
    # Earlier sessions that never reached SessionEnd (killed) still have work to flush.
    stale = live_sessions.unfinished_sessions(paths, exclude=sid)
    if sid:
        live_sessions.note_session(paths, sid, transcript)
    if stale and source in ("startup", "clear"):
        _start(paths, "flush", job_options(payload, "stale-sessions"))


def on_prompt(paths: StorePaths, payload: dict[str, Any]) -> None:
    prompt = payload.get("prompt")
    if isinstance(prompt, str) and prompt.lstrip().startswith(TASK_NOTIFICATION):
        return
    from memkeeper.core import counters

    counts = counters.bump(paths, _session(payload), messages=1)
    _after_count(paths, payload, counts.unflushed_messages)


def on_tool_use(paths: StorePaths, payload: dict[str, Any]) -> None:
    from memkeeper.core import counters

    counts = counters.bump(paths, _session(payload), tool_uses=1)
    _after_count(paths, payload, counts.unflushed_messages)


def on_stop(paths: StorePaths, payload: dict[str, Any]) -> None:
    if not paths.root.is_dir():
        return
    from memkeeper.core import counters
    from memkeeper.core.settings import hook_settings

    entry = counters.read_counters(paths).get("sessions", {}).get(_session(payload) or "unknown")
    unflushed = int(entry.get("unflushed") or 0) if isinstance(entry, dict) else 0
    settings = hook_settings(paths)
    if settings.memory_enabled and unflushed >= settings.flush_every:
        _start_flush(paths, payload, "stop")


def on_pre_compact(paths: StorePaths, payload: dict[str, Any]) -> None:
    from memkeeper.core import live_sessions

    sid = _session(payload)
    transcript = payload.get("transcript_path")
    if sid:
        live_sessions.note_session(paths, sid, transcript if isinstance(transcript, str) else None)
    _start_flush(paths, payload, "precompact")


def on_session_end(paths: StorePaths, payload: dict[str, Any]) -> None:
    from memkeeper.core import live_sessions
    from memkeeper.core.store import ensure_store

    ensure_store(paths)
    sid = _session(payload)
    transcript = payload.get("transcript_path")
    if sid:
        live_sessions.note_session(
            paths, sid, transcript if isinstance(transcript, str) else None, ended=True
        )
    options = job_options(payload, "session-end")
    # Two detached processes, so the L1 copy does not wait behind a running flush; the
    # flush refines the same transcript first anyway (refining is idempotent).
    _start(paths, "l1", options)
    _start(paths, "flush", options)


HANDLERS: dict[str, Handler] = {
    "SessionStart": on_session_start,
    "UserPromptSubmit": on_prompt,
    "PostToolUse": on_tool_use,
    "PostToolUseFailure": on_tool_use,  # a failed tool call is work done all the same
    "Stop": on_stop,
    "PreCompact": on_pre_compact,
    "SessionEnd": on_session_end,
}


def main(argv: list[str]) -> int:
    """Run the hook ``argv[0]``; always returns 0 (errors go to the store's log)."""
    event = argv[0] if argv else ""
    handler = HANDLERS.get(event)
    if handler is None or os.environ.get(CHILD_ENV) == "1":
        return 0
    paths: StorePaths | None = None
    try:
        payload = parse_payload(read_stdin())
        project = project_dir(payload)
        if not project.is_dir():
            return 0  # a folder removed under a running session: never recreate it
        from memkeeper.core.boundary import refused_project

        if refused_project(project):
            return 0  # /, $HOME, ~/.claude/...: no store there, and nothing logged
        paths = StorePaths(project)
        from memkeeper.core.store import guard

        guard(paths, HOOK_FOLDERS.get(event, (".state", "logs")))
        handler(paths, payload)
    except Exception as exc:  # never fail the session: one line in the log, exit 0
        _log(paths, f"hook {event}: {type(exc).__name__}: {exc}")
    return 0


def _log(paths: StorePaths | None, message: str) -> None:
    if paths is None:
        return
    try:
        from memkeeper.core.jobs import log_error

        if paths.root.is_dir():
            log_error(paths, message)
    except Exception:  # the log itself failed: there is nowhere left to report
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
