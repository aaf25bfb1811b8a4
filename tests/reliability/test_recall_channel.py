"""Per-prompt recall is never a way in: the hook sends a prompt only to a resident lookup it can prove
is this user's, for this store, and never waits past one deadline."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.recall import ask as recall_ask
from memkeeper.core.recall import lookup as recall
from memkeeper.core.recall import wire as recall_wire
from memkeeper.core.search import refresh
from memkeeper.core.store.paths import StorePaths, ensure_store
from tests.memkeeper_cli import run_hook

SESSION = "3333cccc-0000-4000-8000-000000000003"
ANSWER = "The flaky S3 upload retry was fixed with exponential backoff and jitter in the uploader client."
QUESTION = "flaky S3 upload retry"


def _indexed(project: Path) -> StorePaths:
    store = StorePaths(project)
    ensure_store(store)
    line = {"ts": "2026-11-02T10:00:00Z", "role": "assistant", "text": ANSWER, "session": "earlier"}
    (store.sessions / "2026-11-02_100000_earlier0.l1.jsonl").write_text(json.dumps(line) + "\n")
    store.config.write_text(json.dumps({"recall": {"minConfidence": 0.3}}), encoding="utf-8")
    refresh(store)
    return store


@pytest.fixture
def indexed(project: Path) -> StorePaths:
    return _indexed(project)


def _hook(store: StorePaths, prompt: str = QUESTION) -> tuple[subprocess.CompletedProcess[bytes], float]:
    """The real prompt hook through its launcher; its result and how long it took."""
    payload = {"session_id": SESSION, "cwd": str(store.project), "prompt": prompt}
    start = time.monotonic()
    done = run_hook("UserPromptSubmit", payload)
    return done, time.monotonic() - start


def _log(store: StorePaths) -> str:
    path = store.logs / "memkeeper.log"
    return path.read_text() if path.exists() else ""


class _Plain:
    """A plain socket server that notes every byte it is sent (it knows no secret)."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.received = b""
        self.connections = 0
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(1.0)
                conn.sendall(b"\x00\x00\x00\x05hello")  # not a challenge the client can answer
                try:
                    while chunk := conn.recv(65536):
                        self.received += chunk
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self.thread.join(timeout=10)
        self.sock.close()


class _Impostor:
    """A server that speaks the channel's protocol with a secret that is not the one on file and
    takes any client's proof as good: the client's own check of the server's proof is all that
    stands between it and the prompt. Notes every byte sent after its proof (``received``)."""

    def __init__(self, path: str) -> None:
        self.listener = recall_wire.Listener("AF_UNIX", path, os.urandom(32))
        self.received = b""
        self.proved = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            with recall_wire.Connection(self.listener.accept_socket(), time.monotonic() + 30) as conn:
                nonce = os.urandom(recall_wire.NONCE)
                conn.send_raw(recall_wire.MAGIC + nonce)
                answer = conn.recv_exact(recall_wire.PROOF + recall_wire.NONCE)  # not checked
                conn.send_raw(recall_wire._proof(self.listener.key, recall_wire.SERVER, answer[32:], nonce))
                self.proved.set()
                while chunk := conn.sock.recv(65536):
                    self.received += chunk
        except Exception:
            pass

    def close(self) -> None:
        self.listener.close()
        self.thread.join(timeout=30)


def test_a_planted_link_in_the_project_to_a_listening_socket_gets_nothing(
    indexed: StorePaths, tmp_path: Path
) -> None:
    """The attack of a cloned repository: ``.state/recall/x.sock`` links to someone's listening socket."""
    outside = _Plain(str(tmp_path / "evil.sock"))
    folder = indexed.state / recall_ask.RECALL_DIR
    folder.mkdir(exist_ok=True)
    (folder / "x.sock").symlink_to(tmp_path / "evil.sock")
    try:
        done, _ = _hook(indexed)
    finally:
        outside.close()
    assert done.returncode == 0
    assert outside.connections == 0 and outside.received == b""  # never connected, nothing sent
    assert b"evil" not in done.stdout and b"hello" not in done.stdout


def test_a_link_at_the_channel_itself_is_refused(indexed: StorePaths, tmp_path: Path) -> None:
    """Even in the user's runtime folder: a link where the socket should be is not followed."""
    channel = recall_ask.Channel(str(indexed.root), create=True)
    outside = _Plain(str(tmp_path / "evil.sock"))
    Path(channel.key_file).write_bytes(channel.secret_text(os.urandom(32), "AF_UNIX", 0))
    os.chmod(channel.key_file, 0o600)
    os.symlink(tmp_path / "evil.sock", channel.socket_file)
    try:
        done, _ = _hook(indexed)
    finally:
        outside.close()
    assert done.returncode == 0
    assert outside.connections == 0 and outside.received == b""
    assert "exponential backoff" in done.stdout.decode()  # answered from the index by the hook itself
    assert _log(indexed).count("nothing sent to the resident lookup") == 1


