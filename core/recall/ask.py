"""Per-prompt recall, the hook's side: put the prompt to a resident lookup it can trust, read its answer.

Importing the search engine costs a hook several times a bare Python start, while the
lookup itself takes a millisecond or two. A resident lookup keeps the engine loaded — the
MCP server Claude Code runs for the session, or the detached ``recall`` job
(:class:`memkeeper.core.recall.lookup.RecallServer`) — and the hook asks it.

The hook sends a prompt only to a resident lookup it can prove is this user's, for this
store (:class:`Channel`):

- the channel lives in the user's runtime folder (:func:`runtime_folder`, made
  0700 and owned by the user; never in the project, which can arrive by git), named by a
  hash of the store's real path: a short address on every system (a Unix socket, or a
  loopback TCP port where there is none or the path is too long:
  :func:`memkeeper.core.recall.wire.family_for`);
- the store's secret is a 0600 file there that only the server writes; the client reads it
  without following a link (``lstat`` before, ``fstat`` after, the same file; owner and
  mode checked where the OS has them), and checks the socket file the same way;
- a challenge and response on each side (:mod:`memkeeper.core.recall.wire`: HMAC-SHA256 of
  the other's nonce with the secret) proves each end to the other before a byte of the
  prompt goes out.

Anything else (a link, another owner, open modes, a failed handshake): nothing is sent, the
refusal is logged once, and the hook looks up itself. The whole exchange (finding the
channel, connecting, the handshake, the question and the reply) runs on a daemon thread the
caller waits for until one deadline, :data:`ASK_TIMEOUT` after :func:`ask` (every read and
write of the socket ends by it too); past it the hook goes on without the answer ("": never
a longer wait, never asked twice). The reply is at most :data:`MAX_REPLY` bytes.

The hook counts the prompt itself, always, and the server never does: a prompt is counted
exactly once, whatever happens to its question.

A question (:func:`ask`) is one JSON message: ``session`` and the first :data:`QUERY_CHARS` of
the ``prompt``, with ``min`` (the confidence a hit needs) when the caller read the config, else
the server reads it. The reply is one message: the text to inject (UTF-8, "" for nothing).

The prompt hook asks another way first (:func:`ask_with_payload`): its payload, unparsed, which
the server reads for it, so a prompt a resident lookup answers costs the hook neither ``json``
nor a thread (docs/hook-path.md).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

from .. import recall
from ..basics import platform
from ..store.layout import SEARCH_DB, STATE_DIR, store_root

RECALL_DIR = "recall"
APP_NAME = "memkeeper"
#: The one deadline of a resident lookup's answer (find the channel, connect, handshake, ask, read), in seconds.
ASK_TIMEOUT = 0.3
#: The longest reply read from a resident lookup (its text is at most recall.MAX_CHARS characters).
MAX_REPLY = 16 * 1024
SOCKET_SUFFIX = ".sock"
KEY_SUFFIX = ".key"
LOCK_SUFFIX = ".lock"
#: The channel families a secret file may name (:mod:`memkeeper.core.recall.wire`).
FAMILIES = ("AF_UNIX", "AF_INET")
#: The most bytes a secret file holds (the key's hex digits, the family and a port).
MAX_SECRET_FILE = 256
#: Only the start of a long prompt is looked up (its request is usually there).
QUERY_CHARS = 400
MIN_QUERY_WORDS = 2
#: A prompt that Claude Code makes itself (a background task's end): never counted, never looked up.
TASK_NOTIFICATION = "<task-notification>"
#: What a prompt hook's request starts with (:func:`ask_with_payload`); a question (:func:`ask`) is JSON.
PAYLOAD_REQUEST = b"P"
#: The longest request a resident lookup reads (a bigger hook payload goes the usual way, as a question).
MAX_REQUEST = 64 * 1024


def state_dir(root: str) -> str:
    """The folder of recall's per-session state (in the store's ``.state``)."""
    return os.path.join(root, STATE_DIR, RECALL_DIR)


def worth_looking_up(prompt: str) -> bool:
    """A typed request with words: not a slash command, a shell escape or a hook's own message."""
    text = prompt.strip()
    if not text or text.startswith(("/", "!", "<")):
        return False
    words = [w for w in text[:QUERY_CHARS].split() if sum(ch.isalnum() for ch in w) >= 2]
    return len(words) >= MIN_QUERY_WORDS


