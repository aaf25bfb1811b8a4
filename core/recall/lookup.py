"""Per-prompt recall: earlier memory that answers the prompt just typed, as hook context.

On each typed prompt the ``UserPromptSubmit`` hook asks for it (:mod:`memkeeper.core.recall.ask`,
then :func:`lookup_here` when no resident lookup answers; :func:`recall_context` does both
in one call). It looks the prompt up in the search index as it stands — opened read-only,
never refreshed, with a busy timeout of :data:`BUSY_TIMEOUT` — and returns at most :data:`MAX_HITS` hits
at or above the configured confidence, in at most :data:`MAX_CHARS` characters with
their ids for the ``show`` tool; "" when nothing earlier is confidently relevant, and
always "" (never an error, never a wait) when the index is absent, locked, of another
schema or corrupt.

A hit is left out when this session already has it: hits of this session's own L1
file, memory.md sections flushed since the session started (past the size memory.md had
then), anything whose text is in the session's start context, and anything recalled
before in this session. :func:`note_session_start` keeps what that takes in a small
per-session state file, ``.state/recall/<session>.json`` (written atomically under its
lock; a prompt whose state is busy is skipped, never waited for), removed when the session
ends (:func:`note_session_end`) and, for a session that never ended, once it is
:data:`STATE_MAX_AGE_SECONDS` old.

Config: ``recall.enabled`` (default true) and ``recall.minConfidence`` (default 0.6, a calibrated
confidence: see :func:`memkeeper.core.search.scoring.calibrated`), read by
:func:`memkeeper.core.config.reader.hook_settings`.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from ..basics import fastjson
from ..store.atomic import atomic_write_bytes, atomic_write_json
from ..store.boundary import lstat_entries
from ..store.layout import project_dir, store_root
from ..store.lock import try_lock
from .ask import (
    MAX_REQUEST,
    PAYLOAD_REQUEST,
    QUERY_CHARS,
    TASK_NOTIFICATION,
    Channel,
    Refused,
    answer,
    ask,
    hook_output,
    state_dir,
    worth_looking_up,
)

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable
    from typing import Any

    from ..config.reader import HookSettings
    from ..search.model import Hit
    from ..store.paths import StorePaths
    from .wire import Listener

MAX_HITS = 3
#: Once a hit is confident enough to inject, the next best hits come with it (up to MAX_HITS)
#: when their confidence is at least this share of the bar: the answer is often a confident
#: lookup's second or third hit (docs/recall.md, sixth round).
COMPANION_SHARE = 0.5
MAX_CHARS = 1_500
#: The longest the hook waits on a locked index (SQLite's busy timeout), in seconds.
BUSY_TIMEOUT = 0.05
#: Candidates asked of the index per tier; the filters below keep at most MAX_HITS.
CANDIDATES = 6
#: Per-session state files older than this are removed when a session starts.
STATE_MAX_AGE_SECONDS = 14 * 86400
HEADER = "[memkeeper] Earlier memory that may answer this (full text: the memkeeper `show` tool with the id):"


def site_packages() -> None:
    """Make the site packages importable in a process started without them (the hook launcher
    starts Python with -S): a lookup needs the search engine's stemmer."""
    import sys

    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()


# --- per-session state -------------------------------------------------------------------


def _key(session_id: str) -> str:
    if (
        0 < len(session_id) <= 100
        and session_id.replace("-", "").replace("_", "").isalnum()
        and session_id.isascii()
    ):
        return session_id
    import hashlib

    return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:32]


def _state_path(root: str, session_id: str) -> str:
    return os.path.join(state_dir(root), _key(session_id) + ".json")


def _normal(text: str) -> str:
    return " ".join(text.split()).lower()


