"""``memkeeper hook EVENT``: what each Claude Code hook does, fast, and never failing the session.

Hooks decide, jobs do. Every handler reads the hook's JSON from stdin (with a short
timeout), finds the project from its ``cwd``, does a few small locked writes at most,
and hands anything heavy to a detached single-flight job:

- ``SessionStart``: prepare the store, print the memory as ``additionalContext``
  (:func:`memkeeper.core.context.session_start.build_context`), start any due work.
- ``UserPromptSubmit`` / ``PostToolUse`` (and ``PostToolUseFailure``): count a message /
  a tool use for the session (exact under parallel hooks), rotate memory.md when due,
  start the ``flush`` job when ``flushEvery`` events are unflushed. Synthetic ``<task-notification>`` prompts are not
  counted. A typed prompt may get earlier memory that answers it as ``additionalContext``
  (:mod:`memkeeper.core.recall.lookup`, read-only, never waiting long; the hook counts the prompt
  itself, exactly once); nothing else is printed: no
  rules text, and CLAUDE.md / Claude Code's own MEMORY.md are never written.
- ``Stop`` (after every turn): only starts a flush that is already due.
- ``PreCompact``: flush now, before the context is lost.
- ``SessionEnd`` (Claude Code kills it after 1.5 s): start the detached L1 + flush work.

Any internal error ends in exit 0 and one line in the store's bounded log.

What a hook may cost is a budget measured through the launcher Claude Code runs, against a
fresh venv's ``python -I -c pass`` (``bench/bench_hooks.py``; docs/hook-path.md): PostToolUse
2x, a prompt answered by recall 2.5x, SessionStart 5x. The counting hooks (a tool use, a
prompt, a turn's end) keep to it with the standard library as it is: the store's folders as
strings (pathlib, :attr:`Call.paths`, and the heavier modules load only when a handler needs
them; check with ``python -X importtime``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from ..core import config, recall, store
from ..core.store.layout import (
    CONFIG_FILE,
    INDEX_FILE,
    MEMORY_FILE,
    SESSIONS_DIR,
    project_dir,
    store_root,
)

# No ``typing`` here (docs/hook-path.md): a JSON value is ``object``, and the classes of modules
# loaded only when a handler needs them are named through their packages
# (``store.paths.StorePaths``), which mypy resolves and nothing evaluates at run time.

STDIN_TIMEOUT = 3.0
#: The longest a hook waits for the store lock before leaving a rotation to the next event.
HOOK_LOCK_TIMEOUT = 1.0
MAX_STDIN_BYTES = 64 * 1024 * 1024
#: Payloads bigger than this (large tool outputs) are not fully parsed: the few top-level
#: fields a hook needs come first in Claude Code's JSON and are read from the front.
FULL_PARSE_BYTES = 256 * 1024
#: The store folders whose entries a hook checks for links: a hook writes only there.
#: The root's own entries grow with the archives (4,000 in a 1 GB store), so a hook does not
#: list them: SessionStart, Stop, PreCompact and SessionEnd look at the few it uses by name
#: (:data:`HOOK_ROOT_NAMES`, one lstat each), and a count (a tool use, a prompt), which writes
#: only in .state until it folds the counters' log, looks at them when it folds. Every file a
#: hook reads beyond those (the named notes, the newest summary, L1 files) is opened refusing a
#: link (``open_no_follow``), and the work that reads the rest of the root looks at all its
#: entries first: a prompt that reads the index itself (no resident lookup answered), taking in
#: a pull, finishing an interrupted operation, a rotation. A prompt answered by a resident
#: lookup costs the same at any store size. Jobs, the CLI and the TUI check the whole store.
HOOK_FOLDERS = (".state", "logs")
#: The root's entries the hooks use by name, besides :data:`HOOK_FOLDERS`: memory.md (its size;
#: its tail at SessionStart), the index and the config (read), sessions/ (its newest L1 files,
#: listed when the saved names are stale), and the git files a shared store's look-in stats.
HOOK_ROOT_NAMES = (MEMORY_FILE, INDEX_FILE, CONFIG_FILE, SESSIONS_DIR, ".gitattributes", ".gitignore")
#: Set in every job's environment (and so in a `claude -p` a job runs): hooks do nothing.
CHILD_ENV = "MEMKEEPER_IN_JOB"

# --- input --------------------------------------------------------------------------


def read_stdin(timeout: float = STDIN_TIMEOUT) -> bytes:
    """All of stdin until EOF, or what arrived within ``timeout`` seconds.

    What is there already (Claude Code writes the payload and closes stdin at once) is read
    without waiting (:func:`memkeeper.core.basics.platform.read_now`); the rest, if the writer is not
    done, in a thread bounded by :func:`memkeeper.core.basics.waits.run_bounded` (no signal, no
    ``select``: the same on every system and in any thread), on its own duplicate of stdin's
    descriptor, which it closes when it ends; past the deadline the hook goes on with what came.
    """
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return b""
    if os.isatty(fd):
        return b""
    from ..core.basics.platform import read_now

    chunks: list[bytes] = []
    ready = read_now(fd, MAX_STDIN_BYTES)
    if ready is not None:
        chunks, ended = ready
        if ended:
            return b"".join(chunks)
    from ..core.basics.waits import run_bounded

    own = os.dup(fd)

    def read() -> None:
        try:
            _read_into(own, chunks)
        finally:
            os.close(own)

    run_bounded(read, timeout)
    return b"".join(list(chunks))  # (a copy: past the deadline the thread may still append)


def _read_into(fd: int, chunks: list[bytes]) -> None:
    """Read ``fd`` into ``chunks`` until EOF, :data:`MAX_STDIN_BYTES` in all or an error."""
    size = sum(map(len, chunks))
    while size < MAX_STDIN_BYTES:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            return
        if not data:
            return
        chunks.append(data)
        size += len(data)


def _field_from_front(text: str, key: str) -> object:
    """The value of the first ``"key":`` in ``text``, decoded on its own."""
    marker = f'"{key}"'
    start = text.find(marker)
    if start < 0:
        return None
    colon = text.find(":", start + len(marker))
    if colon < 0:
        return None
    from ..core.basics import fastjson

    try:
        return fastjson.raw_decode(text, colon + 1)[0]
    except ValueError:
        return None


#: The top-level fields the hooks use, read from the front of a payload too big to parse.
FRONT_FIELDS = (
    "session_id",
    "transcript_path",
    "cwd",
    "hook_event_name",
    "source",
    "prompt",
    "reason",
    "trigger",
)


def parse_payload(raw: bytes) -> dict[str, object]:
    """The hook's JSON object ({} when absent or unusable)."""
    if not raw.strip():
        return {}
    text = raw.decode("utf-8", "replace")
    if len(raw) <= FULL_PARSE_BYTES:
        from ..core.basics import fastjson

        try:
            data = fastjson.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return data
    # Too big (or broken): read the top-level fields the hooks use from the front.
    head = text[:FULL_PARSE_BYTES]
    found = {key: _field_from_front(head, key) for key in FRONT_FIELDS}
    return {key: value for key, value in found.items() if isinstance(value, str)}