# --- the channel ---------------------------------------------------------------------------------


class Refused(Exception):
    """The channel is not provably this user's: nothing is sent (the message says why)."""


def runtime_folder(create: bool = False) -> str:
    """The user's private runtime folder for memkeeper, checked (:class:`Refused`).

    ``memkeeper`` in :func:`memkeeper.core.basics.platform.user_runtime_base` (where
    ``platformdirs.user_runtime_dir`` puts it, without that import's cost on the prompt hook).
    The server and the hook ask this same function, so they always agree. ``create``: made 0700 when missing, and its mode
    narrowed if it is the user's (the server's side).
    """
    folder = os.path.join(platform.user_runtime_base(), APP_NAME)
    if create:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    info = _lstat(folder)
    if create and stat.S_ISDIR(info.st_mode) and not platform.private_to_me(info):
        try:  # ours, with modes a umask widened: narrowed (lstat'ed: not a link); another's stays refused
            os.chmod(folder, 0o700)
        except OSError:
            pass
        info = _lstat(folder)
    if not _private_folder(info):
        raise Refused(f"the runtime folder {folder} is not a private folder of this user (a link?)")
    return folder


def _private_folder(info: os.stat_result) -> bool:
    return stat.S_ISDIR(info.st_mode) and platform.private_to_me(info)


def _lstat(path: str) -> os.stat_result:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Refused(f"{path}: {exc.strerror}") from None


