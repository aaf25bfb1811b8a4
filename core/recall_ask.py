"""Per-prompt recall, the hook's side: put the prompt to a resident lookup, read its answer.

Importing the search engine costs a hook several times a bare Python start, while the
lookup itself takes a millisecond or two. A resident lookup keeps the engine loaded — the
MCP server Claude Code runs for the session, or the detached ``recall`` job
(:class:`memkeeper.core.recall.RecallServer`) — and serves lookups on a Unix socket in
the store's ``.state/recall/`` (0600 in a 0700 folder; the peer must be the same user).

This module is all the ``UserPromptSubmit`` hook loads for it: ``os`` and, only when a
socket is there, ``_socket``. :func:`ask` sends the question as soon as the hook knows
the prompt; :func:`answer` then reads the reply. No server, a stale socket (removed) or a
failed server: the caller looks up itself (:func:`memkeeper.core.recall.lookup_here`). A
server that does not answer in time: "" (never a longer wait, never asked twice).

The server also counts the prompt for the hook (it has the counting code loaded; the hook
then loads none of it): the question carries a ``count`` token, and a reply that starts
with :data:`COUNTED` says the prompt is counted. Any other outcome (an older server, no
reply, a late one) leaves the counting to the hook, with the same token, and a token
counted once is never counted again (:func:`memkeeper.core.counters.bump_at`): a prompt
is counted exactly once, whichever process gets there.

The request is one JSON object: ``session``, the first :data:`QUERY_CHARS` of the ``prompt``,
then either ``min`` (the confidence a hit needs; the caller read the config) or, from the
hook, ``count`` (the token), ``at`` (when it was asked, ``time.monotonic()``) and
``transcript`` (for a flush the count makes due), the server reading the config itself.
The reply is :data:`ANSWER` (or :data:`COUNTED`) followed by the text to inject (UTF-8,
"" for nothing), then the server closes.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memkeeper.core import fastjson
from memkeeper.core.layout import SEARCH_DB, STATE_DIR, store_root

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

RECALL_DIR = "recall"
SOCKET_SUFFIX = ".sock"
#: The longest the hook waits for a resident answer (connect, lookup, reply), in seconds.
ASK_TIMEOUT = 0.3
#: AF_UNIX paths are limited to about 108 bytes: a longer one is reached through the folder's
#: descriptor (``/proc/self/fd/N/name``, Linux); where that is not possible, no resident lookup.
MAX_SOCKET_PATH = 100
ANSWER = b"="
#: The reply's mark when the server counted the prompt too.
COUNTED = b"+"
#: Only the start of a long prompt is looked up (its request is usually there).
QUERY_CHARS = 400
MIN_QUERY_WORDS = 2


def state_dir(root: str) -> str:
    """The folder of recall's per-session state and of the resident lookups' sockets."""
    return os.path.join(root, STATE_DIR, RECALL_DIR)


def worth_looking_up(prompt: str) -> bool:
    """A typed request with words: not a slash command, a shell escape or a hook's own message."""
    text = prompt.strip()
    if not text or text.startswith(("/", "!", "<")):
        return False
    words = [w for w in text[:QUERY_CHARS].split() if sum(ch.isalnum() for ch in w) >= 2]
    return len(words) >= MIN_QUERY_WORDS


class Pending:
    """A prompt's recall under way: the question, and the socket it went out on (None: no server took it).

    ``min_confidence``: None when the server reads it from the config (the hook's question);
    ``token``: the prompt's count token (the hook's), ``counted``: the server said it counted it.
    """

    __slots__ = ("asked", "counted", "min_confidence", "project", "prompt", "session_id", "token")

    def __init__(
        self,
        project: str,
        session_id: str | None,
        prompt: str,
        min_confidence: float | None,
        asked: Any,
        token: str | None = None,
    ) -> None:
        self.project, self.session_id, self.prompt = project, session_id, prompt
        self.min_confidence = min_confidence
        self.asked = asked
        self.token = token
        self.counted = False