@pytest.mark.parametrize("kind", ["plain socket", "wrong key", "wrong key, takes any proof"])
def test_a_listener_that_cannot_prove_itself_gets_no_prompt(indexed: StorePaths, kind: str) -> None:
    channel = recall_ask.Channel(str(indexed.root), create=True)
    assert channel.family == "AF_UNIX"
    Path(channel.key_file).write_bytes(channel.secret_text(os.urandom(32), "AF_UNIX", 0))
    os.chmod(channel.key_file, 0o600)
    received: list[bytes] = []
    if kind == "plain socket":
        server: Any = _Plain(channel.socket_file)
        os.chmod(channel.socket_file, 0o600)
    elif kind == "wrong key, takes any proof":
        server = _Impostor(channel.socket_file)
    else:
        listener = recall_wire.Listener("AF_UNIX", channel.socket_file, os.urandom(32))  # not the key on file

        def serve() -> None:
            try:
                with listener.accept() as conn:
                    received.append(conn.recv_bytes())
            except Exception:
                pass

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
    try:
        done, _ = _hook(indexed)
    finally:
        if kind != "wrong key":
            server.close()
            received.append(server.received)
        else:
            listener.close()
            thread.join(timeout=10)
    assert done.returncode == 0
    assert not any(b"S3" in data for data in received)  # the prompt never went out
    assert b"hello" not in done.stdout
    if kind == "wrong key, takes any proof":
        assert server.proved.is_set() and server.received == b""  # its proof was checked, and refused
    assert "exponential backoff" in done.stdout.decode()  # the hook looked up itself
    assert (
        _log(indexed).count("nothing sent to the resident lookup: the resident lookup did not prove itself")
        == 1
    )


@pytest.mark.parametrize("flaw", ["key readable by others", "key owned by another user", "key is a link"])
def test_a_secret_that_is_not_private_is_not_used(indexed: StorePaths, tmp_path: Path, flaw: str) -> None:
    server = recall.RecallServer(indexed)
    assert server.start(warm=False)
    key = Path(server.path)
    try:
        if flaw == "key readable by others":
            os.chmod(key, 0o644)
        elif flaw == "key owned by another user":
            if os.geteuid() != 0:
                pytest.skip("changing a file's owner needs root")
            os.chown(key, 12345, 12345)
        else:
            copy = tmp_path / "copied.key"
            copy.write_bytes(key.read_bytes())
            os.chmod(copy, 0o600)
            key.unlink()
            key.symlink_to(copy)
        done, _ = _hook(indexed)
    finally:
        server.close()
    assert done.returncode == 0
    assert server.served == 0  # nothing sent
    assert "exponential backoff" in done.stdout.decode()
    assert _log(indexed).count("nothing sent to the resident lookup") == 1