def read_private(path: str, limit: int = MAX_SECRET_FILE) -> bytes:
    """The start of the regular file ``path``, read without following a link and only when it is
    the current user's alone (:class:`Refused` otherwise; FileNotFoundError when it is missing).

    ``lstat`` first, then the file opened (no-follow where the OS has it) and ``fstat``-ed: the same
    file, still private (:func:`memkeeper.core.basics.platform.open_no_follow`).
    """
    before = _lstat(path)
    if not stat.S_ISREG(before.st_mode):
        raise Refused(f"{path} is not a regular file (a link?)")
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = platform.open_no_follow(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Refused(f"{path}: {exc.strerror}") from None
    try:
        after = os.fstat(fd)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(after.st_mode):
            raise Refused(f"{path} changed while it was opened")
        if not platform.private_to_me(after):
            raise Refused(f"{path} is not private to this user")
        return os.read(fd, limit)
    finally:
        os.close(fd)


class Channel:
    """Where the resident lookup of one store listens, and the files that prove it.

    All in the user's runtime folder, named by a hash of the store's real path and of that
    folder: ``<name>.key`` (the secret, and the port on a loopback channel), ``<name>.sock``
    (a Unix socket), ``<name>.lock`` (held by the one server serving the store).
    """

    __slots__ = ("folder", "key_file", "lock_file", "name", "socket_file")

    def __init__(self, root: str, create: bool = False) -> None:
        import hashlib

        self.folder = runtime_folder(create)
        real = os.path.realpath(root)
        seed = f"{real}\0{self.folder}".encode("utf-8", "surrogateescape")
        self.name = hashlib.sha256(seed).hexdigest()[:24]
        base = os.path.join(self.folder, self.name)
        self.key_file, self.socket_file, self.lock_file = (
            base + KEY_SUFFIX,
            base + SOCKET_SUFFIX,
            base + LOCK_SUFFIX,
        )

    @property
    def family(self) -> str:
        """The family a server listens in here (the secret file says which to the hook)."""
        from .wire import family_for

        return family_for(self.socket_file)

    def address(self, family: str, port: int = 0) -> str | tuple[str, int]:
        """The address to listen on or connect to in ``family`` (``port``: a loopback channel's)."""
        if family == "AF_UNIX":
            return self.socket_file
        return ("127.0.0.1", port)

    def secret_text(self, key: bytes, family: str, port: int) -> bytes:
        """What the server writes in the secret file: the key, how to reach it."""
        return f"{key.hex()}\n{family}\n{port}\n".encode()

    def secret(self) -> tuple[bytes, str, str | tuple[str, int]]:
        """The server's key, its family and the address to reach it (:class:`Refused` when they are
        not provably this user's; FileNotFoundError when no server serves the store)."""
        lines = read_private(self.key_file).decode("ascii", "replace").split()
        try:
            key, family, port = bytes.fromhex(lines[0]), lines[1], int(lines[2])
        except (IndexError, ValueError):
            raise Refused(f"{self.key_file} is not a key file") from None
        if len(key) < 16 or family not in FAMILIES or not 0 <= port < 65536:
            raise Refused(f"{self.key_file} is not a key file")
        if family == "AF_UNIX":
            info = _lstat(self.socket_file)
            if not stat.S_ISSOCK(info.st_mode):
                raise Refused(f"{self.socket_file} is not a socket (a link?)")
            if not platform.private_to_me(info):
                raise Refused(f"{self.socket_file} is not private to this user")
        elif family == "AF_INET" and not port:
            raise Refused(f"{self.key_file} names no port")
        return key, family, self.address(family, port)


# --- asking ----------------------------------------------------------------------------------


def find_channel(root: str) -> tuple[tuple[bytes, str, str | tuple[str, int]] | None, str | None]:
    """The secret of the resident lookup of the store at ``root`` (:meth:`Channel.secret`) and None;
    or None and why the channel is not trusted (None too when no server serves the store)."""
    try:
        return Channel(root).secret(), None
    except Refused as exc:
        return None, str(exc)
    except Exception:  # no server (no secret: FileNotFoundError)
        return None, None


def connect_proven(
    secret: tuple[bytes, str, str | tuple[str, int]], deadline: float
) -> tuple[recall.wire.Connection | None, str | None]:
    """A connection to the channel of ``secret`` (:func:`find_channel`) on which both ends have
    proved themselves by ``deadline``, and None; or None and why the other end was not trusted
    (None too when nobody listens in time). Nothing is sent on a refused channel."""
    from . import wire  # (socket and hmac: only once a secret is found)

    key, family, address = secret
    try:
        return wire.connect(family, address, key, deadline), None
    except wire.NotProven as exc:  # whatever the other end sent, nothing of the prompt went out
        return None, f"the resident lookup did not prove itself ({exc})"
    except Exception:  # nobody listens (a stale secret), or too late
        return None, None


class Pending:
    """A prompt's recall under way: the question, and the exchange with a resident lookup.

    ``min_confidence``: None when the server reads it from the config (the hook's question).
    The exchange's outcome, once its thread ends: ``reply`` (the server's text), or ``refused``
    (why the channel was not trusted), or neither (no server, or it failed). ``sent``: the
    question went out; past the deadline it never does (:meth:`give_up`).
    """

    __slots__ = (
        "_cut",
        "deadline",
        "given_up",
        "min_confidence",
        "project",
        "prompt",
        "refused",
        "reply",
        "sent",
        "session_id",
        "thread",
    )

    def __init__(
        self, project: str, session_id: str | None, prompt: str, min_confidence: float | None
    ) -> None:
        import threading

        self.project, self.session_id, self.prompt = project, session_id, prompt
        self.min_confidence = min_confidence
        self.deadline = 0.0
        self.thread: threading.Thread | None = None
        self.reply: str | None = None
        self.refused: str | None = None
        self.sent = self.given_up = False
        self._cut = threading.Lock()  # the question goes out before the deadline, or never

    def exchange(self, root: str, request: bytes) -> None:
        """The whole exchange with the store's resident lookup, every step ending by the pending's
        deadline (on the pending's thread; never raises)."""
        secret, self.refused = find_channel(root)
        if secret is None:
            return
        conn, self.refused = connect_proven(secret, self.deadline)
        if conn is None:
            return
        try:
            with conn:
                with self._cut:
                    if self.given_up:
                        return  # past the deadline: the caller looks up itself
                    conn.send_bytes(request)
                    self.sent = True
                self.reply = conn.recv_bytes(MAX_REPLY).decode("utf-8", "replace")
        except TimeoutError:
            if self.sent:
                self.reply = ""  # asked, not answered in time: nothing (never looked up twice)
        except Exception:  # nobody listens (a stale secret), or a server that failed (the caller looks up)
            pass

    def give_up(self) -> bool:
        """The deadline passed: True when the question had gone out (its answer is late), False when
        it never will (the caller looks up itself)."""
        with self._cut:
            if self.sent:
                return True
            self.given_up = True
            return False


def ask(
    project: str,
    session_id: str | None,
    prompt: str,
    min_confidence: float | None = None,
    *,
    timeout: float = ASK_TIMEOUT,
) -> Pending | None:
    """Start this prompt's recall (None when there is nothing to look up: no index, no request).

    The question goes to a resident lookup of this store on a daemon thread, at once: the
    caller goes on meanwhile, then :func:`answer` waits for it until ``timeout`` after now.
    """
    if not worth_looking_up(prompt):
        return None
    root = store_root(project)
    if not os.path.isfile(os.path.join(root, SEARCH_DB)):
        return None
    import threading
    import time

    # Only what is looked up goes out: a long pasted prompt stays small on the wire.
    question: dict[str, object] = {"session": session_id, "prompt": prompt[:QUERY_CHARS]}
    if min_confidence is not None:
        question["min"] = min_confidence
    pending = Pending(project, session_id, prompt, min_confidence)
    pending.deadline = time.monotonic() + timeout
    from ..basics import fastjson

    request = fastjson.dumps(question).encode("utf-8")
    pending.thread = threading.Thread(
        target=pending.exchange, args=(root, request), name="memkeeper-recall-ask", daemon=True
    )
    pending.thread.start()
    return pending


def answer(pending: Pending, here: Callable[[], str], log: Callable[[str], None] | None = None) -> str:
    """The resident lookup's answer to ``pending``; ``here()`` (look up in this process) when none gave one.

    Waits for the exchange until the pending's deadline at most. A question that went out but
    was not answered in time gives "" (never a longer wait, never looked up twice); one that
    could not go out in time never will, and is looked up here. A channel that was not trusted
    is reported once through ``log``.
    """
    import time

    thread = pending.thread
    if thread is not None:
        thread.join(max(0.0, pending.deadline - time.monotonic()))
        if thread.is_alive() and pending.give_up():
            return ""
    text = pending.reply if pending.reply is not None else here()
    if pending.refused is not None and log is not None:  # (known by now, even past the deadline)
        log(f"recall: nothing sent to the resident lookup: {pending.refused}")
    return text


def ask_resident(root: str, request: bytes, timeout: float = ASK_TIMEOUT) -> str | None:
    """The answer of a resident lookup serving the store at ``root`` ("" for none, or too late), or
    None if none answered."""
    import threading
    import time

    pending = Pending("", None, "", None)
    pending.deadline = time.monotonic() + timeout
    thread = threading.Thread(target=pending.exchange, args=(root, request), daemon=True)
    thread.start()
    thread.join(timeout)
    return "" if thread.is_alive() else pending.reply


# --- a prompt hook's payload, put whole ----------------------------------------------------------
#
# The prompt hook need not parse its payload when a resident lookup answers: it hands the payload
# over as it came, with the project it found without it (``CLAUDE_PROJECT_DIR``, else its folder),
# and the server, which has ``json`` loaded, reads it (:func:`memkeeper.core.recall.lookup.read_payload`):
# is the payload's project that one (else the hook goes the usual way), which session to count, and
# the answer as the hook prints it. What ``json`` costs the hook (its patterns compiled, ``re``) is
# left to the process that keeps it loaded; the channel and its proofs are the ones :func:`ask` uses.


def hook_output(text: str) -> bytes:
    """What the prompt hook prints for the answer ``text`` (b"" for nothing)."""
    if not text:
        return b""
    from ..basics import fastjson

    out = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}
    return fastjson.dumps(out).encode("utf-8") + b"\n"