def _text(payload: dict[str, object], key: str) -> str | None:
    """A non-empty string field of the payload, else None."""
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


class Call:
    """One hook call: its payload and project; the store as strings, :class:`StorePaths` on demand.

    The counting handlers (a tool use, a prompt, a turn's end) use only :attr:`project` and
    :attr:`root`; :attr:`paths` imports pathlib and the store module the first time a
    handler asks for it.
    """

    __slots__ = ("_paths", "asked", "payload", "pending", "project", "root", "settings", "tried")

    def __init__(self, payload: dict[str, object], project: str) -> None:
        self.payload = payload
        self.project = project
        self.root = store_root(project)
        self._paths: store.paths.StorePaths | None = None
        self.settings: config.reader.HookSettings | None = None  # the store's hook settings, once read
        self.asked = False  # its prompt's recall question is out (or there was none to ask)
        self.pending: recall.ask.Pending | None = None  # its question to a resident lookup, if one took it
        self.tried: recall.ask.PayloadAsked | None = None  # its payload put to one (prompt_by_resident)

    @property
    def paths(self) -> store.paths.StorePaths:
        if self._paths is None:
            from pathlib import Path

            from ..core.store.paths import StorePaths

            self._paths = StorePaths(Path(self.project))
        return self._paths

    @property
    def session_id(self) -> str | None:
        return _text(self.payload, "session_id")

    @property
    def transcript_path(self) -> str | None:
        return _text(self.payload, "transcript_path")

    def job_options(self, reason: str) -> dict[str, object]:
        """The options of a job started by this call: why, and for which session/transcript."""
        options: dict[str, object] = {"reason": reason}
        if self.session_id:
            options["session_id"] = self.session_id
        if self.transcript_path:
            options["transcript_path"] = self.transcript_path
        return options


# --- shared steps -------------------------------------------------------------------


