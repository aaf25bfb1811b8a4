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

#: The resident lookups these tests start answer within the hook's 0.3 s deadline; two such modules on
#: two workers at once starve each other's (this one and the other module of the group run on one worker).
pytestmark = pytest.mark.xdist_group("recall-deadline")

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


# --- the prompt hook's payload, put whole (the hook parses nothing when the server answers) ---------


def _boot_with_importtime(store: StorePaths, payload: dict[str, Any]) -> tuple[bytes, set[str]]:
    """The launcher as a checkout's hooks.json runs it, in the project's folder: its stdout and the
    modules it imported (``-X importtime``)."""
    from tests.memkeeper_cli import PLUGIN

    boot = [sys.executable, "-X", "importtime", "-E", "-P", "-S", str(PLUGIN / "lib" / "boot")]
    done = subprocess.run(
        [*boot, "UserPromptSubmit"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=store.project,
        env={k: v for k, v in os.environ.items() if k not in ("MEMKEEPER_PYTHON", "CLAUDE_PROJECT_DIR")},
        timeout=60,
    )
    assert done.returncode == 0
    lines = done.stderr.decode().splitlines()
    modules = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    return done.stdout, modules


def test_a_prompt_answered_by_the_resident_lookup_loads_no_json_and_no_thread(indexed: StorePaths) -> None:
    """The hook hands its payload over unparsed: json (and the re it compiles), threading: not loaded."""
    from memkeeper.core.log import progress

    # A first event folds the new store's count log (json, as in any store now and then): counted
    # after it, the prompt is one line appended (docs/hook-path.md).
    run_hook("PostToolUse", {"session_id": "warm-up", "cwd": str(indexed.project), "tool_name": "Bash"})
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    try:
        out, modules = _boot_with_importtime(
            indexed, {"session_id": SESSION, "cwd": str(indexed.project), "prompt": QUESTION}
        )
    finally:
        server.close()
    assert "exponential backoff" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert {"socket", "hmac", "memkeeper.core.recall.wire"} <= modules  # (it did talk to the server)
    assert not modules & {"json", "re", "threading"}, " ".join(sorted(modules))
    assert server.served == 1
    assert progress.read_counters(indexed)["sessions"][SESSION]["messages"] == 1


class _Silent:
    """A resident lookup of the store (its real channel and secret) that proves itself, notes every
    request, and never answers one."""

    def __init__(self, store: StorePaths) -> None:
        self.listener = recall.RecallServer._listen(recall_ask.Channel(str(store.root), create=True))
        self.requests: list[bytes] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        held = []
        self.listener.sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn = self.listener.accept(time.monotonic() + 30)
                self.requests.append(conn.recv_bytes())
                held.append(conn)
            except Exception:
                continue
        for conn in held:
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self.thread.join(timeout=10)
        self.listener.close()


def test_a_payload_that_went_out_unanswered_is_counted_once_and_never_asked_again(
    indexed: StorePaths,
) -> None:
    from memkeeper.core.log import progress

    server = _Silent(indexed)
    payload = {"session_id": SESSION, "cwd": str(indexed.project), "prompt": QUESTION}
    try:
        start = time.monotonic()
        done = run_hook("UserPromptSubmit", payload)
        elapsed = time.monotonic() - start
    finally:
        server.close()
    assert done.returncode == 0 and done.stdout == b""  # asked, not answered in time: nothing
    assert elapsed < 30
    (request,) = server.requests  # one request, and not a question asked again
    assert request.startswith(recall_ask.PAYLOAD_REQUEST)
    assert json.dumps(payload).encode() in request  # the payload as the hook read it, unparsed
    assert progress.read_counters(indexed)["sessions"][SESSION]["messages"] == 1


def test_a_payload_of_another_project_is_not_looked_up_by_this_store(
    indexed: StorePaths, tmp_path: Path
) -> None:
    """The hook runs in the indexed project but its payload's cwd is another project: the server of
    the first says so and looks nothing up, and the hook counts the prompt where the payload says."""
    from memkeeper.core.log import progress

    other = StorePaths(tmp_path / "other")
    other.project.mkdir()
    ensure_store(other)
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    payload = {"session_id": SESSION, "cwd": str(other.project), "prompt": QUESTION}
    try:
        done = subprocess.run(
            hook_command_of("UserPromptSubmit"),
            input=json.dumps(payload).encode(),
            capture_output=True,
            cwd=indexed.project,
            env={k: v for k, v in os.environ.items() if k not in ("MEMKEEPER_PYTHON", "CLAUDE_PROJECT_DIR")},
            timeout=60,
        )
    finally:
        server.close()
    assert done.returncode == 0 and done.stdout == b""  # (the other project has no index)
    assert server.served == 0
    assert progress.read_counters(other)["sessions"][SESSION]["messages"] == 1
    assert SESSION not in progress.read_counters(indexed)["sessions"]


def hook_command_of(event: str) -> list[str]:
    from tests.functional.plugin.capture_helpers import hook_command
    from tests.memkeeper_cli import PLUGIN

    return hook_command(PLUGIN, event)


def _request(project: Path, payload: bytes, started: str = "") -> bytes:
    return recall_wire.pack_fields([str(project).encode(), started.encode(), payload])


def test_the_server_reads_a_payload_as_the_hook_would(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    body = {"session_id": SESSION, "transcript_path": "/t.jsonl", "cwd": str(project), "prompt": QUESTION}
    verdict, question = recall.read_payload(_request(project, json.dumps(body).encode()))
    assert recall_wire.unpack_fields(verdict) == [SESSION.encode(), b"/t.jsonl", b"1"]
    assert question == {"session": SESSION, "prompt": QUESTION}
    # A cd into a folder of the project that CLAUDE_PROJECT_DIR names: still the project.
    moved = dict(body, cwd=str(project / "sub"))
    verdict, _ = recall.read_payload(_request(project, json.dumps(moved).encode(), str(project)))
    assert verdict
    # Another project (no CLAUDE_PROJECT_DIR to hold it): not this request's; nothing to look up.
    assert recall.read_payload(_request(project, json.dumps(moved).encode())) == (b"", None)
    # A task notification: not counted, not looked up.
    note = dict(body, prompt="<task-notification> done")
    verdict, question = recall.read_payload(_request(project, json.dumps(note).encode()))
    assert recall_wire.unpack_fields(verdict)[2] == b"" and question is None
    # Bytes that are not UTF-8: read as the hook reads its own payload (replaced), not smuggled through.
    raw = json.dumps(body).encode().replace(b"retry", b"retry \xff")
    verdict, question = recall.read_payload(_request(project, raw))
    assert question is not None and question["prompt"] == QUESTION + " \ufffd"
    # Not JSON, not an object, fields missing: the hook reads it itself.
    for broken in (b"{not json", b"[1, 2]"):
        assert recall.read_payload(_request(project, broken)) == (b"", None)
    assert recall.read_payload(recall_wire.pack_fields([b"only one"])) == (b"", None)


def test_fields_that_overrun_their_message_are_refused() -> None:
    packed = recall_wire.pack_fields([b"a", b"", b"xyz"])
    assert recall_wire.unpack_fields(packed) == [b"a", b"", b"xyz"]
    for broken in (packed[:-1], packed + b"\x00\x00", b"\x00\x00\x00\x09abc"):
        with pytest.raises(ValueError):
            recall_wire.unpack_fields(broken)


def test_a_payload_just_under_the_request_limit_is_still_answered(indexed: StorePaths) -> None:
    """The payload fits the server's limit but the request (with the project) would not: the hook
    asks the usual way, and the server answers."""
    payload: dict[str, Any] = {"session_id": SESSION, "cwd": str(indexed.project), "prompt": QUESTION}
    room = recall_ask.MAX_REQUEST - 8 - len(json.dumps(payload).encode())
    payload["prompt"] = QUESTION + " " + "x" * room
    assert recall_ask.MAX_REQUEST - 16 < len(json.dumps(payload).encode()) <= recall_ask.MAX_REQUEST
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    try:
        done = run_hook("UserPromptSubmit", payload)
    finally:
        server.close()
    assert done.returncode == 0
    assert "exponential backoff" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert server.served == 1