class PayloadAsked:
    """A prompt hook's payload put to the resident lookup (:func:`ask_with_payload`), and what became of it.

    ``sent``: the payload went out (to a server that proved itself). ``verdict``: None when nothing
    came back in time, or the server said the payload is not its store's, else ``(session_id,
    transcript_path, counted)`` as the server read them; :meth:`output` then reads what the hook
    prints. ``refused``: why the channel was not trusted (nothing went out; the hook logs it once).
    A payload that went out with no verdict is counted by the hook, and never asked again.
    """

    __slots__ = ("conn", "refused", "sent", "verdict")

    def __init__(self) -> None:
        self.conn: recall.wire.Connection | None = None
        self.refused: str | None = None
        self.sent = False
        self.verdict: tuple[str | None, str | None, bool] | None = None

    def output(self) -> bytes:
        """What the hook prints (b"": nothing; nothing either when it does not come by the deadline)."""
        if self.conn is None:
            return b""
        try:
            return self.conn.recv_bytes(MAX_REPLY)
        except Exception:  # late, or a server that failed: nothing (the prompt is never looked up twice)
            return b""
        finally:
            self.conn.close()


def ask_with_payload(
    project: str, payload: bytes, started: str, timeout: float = ASK_TIMEOUT
) -> PayloadAsked | None:
    """Put the prompt hook's ``payload`` (its stdin, unparsed) to the resident lookup of ``project``'s store.

    ``project``: the one the hook found without the payload; ``started``: its ``CLAUDE_PROJECT_DIR``
    ("" when unset), with which the server resolves the payload's ``cwd`` as the hook would. None
    when there is nothing to ask this way (no index, a request over :data:`MAX_REQUEST`): the hook
    goes the usual way. One deadline, ``timeout`` from now, for everything (find the channel, connect, both
    proofs, the payload, the verdict, the output); the payload goes out only once both ends have
    proved themselves (:func:`memkeeper.core.recall.wire.connect`).
    """
    import time

    if len(payload) > MAX_REQUEST:
        return None
    root = store_root(project)
    if not os.path.isfile(os.path.join(root, SEARCH_DB)):
        return None
    deadline = time.monotonic() + timeout
    asked = PayloadAsked()
    secret, asked.refused = find_channel(root)
    if secret is None:
        return asked
    from . import wire

    fields = [project.encode("utf-8", "surrogateescape"), started.encode("utf-8", "surrogateescape"), payload]
    request = PAYLOAD_REQUEST + wire.pack_fields(fields)
    if len(request) > MAX_REQUEST:
        return None  # (more than the server reads: asked the usual way, as a question)
    conn, asked.refused = connect_proven(secret, deadline)  # both ends proved, or nothing is sent
    if conn is None:
        return asked
    try:
        conn.send_bytes(request)
        asked.sent = True
        verdict = wire.unpack_fields(conn.recv_bytes(MAX_REPLY))
    except Exception:  # (its end never read a whole request, or said nothing in time)
        conn.close()
        return asked
    if len(verdict) != 3:  # not this store's payload (or one it could not read): nothing looked up
        conn.close()
        asked.sent = False
        return asked
    session_id, transcript, counted = (field.decode("utf-8", "replace") for field in verdict)
    asked.conn, asked.verdict = conn, (session_id or None, transcript or None, counted == "1")
    return asked


def not_sent(project: str, session_id: str | None, prompt: str, asked: PayloadAsked) -> Pending | None:
    """The prompt's recall when its payload could not be put to the resident lookup (``asked``, not
    sent): as :func:`ask` gives it, without asking again (None when there is nothing to look up)."""
    if not worth_looking_up(prompt):
        return None
    pending = Pending(project, session_id, prompt, None)
    pending.refused = asked.refused
    return pending