def _start(call: Call, kind: str, reason: str | None = None) -> None:
    from ..core.store.jobs import start_job

    start_job(call.paths, kind, call.job_options(reason) if reason else None)


def _start_flush(call: Call, reason: str, settings: config.reader.HookSettings | None = None) -> None:
    from ..core.log.activity import start_flush

    start_flush(call.paths, call.session_id, call.job_options(reason), settings)


def _count(
    call: Call,
    *,
    tool_uses: int = 0,
    messages: int = 0,
    settings: config.reader.HookSettings | None = None,
    guard: Callable[[], None] | None = None,
) -> None:
    """Count the event, rotate if due (:mod:`memkeeper.core.log.activity`), start a flush if due."""
    from ..core.log.activity import record

    done = record(
        call.project,
        call.session_id,
        tool_uses=tool_uses,
        messages=messages,
        lock_timeout=HOOK_LOCK_TIMEOUT,
        settings=settings,
        guard=guard,
    )
    if done.flush_due:
        _start_flush(call, "count", done.settings)


# --- handlers -----------------------------------------------------------------------


def on_session_start(call: Call) -> None:
    from ..core.capture import live_sessions
    from ..core.store.paths import ensure_store

    ensure_store(call.paths)
    _take_in_pulled(call)
    source = _text(call.payload, "source") or "startup"
    text = _print_context(call, source)
    # Earlier sessions that never reached SessionEnd (killed) still have work to flush.
    stale = live_sessions.unfinished_sessions(call.paths, exclude=call.session_id)
    if call.session_id:
        live_sessions.note_session(call.paths, call.session_id, call.transcript_path)
        from ..core.recall.lookup import note_session_start

        note_session_start(call.paths, call.session_id, text)  # per-prompt recall leaves out what it holds
    if stale and source in ("startup", "clear"):
        _start(call, "flush", "stale-sessions")
    from ..core.log.counters import tidy_at

    tidy_at(os.fspath(call.paths.state))  # the closed count logs a burst of folds left


def _take_in_pulled(call: Call) -> None:
    """A shared store: what a pull brought is taken in (core/log/pulled.py); missing summaries are made."""
    from ..core.sharing.marks import is_shared

    if not is_shared(call.paths):
        return
    from ..core.log.pulled import take_in
    from ..core.store.lock import LockTimeout

    try:  # (a look-in that has work reads the whole root: it looks at the root's entries first)
        found = take_in(call.paths, timeout=HOOK_LOCK_TIMEOUT, guard=lambda: _refuse_root_links(call))
        pending = found.get("pending")
    except LockTimeout:
        return  # the store is busy: the next hook or command takes it in
    if pending:
        _start(call, "summary", "pulled")


def _print_context(call: Call, source: str) -> str:
    """Print the memory as SessionStart's ``additionalContext`` (whatever of it was built); return it."""
    import json

    from ..core.context.session_start import build_context

    text = ""
    try:
        text = build_context(
            call.paths, source, session_id=call.session_id, transcript_path=call.transcript_path
        )
    finally:
        if text:
            out = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
    return text


def ask_recall(call: Call) -> None:
    """Put a typed prompt to per-prompt recall, as early as the hook can (run by :func:`main` first).

    The question goes out to a resident lookup (on a thread of its own) before the rest of the
    hook's work, so the lookup runs meanwhile; the server reads the config
    (:mod:`memkeeper.core.recall.ask`). :func:`on_prompt` reads the answer. This is the usual way,
    after :func:`prompt_by_resident` (``call.tried``) did not answer: a payload that went out is
    never asked again, and one that could not go out is looked up here.
    """
    from ..core.recall.ask import TASK_NOTIFICATION, ask, not_sent

    call.asked = True
    prompt = call.payload.get("prompt")
    if not isinstance(prompt, str) or prompt.lstrip().startswith(TASK_NOTIFICATION):
        return
    tried = call.tried
    if tried is not None:  # its payload was put to this store's resident lookup (prompt_by_resident)
        if not tried.sent:  # (nothing went out: looked up here, a refusal logged once)
            call.pending = not_sent(call.project, call.session_id, prompt, tried)
        return
    call.pending = ask(call.project, call.session_id, prompt)