def ask(
    project: str,
    session_id: str | None,
    prompt: str,
    min_confidence: float | None = None,
    *,
    transcript: str | None = None,
) -> Pending | None:
    """Start this prompt's recall (None when there is nothing to look up: no index, no request).

    A resident lookup that serves this store gets the question now and works on it while
    the caller goes on. Without ``min_confidence`` (the hook) the question asks the server
    to count the prompt too, under a new token (:attr:`Pending.token`), and to read the
    config itself.
    """
    if not worth_looking_up(prompt):
        return None
    root = store_root(project)
    if not os.path.isfile(os.path.join(root, SEARCH_DB)):
        return None
    # Only what is looked up goes out: a long pasted prompt stays small on the wire.
    question: dict[str, Any] = {"session": session_id, "prompt": prompt[:QUERY_CHARS]}
    token = None
    if min_confidence is None:
        import time  # (built in, loaded at start-up)

        token = os.urandom(4).hex()
        question.update(count=token, at=time.monotonic())
        if transcript:
            question["transcript"] = transcript
    else:
        question["min"] = min_confidence
    sock = send(root, fastjson.dumps(question).encode("utf-8"))
    return Pending(project, session_id, prompt, min_confidence, sock, token)


def answer(pending: Pending, here: Callable[[], str]) -> str:
    """The resident lookup's answer to ``pending``; ``here()`` (look up in this process) when none gave one.

    Sets :attr:`Pending.counted` when the server counted the prompt.
    """
    if pending.asked is not None:
        found, pending.counted = reply_of(pending.asked)
        if found is not None:
            return found
    return here()


def ask_resident(root: str, request: bytes, timeout: float = ASK_TIMEOUT) -> str | None:
    """The answer of a resident lookup serving this store ("" for none), or None if none answered."""
    sock = send(root, request, timeout)
    return reply_of(sock)[0] if sock is not None else None


def send(root: str, request: bytes, timeout: float = ASK_TIMEOUT) -> Any:
    """The socket ``request`` went out on to a resident lookup of this store (None when none took it).

    Each step (connect, send, each read of the answer) waits at most ``timeout``. A socket
    nobody listens on (its server was killed) is removed, and the next one is tried.
    """
    folder = state_dir(root)
    try:
        names = [n for n in os.listdir(folder) if n.endswith(SOCKET_SUFFIX)]
    except OSError:
        return None
    if not names:
        return None
    import errno
    import socket

    for name in names:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            at(folder, name, sock.connect)
            sock.sendall(request)
            sock.shutdown(socket.SHUT_WR)
            return sock
        except TimeoutError:
            sock.close()
            return _SLOW  # a server that is there but slow: never wait longer, never ask twice
        except OSError as exc:
            sock.close()
            if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):  # the server is gone
                unlink(os.path.join(folder, name))
    return None


class _Slow:
    """Stands for a resident lookup too slow to take the question: the answer is ""."""


_SLOW = _Slow()


def reply_of(sock: Any) -> tuple[str | None, bool]:
    """The answer read from ``sock`` ("" when it came too late; None when the server failed),
    and whether the server says it counted the prompt."""
    if sock is _SLOW:
        return "", False
    try:
        data = read_all(sock)
    except TimeoutError:
        return "", False  # never wait longer, never look up twice
    except OSError:
        return None, False
    finally:
        sock.close()
    mark = data[:1]
    if mark in (ANSWER, COUNTED):
        return data[1:].decode("utf-8", "replace"), mark == COUNTED
    return None, False


def at(folder: str, name: str, act: Callable[[str], object]) -> None:
    """``act(path)`` for the socket ``name`` in ``folder``, through the folder's descriptor if the path is long."""
    path = os.path.join(folder, name)
    if len(path.encode()) <= MAX_SOCKET_PATH or not os.path.isdir("/proc/self/fd"):
        act(path)
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        act(f"/proc/self/fd/{fd}/{name}")
    finally:
        os.close(fd)


def read_all(sock: Any) -> bytes:
    """Everything ``sock`` sends until it shuts its side."""
    chunks: list[bytes] = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
