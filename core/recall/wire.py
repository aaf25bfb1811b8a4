"""The recall channel's wire protocol: each end proves it knows the store's secret, then one
question and one answer, on a plain stream socket.

Both ends hold the store's secret (the 0600 file only the server writes,
:class:`memkeeper.core.recall.ask.Channel`). Nothing of value crosses before both have proved it:

====================  =====================================================================
server -> client      ``MKR1`` and a nonce ``Ns`` (32 random bytes)
client -> server      ``HMAC-SHA256(secret, "memkeeper recall client" 0 Ns Nc)`` and its nonce ``Nc``
server -> client      ``HMAC-SHA256(secret, "memkeeper recall server" 0 Nc Ns)`` (or it closes)
client -> server      the question: its length (4 bytes, big-endian), then its bytes
server -> client      the answer, the same way (at most what the reader allows)
====================  =====================================================================

Each proof names its side, so one side's proof is never the other's, and covers both nonces,
so no proof seen before answers a new connection. Proofs are compared with
``hmac.compare_digest``. Every read and write of a :class:`Connection` ends by its deadline.

The family: a Unix socket where ``socket.AF_UNIX`` exists and the socket's path fits one, else a
loopback TCP port (:func:`family_for`): the same two on every system, Windows included.

Only the server (:class:`Listener`) and a hook that found a secret import this module: the hook's
path stays at ``socket`` and ``hmac`` (``python -X importtime``).
"""

from __future__ import annotations

import hmac
import os
import socket
import time

#: What a server says first (and the protocol's version).
MAGIC = b"MKR1"
NONCE = 32
PROOF = 32
CLIENT = b"memkeeper recall client\0"
SERVER = b"memkeeper recall server\0"
#: The length prefix of a message.
HEADER = 4
#: Unix socket paths are limited to about 104 bytes: a longer one uses a loopback port instead.
MAX_SOCKET_PATH = 100
LOOPBACK = "127.0.0.1"
#: Connections a listener keeps waiting to be accepted.
BACKLOG = 128


class NotProven(Exception):
    """The other end did not prove it knows the secret (the message says how)."""


def family_for(socket_path: str) -> str:
    """The channel's family here: ``AF_UNIX`` where there are Unix sockets and ``socket_path``
    fits one, else ``AF_INET`` (a loopback port)."""
    if hasattr(socket, "AF_UNIX") and len(socket_path.encode()) <= MAX_SOCKET_PATH:
        return "AF_UNIX"
    return "AF_INET"


def pack_fields(fields: list[bytes]) -> bytes:
    """Fields in one message: each its length (4 bytes, big-endian), then its bytes."""
    return b"".join(len(field).to_bytes(HEADER, "big") + field for field in fields)


def unpack_fields(data: bytes) -> list[bytes]:
    """The fields :func:`pack_fields` put in ``data`` (ValueError when it holds anything else)."""
    fields, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + HEADER], "big")
        end = at + HEADER + size
        if at + HEADER > len(data) or end > len(data):
            raise ValueError("a field longer than the message")
        fields.append(data[at + HEADER : end])
        at = end
    return fields


def _proof(key: bytes, side: bytes, first: bytes, second: bytes) -> bytes:
    return hmac.digest(key, side + first + second, "sha256")


class Connection:
    """One end of a channel: raw reads and writes, and length-prefixed messages, each bounded by
    ``deadline`` (``time.monotonic()``; None: no bound, only for tests and callers that own the peer)."""

    __slots__ = ("deadline", "sock")

    def __init__(self, sock: socket.socket, deadline: float | None) -> None:
        self.sock, self.deadline = sock, deadline

    def _arm(self) -> None:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the channel's deadline passed")
            self.sock.settimeout(left)

    def recv_exact(self, size: int) -> bytes:
        """Exactly ``size`` bytes (EOFError when the other end closes first)."""
        chunks, need = [], size
        while need:
            self._arm()
            chunk = self.sock.recv(min(need, 65536))
            if not chunk:
                raise EOFError("the other end closed the channel")
            chunks.append(chunk)
            need -= len(chunk)
        return b"".join(chunks)

    def send_raw(self, data: bytes) -> None:
        self._arm()
        self.sock.sendall(data)

    def send_bytes(self, data: bytes) -> None:
        """One message: its length, then its bytes."""
        self.send_raw(len(data).to_bytes(HEADER, "big") + data)

    def recv_bytes(self, maxlength: int | None = None) -> bytes:
        """One message (ValueError when it announces more than ``maxlength`` bytes: none is read)."""
        size = int.from_bytes(self.recv_exact(HEADER), "big")
        if maxlength is not None and size > maxlength:
            raise ValueError(f"a message of {size} bytes (at most {maxlength})")
        return self.recv_exact(size)

    def fileno(self) -> int:
        return self.sock.fileno()

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the client's end (the prompt hook) -----------------------------------------------------------