def on_prompt(call: Call) -> None:
    from ..core.recall.ask import TASK_NOTIFICATION

    prompt = call.payload.get("prompt")
    if isinstance(prompt, str) and prompt.lstrip().startswith(TASK_NOTIFICATION):
        return
    if not call.asked:  # main ran ask_recall first; a direct call has not
        ask_recall(call)
    # Counted by the hook alone: once, whatever becomes of the question.
    _count(call, messages=1, settings=call.settings, guard=lambda: _refuse_named_links(call))
    pending, text = call.pending, ""
    if pending is not None:
        from ..core.recall.ask import answer

        text = answer(pending, lambda: _answer_here(call, pending), lambda line: _log(call, line))
    if text:
        from ..core.recall.ask import hook_output

        sys.stdout.buffer.write(hook_output(text))
        sys.stdout.flush()


def prompt_by_resident(call: Call, raw: bytes) -> bool:
    """A prompt answered without parsing its payload (:func:`memkeeper.core.recall.ask.ask_with_payload`):
    the resident lookup of ``call``'s store reads it, says which session to count, and gives what
    to print. True when done; False to go the usual way, with ``call.tried`` saying what became of
    the payload (:func:`ask_recall`).

    ``call``: the project found without the payload (``CLAUDE_PROJECT_DIR``, else the hook's folder),
    its store adopted and checked for links; ``json`` is never imported here.
    """
    from ..core.recall.ask import ask_with_payload

    call.tried = asked = ask_with_payload(call.project, raw, os.environ.get("CLAUDE_PROJECT_DIR", ""))
    if asked is None or asked.verdict is None:
        return False
    call.asked = True
    session_id, transcript, counted = asked.verdict
    call.payload = {"session_id": session_id, "transcript_path": transcript}
    _finish_interrupted(call)
    if counted:  # counted by the hook alone, as on_prompt does
        _count(call, messages=1, guard=lambda: _refuse_named_links(call))
    out = asked.output()
    if out:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
    return True


def _answer_here(call: Call, pending: recall.ask.Pending) -> str:
    """No resident lookup answered: look up in this process (if recall is on), then start the
    ``recall`` job for the next prompts."""
    _refuse_root_links(call)  # it reads the config and the index in the root
    from ..core.config.reader import hook_settings_at

    call.settings = settings = hook_settings_at(os.path.join(call.root, CONFIG_FILE))
    if not settings.recall_enabled:
        return ""
    from ..core.recall.lookup import lookup_here

    low = pending.min_confidence
    low = settings.recall_min_confidence if low is None else low
    text = lookup_here(call.project, pending.session_id, pending.prompt, low)
    _start_recall(call)
    return text


def _start_recall(call: Call) -> None:
    """No resident lookup answered: start the ``recall`` job, unless one is starting or serving."""
    from ..core.recall.lookup import RECALL_JOB
    from ..core.store.lock import is_locked

    if not is_locked(call.paths.state / f"job-{RECALL_JOB}.lock"):
        _start(call, RECALL_JOB)


def _refuse_root_links(call: Call) -> None:
    """main checked .state, logs and at most the root entries a hook uses: all the root's
    entries too, before work that reads or writes any of them."""
    from ..core.store.boundary import refuse_links

    refuse_links(call.root, HOOK_FOLDERS)


def _refuse_named_links(call: Call) -> None:
    """main checked .state and logs only: the root entries a hook uses by name too (a count's
    fold reads the config and the size of memory.md; a rotation it starts checks the rest)."""
    from ..core.store.boundary import refuse_links

    refuse_links(call.root, HOOK_FOLDERS, only=HOOK_ROOT_NAMES)


def on_tool_use(call: Call) -> None:
    _count(call, tool_uses=1, guard=lambda: _refuse_named_links(call))  # a fold checks what it reads first


def on_stop(call: Call) -> None:
    if not os.path.isdir(call.root):
        return
    from ..core.config.reader import hook_settings_at
    from ..core.log import counters
    from ..core.store.layout import STATE_DIR

    unflushed = counters.unflushed_at(os.path.join(call.root, STATE_DIR), call.session_id)
    settings = hook_settings_at(os.path.join(call.root, CONFIG_FILE))
    if settings.memory_enabled and unflushed >= settings.flush_every:
        _start_flush(call, "stop", settings)


def on_pre_compact(call: Call) -> None:
    from ..core.capture import live_sessions

    if call.session_id:
        live_sessions.note_session(call.paths, call.session_id, call.transcript_path)
    _start_flush(call, "precompact")


def on_session_end(call: Call) -> None:
    from ..core.capture import live_sessions
    from ..core.store.paths import ensure_store

    ensure_store(call.paths)
    if call.session_id:
        live_sessions.note_session(call.paths, call.session_id, call.transcript_path, ended=True)
        from ..core.recall.lookup import note_session_end

        note_session_end(call.paths, call.session_id)  # its per-prompt recall state
    # Two detached processes, so the L1 copy does not wait behind a running flush; the
    # flush refines the same transcript first anyway (refining is idempotent).
    _start(call, "l1", "session-end")
    _start(call, "flush", "session-end")