def _load(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            data = fastjson.loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _memory_size(paths: StorePaths) -> int:
    try:
        return os.stat(paths.memory).st_size
    except OSError:
        return 0


def note_session_start(paths: StorePaths, session_id: str | None, context: str) -> None:
    """Remember what the session starts with (its start context, memory.md's size); prune old state."""
    if not session_id or not paths.state.is_dir():
        return
    folder = state_dir(os.fspath(paths.root))
    os.makedirs(folder, mode=0o700, exist_ok=True)
    _prune(folder)
    path = _state_path(os.fspath(paths.root), session_id)
    with try_lock(path[:-5] + ".lock") as held:
        if not held:
            return
        state = _load(path)  # a resumed or compacted session keeps what it was shown
        shown = state.get("shown") if isinstance(state.get("shown"), list) else []
        atomic_write_json(
            path,
            {
                "session": session_id,
                "memorySize": _memory_size(paths),
                "context": _normal(context),
                "shown": shown,
            },
            durable=False,
        )


def note_session_end(paths: StorePaths, session_id: str | None) -> None:
    """The session is over: its state file and that file's lock go (a session resumed later
    starts a new one; what it was shown before is in its transcript). Left when busy."""
    if not session_id:
        return
    path = _state_path(os.fspath(paths.root), session_id)
    lock = path[:-5] + ".lock"
    if not os.path.lexists(lock) and not os.path.lexists(path):
        return
    with try_lock(lock) as held:
        if not held:
            return
        unlink(path)
    unlink(lock)  # released first: a lock file cannot be removed while open everywhere


def _prune(folder: str) -> None:
    cutoff = time.time() - STATE_MAX_AGE_SECONDS
    for _name, path, status in lstat_entries(folder):
        if status.st_mtime < cutoff:
            try:
                os.unlink(path)
            except OSError:
                pass


# --- which hits -----------------------------------------------------------------------------


def _offset(hit: Hit) -> int | None:
    tail = hit.id.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _in_context(hit: Hit, context: str) -> bool:
    """True when the start context already holds the hit: most of its snippet's text, piece by piece."""
    if not context:
        return False
    pieces = [
        p for p in (_normal(part) for part in hit.snippet.replace(" - [", "…[").split("…")) if len(p) >= 12
    ]
    total = sum(len(p) for p in pieces)
    return total > 0 and sum(len(p) for p in pieces if p in context) >= 0.6 * total


def _earlier(hit: Hit, session_id: str | None, short_id: str, state: dict[str, Any]) -> bool:
    """False for what this session wrote itself: its L1 file, memory.md sections flushed since it began."""
    if hit.tier == "l1":
        if session_id and hit.session == session_id:
            return False
        from ..store.names import l1_session  # here: the hook's client side never needs it

        return not (short_id and l1_session(hit.file) == short_id)
    if hit.tier == "memory" and hit.file.endswith("memory.md"):
        size, offset = state.get("memorySize"), _offset(hit)
        if isinstance(size, int) and offset is not None and offset >= size:
            return False
    return True


def pick(hits: list[Hit], session_id: str | None, state: dict[str, Any], min_confidence: float) -> list[Hit]:
    """The hits worth injecting, best first: from earlier sessions, new to this session; the first
    confident, the others (its companions) at least COMPANION_SHARE of ``min_confidence``."""
    shown = set(state.get("shown") or ())
    context = state.get("context") if isinstance(state.get("context"), str) else ""
    short_id = session_id[:8] if session_id else ""
    chosen: list[Hit] = []
    seen: set[str] = set()
    for hit in sorted(hits, key=lambda h: -h.confidence):
        bar = min_confidence * COMPANION_SHARE if chosen else min_confidence
        if hit.confidence < bar or hit.id in shown or hit.id in seen:
            continue
        if not _earlier(hit, session_id, short_id, state) or _in_context(hit, str(context)):
            continue
        chosen.append(hit)
        seen.add(hit.id)
        if len(chosen) == MAX_HITS:
            break
    return chosen


# --- the text -----------------------------------------------------------------------------


#: Titles a resident lookup keeps, per L1 file and size (cleared past this many).
TITLES_KEPT = 1_000


def _title(paths: StorePaths, l1_file: str, kept: dict[tuple[str, int], str | None] | None) -> str | None:
    """The session title of an L1 hit; with ``kept`` (a resident lookup's), worked out once per file size."""
    from ..capture.titles import session_title

    if kept is None:
        return session_title(paths, l1_file)
    try:
        key = (l1_file, os.stat(os.path.join(paths.root, l1_file)).st_size)
    except OSError:
        return session_title(paths, l1_file)
    if key not in kept:
        if len(kept) >= TITLES_KEPT:
            kept.clear()
        kept[key] = session_title(paths, l1_file)
    return kept[key]


def _label(paths: StorePaths, hit: Hit, titles: dict[tuple[str, int], str | None] | None = None) -> str:
    when = f" {hit.date[:10]}" if hit.date else ""
    if hit.tier == "l1":
        title = _title(paths, hit.file, titles)
        return f"{hit.id} [earlier session{when}" + (f' "{title}"' if title else "") + "]"
    return f"{hit.id} [{hit.tier} {hit.type}{when}]"


def format_context(
    paths: StorePaths,
    hits: list[Hit],
    limit: int = MAX_CHARS,
    titles: dict[tuple[str, int], str | None] | None = None,
) -> str:
    """The injected text: a header, then one line per hit, within ``limit`` characters.

    ``titles``: session titles kept between calls (a resident lookup's), by L1 file and size.
    """
    lines = [HEADER]
    room = limit - len(HEADER) - 1
    for i, hit in enumerate(hits):
        label = _label(paths, hit, titles)
        share = room // (len(hits) - i) - 1
        text = " ".join(hit.snippet.split())
        for turn in hit.exchange:  # an L1 hit's exchange: the turns before and after it
            text += f" ↳ {turn.id}: " + " ".join(turn.snippet.split())
        line = f"- {label}: {text}"
        if len(line) > share:
            line = line[: max(0, share - 1)].rstrip() + "…"
        if len(line) <= len(label) + 4:
            break  # no room left for any of its text
        lines.append(line)
        room -= len(line) + 1
    return "\n".join(lines) if len(lines) > 1 else ""


# --- the whole step --------------------------------------------------------------------------


def _lookup(paths: StorePaths, prompt: str, min_confidence: float, conn: Any) -> list[Hit] | None:
    from ..search.engine import search_confident

    return search_confident(
        paths,
        prompt[:QUERY_CHARS],
        min_confidence,
        limit=CANDIDATES,
        timeout=BUSY_TIMEOUT,
        conn=conn,
        floor=min_confidence * COMPANION_SHARE,
    )


def recall_context(project: str, session_id: str | None, prompt: str, min_confidence: float) -> str:
    """The ``additionalContext`` for this prompt in ``project``; "" when there is nothing confident and new.

    Asked of a resident lookup if one serves the store, else looked up here. The hook
    itself asks first, reads the answer after counting the prompt and starts the ``recall``
    job when it looked up itself (:mod:`memkeeper.core.recall.ask`).
    """
    pending = ask(project, session_id, prompt, min_confidence)
    if pending is None:
        return ""
    return answer(pending, lambda: lookup_here(project, session_id, prompt, min_confidence))


def lookup_here(
    project: str,
    session_id: str | None,
    prompt: str,
    min_confidence: float,
    conn: Any = None,
    reply: Callable[[str], None] | None = None,
    titles: dict[tuple[str, int], str | None] | None = None,
) -> str:
    """The recall step in this process (imports the search engine); ``conn``: an open index connection.

    ``reply(text)`` (the resident server's reply) is called before the session's state is
    saved, still under its lock: the prompt does not wait for that write, and another
    prompt of the session meanwhile finds the lock taken and is skipped, never answered twice.
    When nothing confident is found the state is not touched, and ``reply`` is not called
    (the caller replies with the "" returned).
    ``titles``: the resident server's kept session titles (:func:`format_context`).
    """
    site_packages()
    from pathlib import Path

    from ..store.paths import StorePaths

    root = store_root(project)
    paths = StorePaths(Path(project))
    hits = _lookup(paths, prompt, min_confidence, conn)  # (read-only: the session's state is not needed yet)
    if not hits:
        return ""  # nothing confident: the session's state is not touched
    if not session_id:
        return _recall(paths, None, hits, min_confidence, {}, titles)
    path = _state_path(root, session_id)
    os.makedirs(state_dir(root), mode=0o700, exist_ok=True)
    with try_lock(path[:-5] + ".lock") as held:
        if not held:
            return ""  # another prompt of this session is being answered: never wait
        state = _load(path)
        text = _recall(paths, session_id, hits, min_confidence, state, titles)
        if reply is not None:
            reply(text)
        if text:
            atomic_write_json(path, state, durable=False)
        return text


def _recall(
    paths: StorePaths,
    session_id: str | None,
    hits: list[Hit],
    min_confidence: float,
    state: dict[str, Any],
    titles: dict[tuple[str, int], str | None] | None = None,
) -> str:
    """The text of the hits new to this session (``state`` notes them as shown)."""
    chosen = pick(hits, session_id, state, min_confidence)
    text = format_context(paths, chosen, titles=titles)
    if text:
        shown = state.get("shown")
        state["shown"] = [
            *(shown if isinstance(shown, list) else []),
            *(h.id for h in chosen if h.id in text),
        ]
        state.setdefault("session", session_id)
    return text


# --- the resident lookup ----------------------------------------------------------------------
#
# The MCP server Claude Code keeps running for the session has the engine loaded: it serves
# lookups on the store's channel in the user's runtime folder, and the hook asks it first
# (:mod:`memkeeper.core.recall.ask`: the channel, how the client proves the server).

#: The longest a connection may take for the handshake and its question, in seconds (a peer
#: that stalls holds only its own thread, this long).
READ_TIMEOUT = 1.0
#: The longest the server takes to send an answer, in seconds.
SEND_TIMEOUT = 1.0
#: Connections handled at once (each on its own thread); more wait to be accepted.
MAX_CONNECTIONS = 32
#: How often the accepting thread looks whether the server was closed, in seconds.
ACCEPT_POLL = 2.0


class RecallServer:
    """Serves :func:`lookup_here` on the store's channel (:class:`~memkeeper.core.recall.ask.Channel`,
    :mod:`~memkeeper.core.recall.wire`), on daemon threads: one accepts, one per connection proves
    and answers; one server per store at a time (the first to take the channel's lock)."""

    def __init__(self, paths: StorePaths) -> None:
        import threading

        self.paths = paths
        self.path = ""  # the channel's key file once listening (removed: the server stops)
        self._listener: Listener | None = None
        self._held: Any = None  # the channel's lock, held while serving
        self.served = 0  # lookups answered
        self.last_used = time.monotonic()  # when the last lookup was answered (or the server started)
        # One index connection kept open (opening one and reading its schema costs more than
        # a lookup), used by one lookup at a time, opened again when the index file is replaced.
        self._index_lock = threading.Lock()
        self._conn: Any = None
        self._conn_file: tuple[int, int] | None = None
        self._closed = False
        self._titles: dict[tuple[str, int], str | None] = {}  # session titles, by L1 file and size
        self._config = KeptSettings(paths)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def start(self, warm: bool = True) -> bool:
        """Listen (False when the store or the runtime folder does not allow it, or another server
        serves this store already).

        A new secret each time, written (0600) only once the channel listens: a hook that reads
        it can connect. ``warm``: load the engine and open the index on a thread meanwhile (a
        caller that can wait calls :meth:`warm` first instead, so its first answer is quick).
        """
        import threading

        if not self.paths.state.is_dir():
            return False
        try:
            channel = Channel(os.fspath(self.paths.root), create=True)
            held = try_lock(channel.lock_file)
            if not held.__enter__():
                return False  # another server serves this store
        except (OSError, Refused):
            return False
        try:
            listener = self._listen(channel)
        except Exception:
            held.__exit__(None, None, None)
            return False
        # (the accepting thread then sees close() where closing does not wake it)
        listener.sock.settimeout(ACCEPT_POLL)
        self._listener, self.path = listener, channel.key_file
        self._held = held
        self.last_used = time.monotonic()  # idle from now on, not from a warm-up before
        threading.Thread(target=self._accept, name="memkeeper-recall", daemon=True).start()
        if warm:
            threading.Thread(target=self.warm, name="memkeeper-recall-warm", daemon=True).start()
        return True

    @staticmethod
    def _listen(channel: Channel) -> Listener:
        """The listener on ``channel``, its secret written (the caller holds the channel's lock)."""
        from .wire import Listener

        unlink(channel.key_file)  # a stale server's: its hooks now find no channel until this one listens
        unlink(channel.socket_file)
        key, family = os.urandom(32), channel.family
        listener = Listener(family, channel.socket_file, key)
        try:
            secret = channel.secret_text(key, family, listener.port)
            atomic_write_bytes(channel.key_file, secret, durable=False, redact=False)
        except BaseException:
            listener.close()
            raise
        return listener

    def warm(self) -> None:
        """Load what a lookup needs and open the index now, so the first prompt does not wait for them."""
        try:
            import struct  # noqa: F401  (imported for their cost, once: the first prompt paid 60 ms)

            from ..capture import l1, titles  # noqa: F401  (a title reads its L1 file)
            from ..search import engine, words  # noqa: F401

            words.porter("warming")  # loads the stemmer

            with self._index_lock:
                if not self._closed:
                    self._index()
        except Exception:  # the first lookup tries again
            pass

    def close(self) -> None:
        self._closed = True
        if self._listener is not None:
            unlink(self.path)  # first: no hook reads a secret for a closed channel
            self._listener.close()  # (removes a Unix socket file)
            self._listener = None
        if self._held is not None:
            self._held.__exit__(None, None, None)
            self._held = None
        with self._index_lock:
            self._drop_conn()

    def _drop_conn(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn, self._conn_file = None, None

    def _index(self) -> Any:
        """The open index connection, (re)opened when the file is new; None when it cannot be read."""
        from ..search import schema

        try:
            info = os.stat(self.paths.search_db)
        except OSError:
            self._drop_conn()
            return None
        if self._conn is None or self._conn_file != (info.st_dev, info.st_ino):
            self._drop_conn()
            self._conn = schema.connect_readonly(self.paths.search_db, BUSY_TIMEOUT)
            self._conn_file = (info.st_dev, info.st_ino) if self._conn is not None else None
        return self._conn

    def _accept(self) -> None:
        """Accept each connection and answer it on a thread of its own (at most
        :data:`MAX_CONNECTIONS` at once), so a peer that stalls never holds the others."""
        import threading

        while (listener := self._listener) is not None:
            self._slots.acquire()
            try:
                sock = listener.accept_socket()
            except TimeoutError:
                self._slots.release()
                continue
            except OSError:
                self._slots.release()
                if self._closed:
                    return
                time.sleep(0.01)  # (out of descriptors, say: not a busy loop)
                continue
            try:
                threading.Thread(target=self._answer, args=(sock, listener.key), daemon=True).start()
            except RuntimeError:  # no thread to be had: this connection gets nothing
                sock.close()
                self._slots.release()

    def _answer(self, sock: socket.socket, key: bytes) -> None:
        """Prove this end, check the client's proof, read its question and answer it; a
        connection that fails any of them gets nothing (its hook looks up itself)."""
        from .wire import Connection, peer_is_me, prove_server

        try:
            with Connection(sock, time.monotonic() + READ_TIMEOUT) as conn:
                if not peer_is_me(sock):
                    return
                prove_server(conn, key)  # NotProven: closed with nothing more sent
                data = conn.recv_bytes(MAX_REQUEST)
                encode = _utf8
                if data.startswith(PAYLOAD_REQUEST):  # a prompt hook's payload, unparsed
                    verdict, request = read_payload(data[len(PAYLOAD_REQUEST) :])
                    conn.send_bytes(verdict)  # (the hook counts the prompt meanwhile)
                    if request is None:
                        if verdict:
                            conn.send_bytes(b"")  # nothing to print
                        return
                    encode = hook_output
                else:
                    question = fastjson.loads(data)
                    request = question if isinstance(question, dict) else {}
                sent: list[str] = []

                def reply(text: str) -> None:
                    self.served += 1  # counted before the hook can see the answer
                    self.last_used = time.monotonic()
                    conn.deadline = time.monotonic() + SEND_TIMEOUT
                    conn.send_bytes(encode(text))
                    sent.append(text)

                text = self._lookup(request, reply)
                if not sent:
                    reply(text)
        except Exception:  # a peer that did not prove itself, a bad request or a failed lookup
            pass
        finally:
            self._slots.release()

    def _lookup(self, request: dict[str, Any], reply: Callable[[str], None] | None = None) -> str:
        """The answer to ``request``; its confidence is the request's ``min``, else the config's,
        and none is looked up when the config turns recall off."""
        session, prompt, low = request.get("session"), request.get("prompt"), request.get("min")
        if low is None:
            settings = self._config.settings()
            if not settings.recall_enabled:
                return ""
            low = settings.recall_min_confidence
        if not isinstance(prompt, str) or isinstance(low, bool) or not isinstance(low, (int, float)):
            return ""
        project = os.fspath(self.paths.project)
        with self._index_lock:
            conn = self._index()
            if conn is None:
                return ""
            try:
                sid = session if isinstance(session, str) else None
                return lookup_here(project, sid, prompt, float(low), conn, reply, self._titles)
            except Exception:
                self._drop_conn()  # opened afresh for the next lookup
                raise


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


def _text(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def read_payload(body: bytes) -> tuple[bytes, dict[str, Any] | None]:
    """A prompt hook's request (:func:`memkeeper.core.recall.ask.ask_with_payload`): the verdict the
    hook reads first, and the question to look up (None: nothing to look up).

    The verdict is b"" when the payload is not this request's project's (its ``cwd`` resolved as the
    hook resolves it, :func:`memkeeper.core.store.layout.project_dir`) or cannot be read: the hook
    then goes the usual way, and nothing is looked up here. Else the fields the hook needs to count
    the prompt: its session, its transcript, and "1" when it is counted (not a task notification).
    """
    from .wire import pack_fields, unpack_fields

    try:
        guess, started, raw = unpack_fields(body)
        payload = fastjson.loads(raw.decode("utf-8", "replace"))  # (as the hook reads its payload)
    except ValueError:  # (not three fields, or not JSON)
        return b"", None
    guess_path, started_path = (field.decode("utf-8", "surrogateescape") for field in (guess, started))
    if not isinstance(payload, dict):
        return b"", None
    cwd = payload.get("cwd")
    resolved = guess_path
    if isinstance(cwd, str) and os.path.isabs(cwd):
        environ = {"CLAUDE_PROJECT_DIR": started_path} if started_path else {}
        resolved = project_dir(hook_cwd=cwd, env=environ)
    if os.path.normpath(resolved) != os.path.normpath(guess_path):
        return b"", None
    session_id, transcript, prompt = (
        _text(payload, "session_id"),
        _text(payload, "transcript_path"),
        payload.get("prompt"),
    )
    counted = not (isinstance(prompt, str) and prompt.lstrip().startswith(TASK_NOTIFICATION))
    try:
        fields = [(session_id or "").encode(), (transcript or "").encode(), b"1" if counted else b""]
    except UnicodeEncodeError:  # (a lone surrogate: the hook reads the payload itself)
        return b"", None
    if not counted or not isinstance(prompt, str) or not worth_looking_up(prompt):
        return pack_fields(fields), None
    return pack_fields(fields), {"session": session_id, "prompt": prompt[:QUERY_CHARS]}


class KeptSettings:
    """A store's hook settings for a long-lived process: read again only when a config file changed."""

    __slots__ = ("_files", "_key", "_settings")

    def __init__(self, paths: StorePaths) -> None:
        from ..config.reader import global_config_file
        from ..store.layout import CONFIG_FILE

        self._files = (global_config_file(), os.path.join(paths.root, CONFIG_FILE))
        self._key: tuple[tuple[int, ...] | None, ...] = ()
        self._settings: HookSettings | None = None

    def settings(self) -> HookSettings:
        from ..config.reader import hook_settings_at

        key = tuple(_signature(path) for path in self._files)
        if self._settings is None or key != self._key:
            self._settings, self._key = hook_settings_at(self._files[1]), key
        return self._settings


def _signature(path: str) -> tuple[int, ...] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# --- the detached resident lookup (the ``recall`` job) -----------------------------------------

#: The ``recall`` job serves until no prompt has been looked up for this long.
IDLE_SECONDS = 15 * 60
POLL_SECONDS = 5.0
RECALL_JOB = "recall"


def run_recall_job(paths: StorePaths, options: dict[str, Any]) -> None:
    """Job runner ``recall``: serve this store's per-prompt recall while prompts keep coming.

    For a session without the MCP server (whose own :class:`RecallServer` answers otherwise):
    the hook that had to look up itself starts this job, and the next prompts only ask it.
    It stops after :data:`IDLE_SECONDS` without a lookup, or when its index or socket is gone.
    """
    server = RecallServer(paths)
    server.warm()  # before listening: the hook asks only once it can answer at once
    if not server.start(warm=False):
        return
    try:
        while (
            time.monotonic() - server.last_used < IDLE_SECONDS
            and os.path.isfile(paths.search_db)
            and os.path.exists(server.path)  # (its key file: removed, the job stops)
        ):
            time.sleep(POLL_SECONDS)
    finally:
        server.close()