def connect(family: str, address: str | tuple[str, int], key: bytes, deadline: float) -> Connection:
    """A connection to the server at ``address`` that has proved it knows ``key`` (and been
    shown that this end does). NotProven when it did not; OSError, TimeoutError when it could
    not be reached by ``deadline`` (ConnectionRefusedError, FileNotFoundError: nobody listens)."""
    sock = socket.socket(getattr(socket, family), socket.SOCK_STREAM)
    conn = Connection(sock, deadline)
    try:
        conn._arm()
        sock.connect(address)
        prove_client(conn, key)
    except BaseException:
        sock.close()
        raise
    return conn


def prove_client(conn: Connection, key: bytes) -> None:
    """The client's side of the handshake (NotProven when the server does not prove itself)."""
    try:
        if conn.recv_exact(len(MAGIC)) != MAGIC:
            raise NotProven("not its protocol")
        server_nonce = conn.recv_exact(NONCE)
        nonce = os.urandom(NONCE)
        conn.send_raw(_proof(key, CLIENT, server_nonce, nonce) + nonce)
        proof = conn.recv_exact(PROOF)
    except (EOFError, ConnectionResetError, BrokenPipeError):
        raise NotProven("it closed the channel in the handshake") from None
    if not hmac.compare_digest(proof, _proof(key, SERVER, nonce, server_nonce)):
        raise NotProven("its proof is wrong")


# --- the server's end (the resident lookup) -------------------------------------------------------


def prove_server(conn: Connection, key: bytes) -> None:
    """The server's side of the handshake (NotProven when the client does not prove itself: the
    server's own proof is then never sent)."""
    nonce = os.urandom(NONCE)
    conn.send_raw(MAGIC + nonce)
    answer = conn.recv_exact(PROOF + NONCE)
    proof, client_nonce = answer[:PROOF], answer[PROOF:]
    if not hmac.compare_digest(proof, _proof(key, CLIENT, nonce, client_nonce)):
        raise NotProven("the client's proof is wrong")
    conn.send_raw(_proof(key, SERVER, client_nonce, nonce))


def peer_is_me(sock: socket.socket) -> bool:
    """The peer's user is ours, where the OS says who it is (``SO_PEERCRED`` on a Unix socket);
    elsewhere the handshake and the private runtime folder are the guard."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or sock.family != getattr(socket, "AF_UNIX", None):
        return True
    import struct

    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return bool(struct.unpack("3i", creds)[1] == os.geteuid())


class Listener:
    """The server's listening socket: at the Unix socket ``address`` (made 0600 before it listens)
    or on a loopback port (``address`` ignored; :attr:`port` is the one given)."""

    __slots__ = ("key", "path", "port", "sock")

    def __init__(self, family: str, address: str, key: bytes) -> None:
        self.key, self.path, self.port = key, "", 0
        if family == "AF_UNIX":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.bind(address)
                os.chmod(address, 0o600)  # (before it listens: no one connects meanwhile)
            except BaseException:
                sock.close()
                raise
            self.path = address
        else:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            exclusive = getattr(socket, "SO_EXCLUSIVEADDRUSE", None)  # (Windows: no one binds it too)
            try:
                if exclusive is not None:
                    sock.setsockopt(socket.SOL_SOCKET, exclusive, 1)
                sock.bind((LOOPBACK, 0))
            except BaseException:
                sock.close()
                raise
            self.port = sock.getsockname()[1]
        sock.listen(BACKLOG)
        self.sock = sock

    def accept_socket(self) -> socket.socket:
        """The next connection, not yet proved (blocks until one comes; OSError once closed)."""
        sock, _ = self.sock.accept()
        return sock

    def accept(self, deadline: float | None = None) -> Connection:
        """The next connection whose client proved itself (NotProven otherwise)."""
        sock = self.accept_socket()
        conn = Connection(sock, deadline)
        try:
            if not peer_is_me(sock):
                raise NotProven("the peer is another user")
            prove_server(conn, self.key)
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        """Stop listening (a thread blocked in :meth:`accept_socket` gets OSError) and remove the socket file."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # (wakes an accept() blocked on it, where the OS can)
        except OSError:
            pass
        self.sock.close()
        if self.path:
            try:
                os.unlink(self.path)
            except OSError:
                pass