#: Steps run before interrupted work is finished and the handler runs: a prompt's recall
#: question goes out first, so a resident lookup answers it while the hook does the rest.
FIRST: dict[str, Callable[[Call], None]] = {"UserPromptSubmit": ask_recall}

HANDLERS: dict[str, Callable[[Call], None]] = {
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
    call: Call | None = None
    try:
        raw = read_stdin()
        guessed = _guessed(handler)
        if guessed is not None:  # first without parsing the payload: a resident lookup may read it
            call = guessed
            if prompt_by_resident(guessed, raw):
                return 0
        payload = parse_payload(raw)
        project = project_dir(hook_cwd=_text(payload, "cwd"))
        if guessed is not None and guessed.project == project:
            call = guessed  # (checked above; asked, if the payload went out unanswered)
            call.payload = payload
        else:
            call = _open(project, payload)
            if call is None:
                return 0
            tried = guessed.tried if guessed is not None else None
            call.asked = tried is not None and tried.sent  # (unanswered: counted, never asked again)
            _checked(call, handler)
        first = FIRST.get(event)
        if first is not None and not call.asked:
            first(call)
        _finish_interrupted(call)
        handler(call)
    except Exception as exc:  # never fail the session: one line in the log, exit 0
        _log(call, f"hook {event}: {type(exc).__name__}: {exc}")
    return 0


def _guessed(handler: Callable[[Call], None]) -> Call | None:
    """A prompt's call on the project found without the payload (``CLAUDE_PROJECT_DIR``, else the
    hook's folder: the payload's ``cwd`` names the same in a session that has not changed folder),
    checked as :func:`main` checks a call; None for other events, or when that store is not to be used
    (the usual way, on the payload's project, then says why)."""
    if handler is not on_prompt:
        return None
    try:
        call = _open(project_dir(), {})
        if call is not None:
            _checked(call, handler)
    except Exception:  # (a folder removed under the hook, a link: not this way)
        return None
    return call


def _open(project: str, payload: dict[str, object]) -> Call | None:
    """The call on ``project``; None when there is no store to keep there."""
    if not os.path.isdir(project):
        return None  # a folder removed under a running session: never recreate it
    from ..core.store.boundary import refused_project

    if refused_project(project):
        return None  # /, $HOME, ~/.claude/...: no store there, and nothing logged
    return Call(payload, project)


def _checked(call: Call, handler: Callable[[Call], None]) -> None:
    """``call``'s store adopted and checked for links (StoreLinkError, logged by :func:`main`)."""
    from ..core.store.boundary import refuse_links
    from ..core.store.state_stamp import adopt

    adopt(call.root)  # runtime state made elsewhere (a clone's .state, index): set aside first
    # A count writes only in .state until it folds the counters' log: the root's entries
    # are looked at then, or when a prompt reads the root; the other hooks look at the
    # few they use (see HOOK_FOLDERS).
    counting = handler in (on_tool_use, on_prompt)
    refuse_links(call.root, HOOK_FOLDERS, only=() if counting else HOOK_ROOT_NAMES)


def run(argv: list[str]) -> None:
    """The launcher's entry point: :func:`main`, its output flushed, then exit 0 at once.

    ``os._exit`` skips the interpreter's teardown (about 1.5 ms, an eighth of a counting
    hook): every file the hook wrote is closed by then, and a job it started is its own
    process. Whatever happens, even an error :func:`main` does not catch, the exit is 0.
    """
    try:
        main(argv)
        sys.stdout.flush()
    finally:
        os._exit(0)


def _finish_interrupted(call: Call) -> None:
    """Complete a rotation, migration or restore a kill interrupted (one stat per kind if none)."""
    from ..core.store.layout import pending_intents

    if pending_intents(call.root):
        from ..core.store import intents
        from ..core.store.lock import LockTimeout

        _refuse_root_links(call)  # finishing reads and writes archives, memory.md, the index
        try:
            intents.recover_pending(call.paths, timeout=HOOK_LOCK_TIMEOUT)
        except LockTimeout:
            pass  # the operation is still running, or the next event finishes it


def _log(call: Call | None, message: str) -> None:
    if call is None:
        return
    try:
        from ..core.store.jobs import log_error

        if os.path.isdir(call.root):
            log_error(call.paths, message)
    except Exception:  # the log itself failed: there is nowhere left to report
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