def test_a_trickling_server_does_not_hold_the_prompt(
    indexed: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that passes the handshake (it has the key) and then sends one byte every 0.25 s."""
    listener = recall.RecallServer._listen(recall_ask.Channel(str(indexed.root), create=True))
    stop = threading.Event()

    def trickle() -> None:
        with listener.accept() as conn:
            conn.recv_bytes()
            os.write(conn.fileno(), b"\x00\x00\x01\x00")  # a reply of 256 bytes, announced
            while not stop.is_set():
                try:
                    os.write(conn.fileno(), b"x")
                except OSError:
                    return
                time.sleep(0.25)

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        done, elapsed = _hook(indexed)
    finally:
        stop.set()
        listener.close()
    with capsys.disabled():
        print(f"\n[trickling server] the prompt hook returned in {elapsed:.3f} s")
    assert done.returncode == 0 and done.stdout == b""  # too late: silent, never looked up twice
    assert elapsed < 3  # did not wait for the trickle (256 bytes would take 64 s)


def test_the_proof_is_mutual_a_wrong_secret_is_refused_at_either_end(indexed: StorePaths) -> None:
    """A client without the secret gets neither the server's proof nor an answer; a server without it
    gets no question (the client checks the server's proof before it sends a byte of the prompt)."""
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    key, family, address = recall_ask.Channel(str(indexed.root)).secret()
    question = json.dumps({"session": SESSION, "prompt": QUESTION}).encode()
    deadline = time.monotonic() + 30
    try:
        # The client end with a wrong secret: refused, before the server proves anything.
        with pytest.raises(recall_wire.NotProven, match="closed the channel"):
            recall_wire.connect(family, address, os.urandom(32), deadline)
        # The same by hand, sending its question regardless: it gets the challenge and nothing else.
        with recall_wire.Connection(socket.socket(socket.AF_UNIX), deadline) as conn:
            conn.sock.connect(address)
            hello = conn.recv_exact(len(recall_wire.MAGIC) + recall_wire.NONCE)
            assert hello.startswith(recall_wire.MAGIC)
            try:
                conn.send_raw(os.urandom(recall_wire.PROOF + recall_wire.NONCE))
                conn.send_bytes(question)
            except OSError:  # (the server may have closed it already)
                pass
            conn._arm()
            try:
                rest = conn.sock.recv(65536)
            except ConnectionResetError:  # (closed with the question unread)
                rest = b""
            assert rest == b""  # closed: no proof, no answer
        # The right secret is answered.
        with recall_wire.connect(family, address, key, deadline) as conn:
            conn.send_bytes(question)
            assert b"exponential backoff" in conn.recv_bytes(recall_ask.MAX_REPLY)
    finally:
        server.close()
    assert server.served == 1  # the wrong secrets were never looked up for
    # The server end with a wrong secret (one that takes any proof, to reach the client's check).
    impostor = _Impostor(recall_ask.Channel(str(indexed.root)).socket_file)
    try:
        with pytest.raises(recall_wire.NotProven, match="its proof is wrong"):
            recall_wire.connect(family, address, key, time.monotonic() + 30)
    finally:
        impostor.close()
    assert impostor.proved.is_set() and impostor.received == b""  # no question went out


def test_peers_that_connect_and_say_nothing_do_not_hold_the_server(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Connections that never answer the challenge (held longer than this test waits) while a
    real client is answered: each connection is served on its own."""
    monkeypatch.setattr(recall, "READ_TIMEOUT", 120.0)  # (the silent peers are not dropped meanwhile)
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    address = recall_ask.Channel(str(indexed.root)).socket_file
    silent = [socket.socket(socket.AF_UNIX) for _ in range(3)]
    question = json.dumps({"session": SESSION, "prompt": QUESTION}).encode()
    try:
        for peer in silent:
            peer.connect(address)
        start = time.monotonic()
        answer = recall_ask.ask_resident(str(indexed.root), question, timeout=60)
        elapsed = time.monotonic() - start
        done, _ = _hook(indexed, f"{QUESTION} again")  # the real hook, within its own deadline
    finally:
        for peer in silent:
            peer.close()
        server.close()
    assert answer is not None and "exponential backoff" in answer
    assert elapsed < 60
    assert done.returncode == 0 and server.served == 2  # both answered by the server


def test_a_hundred_parallel_prompts_of_one_session_count_exactly_a_hundred(indexed: StorePaths) -> None:
    from memkeeper.core.log import progress

    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    try:
        with ThreadPoolExecutor(max_workers=100) as pool:
            results = list(pool.map(lambda i: _hook(indexed, f"{QUESTION} number {i}")[0], range(100)))
    finally:
        server.close()
    assert all(done.returncode == 0 for done in results)
    assert progress.read_counters(indexed)["sessions"][SESSION]["messages"] == 100


@pytest.mark.parametrize("unix_sockets", [True, False], ids=["unix sockets", "no AF_UNIX"])
def test_recall_answers_in_a_project_path_of_200_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unix_sockets: bool
) -> None:
    project = tmp_path / "p"
    while len(str(project)) < 200:
        project = project / "deeper-folder-name"
    project = Path(str(project)[:200].rstrip("/"))
    project.mkdir(parents=True)
    assert len(str(project)) == 200
    short = tempfile.mkdtemp(prefix="mk")  # (a runtime folder as short as a real one: pytest's are long)
    os.chmod(short, 0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", short)
    store = _indexed(project)
    if not unix_sockets:
        monkeypatch.delattr(socket, "AF_UNIX")  # the server's side; the hook's below
    server = recall.RecallServer(store)
    server.warm()
    assert server.start(warm=False)
    assert recall_ask.Channel(str(store.root)).family == ("AF_UNIX" if unix_sockets else "AF_INET")
    code = (
        "import socket, sys\n"
        + ("" if unix_sockets else "del socket.AF_UNIX\n")
        + "from memkeeper.plugin import hook\nhook.main(['UserPromptSubmit'])\nsys.stdout.flush()\n"
    )
    import memkeeper

    answered: list[str] = []
    try:
        for attempt in range(3):  # (the one deadline is short; a machine loaded by others may miss it once)
            payload = {"session_id": f"{SESSION}-{attempt}", "cwd": str(project), "prompt": QUESTION}
            done = subprocess.run(
                [sys.executable, "-P", "-S", "-c", code],
                input=json.dumps(payload).encode(),
                capture_output=True,
                env=dict(os.environ, PYTHONPATH=str(Path(memkeeper.__file__).parent.parent)),
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
            if done.stdout:
                answered.append(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])
                break
    finally:
        server.close()
        shutil.rmtree(short, ignore_errors=True)
    assert answered and "exponential backoff" in answered[0]
    assert server.served >= 1  # the resident lookup answered
