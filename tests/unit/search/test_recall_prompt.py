"""Per-prompt recall: the right earlier memory for a typed prompt, silent otherwise, never twice, never blocking."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core import recall, recall_ask
from memkeeper.core.search import refresh
from memkeeper.core.session_context import build_context
from memkeeper.core.settings import DEFAULT_RECALL_CONFIDENCE, hook_settings
from memkeeper.core.store import StorePaths

EARLIER = "1111aaaa-0000-4000-8000-000000000001"
OTHER = "2222bbbb-0000-4000-8000-000000000002"
CURRENT = "3333cccc-0000-4000-8000-000000000003"
ANSWER = "The flaky S3 upload retry was fixed with exponential backoff and jitter in the uploader client."
#: Keywords as a typed prompt may hold them (the exact and the ranked search both find these).
QUESTION = "flaky S3 upload retry"
MEMORY_FACT = "Staging deploys go through the blue green switch on the load balancer, never in place."


def _l1(store: StorePaths, name: str, session: str, entries: list[tuple[str, str]]) -> None:
    lines = [
        json.dumps(
            {"ts": f"2026-11-0{1 + i % 8}T10:{i:02d}:00Z", "role": role, "text": text, "session": session}
        )
        for i, (role, text) in enumerate(entries)
    ]
    (store.sessions / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def indexed(store: StorePaths) -> StorePaths:
    """Two earlier sessions, memory.md, and the current session's own L1 file; the index built."""
    store.memory.write_text(
        f"# Project memory\n\n## 2026-11-01_0900 (local 11-01_1800)\n- [deploy]: {MEMORY_FACT}\n"
        "- [style]: Commit messages are written in English.\n",
        encoding="utf-8",
    )
    _l1(
        store,
        f"2026-11-02_100000_{EARLIER[:8]}.l1.jsonl",
        EARLIER,
        [
            ("user", "the S3 uploads keep failing at random, can you look?"),
            ("assistant", ANSWER),
            ("user", "thanks, commit it"),
        ],
    )
    _l1(
        store,
        f"2026-11-03_100000_{OTHER[:8]}.l1.jsonl",
        OTHER,
        [("user", "rename the settings page"), ("assistant", "The settings page is now called Preferences.")],
    )
    _l1(
        store,
        f"2026-11-04_100000_{CURRENT[:8]}.l1.jsonl",
        CURRENT,
        [("user", "why do S3 uploads fail with the uploader client retry?"), ("assistant", "Looking at it.")],
    )
    refresh(store)
    return store


def _ask(store: StorePaths, prompt: str, session: str = CURRENT, confidence: float = 0.5) -> str:
    return recall.recall_context(str(store.project), session, prompt, confidence)


def test_the_right_earlier_memory_is_injected(indexed: StorePaths) -> None:
    text = _ask(indexed, QUESTION)
    assert text.startswith(recall.HEADER) and len(text) <= recall.MAX_CHARS
    lines = text.splitlines()[1:]
    assert 1 <= len(lines) <= recall.MAX_HITS
    assert "exponential backoff" in lines[0] and lines[0].startswith("- l1-")
    assert '"the S3 uploads keep failing at random, can you look?"' in lines[0]  # the session's title
    assert CURRENT[:8] not in text and "Looking at it" not in text  # never this session's own entries


def test_a_question_in_plain_words_finds_it_at_the_default_confidence(indexed: StorePaths) -> None:
    text = _ask(indexed, "how did we fix the flaky S3 upload retry?", confidence=0.92)
    assert "exponential backoff" in text, text
    assert (
        _ask(indexed, "what do staging deploys go through?", session=OTHER, confidence=0.92).count("- ") >= 1
    )


def test_an_unrelated_prompt_gets_nothing(indexed: StorePaths) -> None:
    assert _ask(indexed, "write a haiku about autumn leaves falling") == ""
    assert _ask(indexed, "/compact keep the upload retry") == ""  # a slash command is not looked up
    assert _ask(indexed, "ok") == ""
    # Nothing found: the session's recall state (and its lock) is not even created.
    assert not list((indexed.state / recall_ask.RECALL_DIR).glob(f"{CURRENT}.*"))
    assert "exponential backoff" in _ask(indexed, QUESTION)
    assert {p.suffix for p in (indexed.state / recall_ask.RECALL_DIR).glob(f"{CURRENT}.*")} == {
        ".json",
        ".lock",
    }


def test_a_hit_is_never_injected_twice_in_a_session(indexed: StorePaths) -> None:
    first = _ask(indexed, QUESTION)
    assert "exponential backoff" in first
    again = _ask(indexed, "S3 upload retry flaky")
    assert "exponential backoff" not in again
    other_session = _ask(indexed, QUESTION, session=OTHER)
    assert "exponential backoff" in other_session  # per session, not per store


def test_what_the_start_context_holds_is_not_injected_again(indexed: StorePaths) -> None:
    question = "staging deploys blue green switch"
    assert MEMORY_FACT[:40] in _ask(indexed, question, session=OTHER)
    start = build_context(indexed, "startup", session_id=CURRENT)  # what SessionStart gave this session
    assert MEMORY_FACT in start
    recall.note_session_start(indexed, CURRENT, start)
    assert MEMORY_FACT[:40] not in _ask(indexed, question)


def test_memory_flushed_during_this_session_is_not_recalled(indexed: StorePaths) -> None:
    recall.note_session_start(indexed, CURRENT, "")
    with open(indexed.memory, "a", encoding="utf-8") as handle:  # this session's own flush
        handle.write(
            "\n## 2026-11-04_1100\n- [cache]: The tile cache moved to redis with a one hour expiry.\n"
        )
    refresh(indexed)
    assert "tile cache" not in _ask(indexed, "tile cache redis expiry")
    assert "tile cache" in _ask(indexed, "tile cache redis expiry", session=OTHER)


def test_the_threshold_and_the_switch_come_from_config(indexed: StorePaths) -> None:
    assert hook_settings(indexed).recall_enabled is True
    assert hook_settings(indexed).recall_min_confidence == DEFAULT_RECALL_CONFIDENCE
    indexed.config.write_text(
        json.dumps({"recall": {"enabled": False, "minConfidence": 0.5}}), encoding="utf-8"
    )
    settings = hook_settings(indexed)
    assert settings.recall_enabled is False and settings.recall_min_confidence == 0.5
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 7}}), encoding="utf-8")
    assert (
        hook_settings(indexed).recall_min_confidence == DEFAULT_RECALL_CONFIDENCE
    )  # out of range: the default
    assert _ask(indexed, QUESTION, confidence=1.01) == ""


# --- never blocking ---------------------------------------------------------------------------


def test_a_missing_index_is_skipped(store: StorePaths) -> None:
    _l1(store, f"2026-11-02_100000_{EARLIER[:8]}.l1.jsonl", EARLIER, [("assistant", ANSWER)])
    assert _ask(store, QUESTION) == ""
    assert not store.search_db.exists()  # nothing built on the hook path


def test_a_corrupt_index_is_skipped_and_left_alone(indexed: StorePaths) -> None:
    for suffix in ("-wal", "-shm"):
        Path(f"{indexed.search_db}{suffix}").unlink(missing_ok=True)
    indexed.search_db.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    before = indexed.search_db.read_bytes()
    assert _ask(indexed, QUESTION) == ""
    assert indexed.search_db.read_bytes() == before  # read-only: not repaired, not moved aside


HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode=EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("INSERT INTO meta(key, value) VALUES('held', '1')")
print("held", flush=True)
sys.stdin.read()
"""


def test_an_index_locked_by_another_process_is_skipped(indexed: StorePaths) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-P", "-c", HOLDER, str(indexed.search_db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert _ask(indexed, QUESTION) == ""
    finally:
        holder.communicate("", timeout=30)
    assert "exponential backoff" in _ask(indexed, QUESTION)


def test_a_busy_session_state_is_skipped(indexed: StorePaths) -> None:
    from memkeeper.core.lock import file_lock

    state_dir = indexed.state / recall_ask.RECALL_DIR
    state_dir.mkdir(exist_ok=True)
    with file_lock(state_dir / f"{CURRENT}.lock", timeout=1):
        assert _ask(indexed, QUESTION) == ""


def _hook(store: StorePaths, event: str, session: str = CURRENT, **fields: str) -> str:
    payload = {"session_id": session, "cwd": str(store.project), "hook_event_name": event, **fields}
    launcher = Path(__file__).resolve().parents[3] / "plugin" / "bin" / "memkeeper-hook"
    proc = subprocess.run(
        ["/bin/sh", str(launcher), event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        # as Claude Code runs it from a checkout or an install: Python with -S (no site scan)
        env={k: v for k, v in os.environ.items() if k != "MEMKEEPER_PYTHON"},
        timeout=60,
    )
    assert proc.returncode == 0
    return proc.stdout.decode()


def test_the_hook_injects_it_as_additional_context(indexed: StorePaths) -> None:
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
    start = json.loads(_hook(indexed, "SessionStart", source="startup"))["hookSpecificOutput"][
        "additionalContext"
    ]
    assert MEMORY_FACT in start
    assert _hook(indexed, "UserPromptSubmit", prompt="staging deploys blue green switch") == ""  # it has it
    out = _hook(indexed, "UserPromptSubmit", prompt=QUESTION)
    context = json.loads(out)["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit"
    assert "exponential backoff" in context["additionalContext"]
    assert len(context["additionalContext"]) <= recall.MAX_CHARS
    assert _hook(indexed, "UserPromptSubmit", prompt=QUESTION) == ""  # never twice
    indexed.config.write_text(
        json.dumps({"recall": {"enabled": False, "minConfidence": 0.5}}), encoding="utf-8"
    )
    assert _hook(indexed, "UserPromptSubmit", session="new-session", prompt=QUESTION) == ""
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
    assert "exponential backoff" in _hook(indexed, "UserPromptSubmit", session="new-session", prompt=QUESTION)


# --- the resident lookup (the MCP server's) ---------------------------------------------------


def test_a_resident_server_answers_the_hook(indexed: StorePaths) -> None:
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
    server = recall.RecallServer(indexed)
    server.warm()  # the engine loaded and the index open before it listens (as the recall job does)
    assert server.start(warm=False)
    try:
        assert oct(os.stat(server.path).st_mode & 0o777) == "0o600"
        out = _hook(indexed, "UserPromptSubmit", prompt=QUESTION)
        assert "exponential backoff" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert server.served == 1  # answered by the server, not looked up in the hook
        assert _hook(indexed, "UserPromptSubmit", prompt=QUESTION) == ""  # the same state: never twice
        assert server.served == 2
    finally:
        server.close()
    assert not os.path.exists(server.path)


def test_a_long_pasted_prompt_is_answered_by_the_resident_server(indexed: StorePaths) -> None:
    """Only the start of the prompt goes out, so a pasted log far over the server's request limit is still answered there."""
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    log = "2026-11-04 10:00:00 INFO worker heartbeat ok\n" * 5000  # (past the part that is looked up)
    pasted = QUESTION + "\n" * recall_ask.QUERY_CHARS + log
    assert len(pasted.encode()) > recall.MAX_REQUEST
    try:
        out = _hook(indexed, "UserPromptSubmit", prompt=pasted)
        assert "exponential backoff" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert server.served == 1  # answered by the server, not looked up in the hook
    finally:
        server.close()


def _listening(
    store: StorePaths, name: str = f"1{recall_ask.SOCKET_SUFFIX}", backlog: int = 1
) -> socket.socket:
    """A socket listening where the hook looks for a resident lookup (``name`` in the recall folder)."""
    folder = store.state / recall_ask.RECALL_DIR
    folder.mkdir(exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    recall_ask.at(str(folder), name, listener.bind)  # (pytest's temporary paths are long for a socket)
    listener.listen(backlog)
    return listener


class _OneAnswer:
    """A resident lookup that takes one question, notes it (``received``, ``asked``) and sends ``reply``."""

    def __init__(self, store: StorePaths, reply: bytes) -> None:
        self.listener = _listening(store)
        self.reply = reply
        self.asked = threading.Event()
        self.received: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._serve)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            conn.settimeout(60)
            self.received.append(json.loads(recall_ask.read_all(conn)))
            self.asked.set()
            conn.sendall(self.reply)

    def stdout_of(self, run: Callable[[], object]) -> str:
        """What ``run`` writes to stdout (as the hook does, through a text wrapper), once served."""
        out = io.BytesIO()
        stdout = io.TextIOWrapper(out)  # (kept: collecting it would close ``out``)
        try:
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(sys, "stdout", stdout)
                run()
            self.thread.join(timeout=60)
        finally:
            self.listener.close()
        return out.getvalue().decode()


def test_the_prompt_hook_asks_the_resident_lookup_before_it_counts(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question goes out first, so the server looks up while the hook counts the prompt."""
    from memkeeper.core import counters
    from memkeeper.plugin import hook

    server = _OneAnswer(indexed, b"=[memkeeper] from the resident lookup")
    bump = counters.bump_at
    asked_when_counted: list[bool] = []

    def counting(*args: Any, **kwargs: Any) -> counters.Counts | None:
        asked_when_counted.append(server.asked.wait(timeout=60))  # never set if the count came first
        return bump(*args, **kwargs)

    monkeypatch.setattr(counters, "bump_at", counting)
    written = server.stdout_of(
        lambda: hook.on_prompt(hook.Call({"session_id": CURRENT, "prompt": QUESTION}, str(indexed.project)))
    )
    assert [question["prompt"] for question in server.received] == [QUESTION]
    assert asked_when_counted == [True]  # the server had the question before the prompt was counted
    assert counters.read_counters(indexed)["sessions"][CURRENT]["messages"] == 1
    assert "from the resident lookup" in written


def test_the_hook_puts_the_question_before_it_finishes_interrupted_work_or_counts(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the hook's own entry point: the question is out before the rest of the hook runs."""
    from memkeeper.core import counters
    from memkeeper.plugin import hook

    server = _OneAnswer(indexed, b"=[memkeeper] answered")
    steps: list[tuple[str, bool]] = []
    finish, bump = hook._finish_interrupted, counters.bump_at

    def finishing(call: hook.Call) -> None:
        steps.append(("finish", server.asked.wait(timeout=10)))  # (never set if the question came later)
        finish(call)

    def counting(*args: Any, **kwargs: Any) -> counters.Counts | None:
        steps.append(("count", server.asked.is_set()))
        return bump(*args, **kwargs)

    monkeypatch.setattr(hook, "_finish_interrupted", finishing)
    monkeypatch.setattr(counters, "bump_at", counting)
    payload = {"session_id": CURRENT, "cwd": str(indexed.project), "prompt": QUESTION}
    monkeypatch.setattr(hook, "read_stdin", lambda: json.dumps(payload).encode())
    codes: list[int] = []
    written = server.stdout_of(lambda: codes.append(hook.main(["UserPromptSubmit"])))
    assert codes == [0]
    (question,) = server.received
    assert {k: question[k] for k in ("session", "prompt")} == {"session": CURRENT, "prompt": QUESTION}
    assert "min" not in question and isinstance(question["count"], str)  # the server reads the config
    assert steps == [("finish", True), ("count", True)]  # (an old server's "=": the hook counts)
    assert counters.read_counters(indexed)["sessions"][CURRENT]["messages"] == 1
    context = json.loads(written)["hookSpecificOutput"]["additionalContext"]
    assert context == "[memkeeper] answered"


def test_a_hung_server_leaves_the_hook_counting_and_silent(indexed: StorePaths) -> None:
    """A resident lookup that takes the question and never answers: the real hook returns within its bound."""

    from memkeeper.core import counters

    listener = _listening(
        indexed, backlog=4
    )  # connections wait in the backlog: the question is taken, never answered
    try:
        start = time.monotonic()
        assert _hook(indexed, "UserPromptSubmit", prompt=QUESTION) == ""
        assert time.monotonic() - start < 30  # (bounded: ASK_TIMEOUT per step; the deadline is generous)
    finally:
        listener.close()
    assert counters.read_counters(indexed)["sessions"][CURRENT]["messages"] == 1
    # A live (slow) server's socket is kept.
    assert os.path.exists(indexed.state / recall_ask.RECALL_DIR / f"1{recall_ask.SOCKET_SUFFIX}")


# --- the resident lookup counts the prompt ---------------------------------------------------


def _messages(store: StorePaths, session: str = CURRENT) -> int:
    from memkeeper.core import counters

    entry = counters.read_counters(store)["sessions"].get(session) or {}
    return int(entry.get("messages", 0))


COUNTING_MODULES = ("memkeeper.core.counters", "memkeeper.core.activity", "memkeeper.core.settings")


def _hook_loading(store: StorePaths, prompt: str, modules: tuple[str, ...]) -> tuple[str, list[str]]:
    """The prompt hook run as the launcher runs it (-S, its own process): its output, and which of ``modules`` it loaded."""
    import memkeeper

    code = (
        "import sys; from memkeeper.plugin import hook; hook.main(['UserPromptSubmit']); sys.stdout.flush();"
        f"print(','.join(m for m in {modules!r} if m in sys.modules), file=sys.stderr)"
    )
    payload = {"session_id": CURRENT, "cwd": str(store.project), "prompt": prompt}
    done = subprocess.run(
        [sys.executable, "-P", "-S", "-c", code],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=dict(os.environ, PYTHONPATH=str(Path(memkeeper.__file__).parent.parent)),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    loaded = done.stderr.decode().strip().splitlines()[-1:]
    return done.stdout.decode(), [m for m in (loaded[0].split(",") if loaded else []) if m]


def test_the_resident_server_counts_the_prompt_and_the_hook_does_not(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real hook (its own process) asks a resident lookup, which counts the prompt: once, by the server."""
    from memkeeper.core import counters

    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
    bump = counters.bump_at
    by_server: list[str | None] = []

    def counting(*args: Any, **kwargs: Any) -> counters.Counts | None:
        by_server.append(kwargs.get("token"))
        return bump(*args, **kwargs)

    monkeypatch.setattr(counters, "bump_at", counting)  # (the server runs in this process, the hook not)
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    try:
        out, loaded = _hook_loading(indexed, QUESTION, COUNTING_MODULES)
        assert "exponential backoff" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert _messages(indexed) == 1
        assert len(by_server) == 1 and by_server[0]  # counted by the server, with the hook's token
        assert loaded == []  # the hook itself loaded no counting code
        assert _hook(indexed, "UserPromptSubmit", prompt="write a haiku about autumn leaves") == ""
        assert _messages(indexed) == 2 and len(by_server) == 2  # nothing to inject: counted all the same
        assert _hook(indexed, "UserPromptSubmit", prompt="/compact") == ""  # nothing to ask: the hook counts
        assert _messages(indexed) == 3 and len(by_server) == 2
    finally:
        server.close()


def test_the_warm_up_loads_what_the_first_answer_needs(indexed: StorePaths) -> None:
    """A resident lookup's first answer imports nothing more (it cost the first prompt about 60 ms)."""
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
    code = """
import json, sys, time
from pathlib import Path
from memkeeper.core import recall, recall_ask
from memkeeper.core.store import StorePaths
store = StorePaths(Path(sys.argv[1]))
server = recall.RecallServer(store)
server.warm()
assert server.start(warm=False)
before = set(sys.modules)
question = {"session": sys.argv[2], "prompt": sys.argv[3], "count": "0f0f0f0f", "at": time.monotonic()}
sock = recall_ask.send(str(store.root), json.dumps(question).encode(), timeout=30)
reply = recall_ask.read_all(sock)
server.close()
print(reply[:1].decode(), b"exponential backoff" in reply, sorted(set(sys.modules) - before))
"""
    done = subprocess.run(
        [sys.executable, "-P", "-c", code, str(indexed.project), CURRENT, QUESTION],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["+", "True", "[]"]  # counted and answered, with nothing more loaded


def test_a_server_counts_but_injects_nothing_while_the_config_turns_recall_off(indexed: StorePaths) -> None:
    indexed.config.write_text(
        json.dumps({"recall": {"enabled": False, "minConfidence": 0.5}}), encoding="utf-8"
    )
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    try:
        assert _hook(indexed, "UserPromptSubmit", prompt=QUESTION) == ""
        assert server.served == 1 and _messages(indexed) == 1
        indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
        assert "exponential backoff" in _hook(indexed, "UserPromptSubmit", prompt=QUESTION)  # the new config
        assert server.served == 2 and _messages(indexed) == 2
    finally:
        server.close()


def test_a_count_the_server_makes_due_starts_the_flush(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server does what the hook's count would have done: the flush job, once the hook has its answer."""
    from memkeeper.core import jobs

    started: list[tuple[str, dict[str, Any] | None]] = []
    monkeypatch.setattr(jobs, "start_job", lambda _paths, kind, options=None: started.append((kind, options)))
    indexed.config.write_text(json.dumps({"memory": {"flushEvery": 2}}), encoding="utf-8")
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    try:
        for _ in range(2):
            _hook(indexed, "UserPromptSubmit", prompt=QUESTION, transcript_path="/tmp/t.jsonl")
        deadline = time.monotonic() + 30
        while not started and time.monotonic() < deadline:  # (started after the reply)
            time.sleep(0.01)
    finally:
        server.close()
    assert started == [
        ("flush", {"reason": "count", "session_id": CURRENT, "transcript_path": "/tmp/t.jsonl"})
    ]
    assert _messages(indexed) == 2


class _CountsThenFails:
    """A resident lookup that counts the question's prompt (as a new server does) and then loses the reply.

    ``first``: "server" counts before the hook gives up; "hook": waits until the hook has counted
    (its reply lost or late), then counts; either way with the token the question carried.
    """

    def __init__(self, store: StorePaths, first: str) -> None:
        self.store, self.first = store, first
        self.listener = _listening(store)
        self.tokens: list[str] = []
        self.thread = threading.Thread(target=self._serve)
        self.thread.start()

    def _serve(self) -> None:
        from memkeeper.core import counters

        conn, _ = self.listener.accept()
        question = json.loads(recall_ask.read_all(conn))
        self.tokens.append(question["count"])
        if self.first == "server":
            counters.bump_at(str(self.store.state), question["session"], messages=1, token=question["count"])
            conn.close()  # the reply is lost
            return
        deadline = time.monotonic() + 60
        while _messages(self.store) == 0 and time.monotonic() < deadline:
            time.sleep(0.01)  # the hook, whose question was never answered, counts meanwhile
        conn.close()
        counters.bump_at(str(self.store.state), question["session"], messages=1, token=question["count"])

    def close(self) -> None:
        self.thread.join(timeout=60)
        self.listener.close()


@pytest.mark.parametrize("first", ["server", "hook"])
def test_a_prompt_whose_reply_is_lost_is_counted_exactly_once(indexed: StorePaths, first: str) -> None:
    server = _CountsThenFails(indexed, first)
    try:
        _hook(
            indexed, "UserPromptSubmit", prompt=QUESTION
        )  # (no reply: it looks up itself, or a late one: "")
    finally:
        server.close()
    assert len(server.tokens) == 1
    assert _messages(indexed) == 1  # the server and the hook both counted it, under the same token
    assert server.tokens[0] in counters_tokens(indexed)


def counters_tokens(store: StorePaths) -> list[str]:
    from memkeeper.core import counters

    return list(counters.read_counters(store)["sessions"][CURRENT]["tokens"])


def test_a_question_asked_too_long_ago_is_not_counted_by_the_server(indexed: StorePaths) -> None:
    """Its hook may have given up waiting and counted it already: the server leaves the count to the hook."""
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    try:
        late = {"session": CURRENT, "prompt": QUESTION, "count": "0a0b0c0d", "at": time.monotonic() - 5}
        fresh = dict(late, count="1a1b1c1d", at=time.monotonic())
        for question, mark in ((late, recall_ask.ANSWER), (fresh, recall_ask.COUNTED)):
            sock = recall_ask.send(str(indexed.root), json.dumps(question).encode(), timeout=30)
            data = recall_ask.read_all(sock)
            sock.close()
            assert data[:1] == mark
    finally:
        server.close()
    assert _messages(indexed) == 1 and counters_tokens(indexed) == ["1a1b1c1d"]


def test_a_stale_socket_is_removed_and_the_hook_looks_up_itself(indexed: StorePaths) -> None:
    stale = indexed.state / recall_ask.RECALL_DIR / f"999999{recall_ask.SOCKET_SUFFIX}"
    _listening(indexed, stale.name).close()  # the file stays, nobody listens: a killed server's socket
    assert "exponential backoff" in _ask(indexed, QUESTION)
    assert not stale.exists()


def test_a_server_that_does_not_answer_never_blocks_the_prompt(indexed: StorePaths) -> None:
    listener = _listening(indexed)  # accepts connections (the backlog) but never answers
    try:
        assert recall_ask.ask_resident(str(indexed.root), b"{}", timeout=0.2) == ""
        assert _ask(indexed, QUESTION) == ""
    finally:
        listener.close()


# --- the confident lookup ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "prompt",
    [
        QUESTION,
        "how did we fix the flaky S3 upload retry?",
        "what do staging deploys go through?",
        "rename the settings page to Preferences",
        "write a haiku about autumn leaves falling",
        "S3",
    ],
)
@pytest.mark.parametrize("confidence", [0.5, 0.92])
def test_the_confident_lookup_finds_what_the_full_ranking_finds(
    indexed: StorePaths, prompt: str, confidence: float
) -> None:
    """Per-prompt recall asks only for the rows a confident hit needs: the same confident hits as the full search."""
    from memkeeper.core.search.engine import search_confident, search_readonly

    full = search_readonly(indexed, prompt, limit=100)
    assert full is not None
    want = sorted((h.id, h.confidence) for h in full.hits if h.confidence >= confidence)
    got = search_confident(indexed, prompt, confidence, limit=100)
    assert got is not None
    assert sorted((h.id, h.confidence) for h in got) == want
    if prompt == QUESTION:
        assert want  # the comparison is not between two empty lists


def test_a_confident_lookup_reads_the_index_generation_once(indexed: StorePaths) -> None:
    """Its vocabulary lookups are kept per index generation: read once per search, not once per lookup."""
    from memkeeper.core.search import schema
    from memkeeper.core.search.engine import search_confident

    conn = schema.connect_readonly(indexed.search_db, 1.0)
    assert conn is not None
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        for prompt in (
            QUESTION,
            "how did the uploader retry with backoff and jitter",
        ):  # (new words: computed)
            statements.clear()
            assert search_confident(indexed, prompt, 0.5, conn=conn)
            assert sum("FROM meta" in s for s in statements) == 1
            assert sum("database_list" in s for s in statements) == 1
    finally:
        conn.close()


def test_the_resident_server_follows_a_rebuilt_index(indexed: StorePaths) -> None:
    """The server keeps its index connection open, and opens the new file after a rebuild replaced it."""
    server = recall.RecallServer(indexed)
    assert server.start()
    try:
        request = {"project": str(indexed.project), "session": "s-1", "prompt": QUESTION, "min": 0.5}
        assert "exponential backoff" in server._lookup(request)
        indexed.search_db.unlink()
        for suffix in ("-wal", "-shm"):
            Path(str(indexed.search_db) + suffix).unlink(missing_ok=True)
        assert server._lookup(dict(request, session="s-2")) == ""  # no index: silent
        refresh(indexed)
        assert "exponential backoff" in server._lookup(dict(request, session="s-3"))
    finally:
        server.close()


def test_the_resident_server_works_a_title_out_once_until_the_session_file_changes(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.core import titles

    worked_out: list[str] = []
    session_title = titles.session_title

    def counted(paths: StorePaths, l1_name: str, write: bool = False) -> str | None:
        worked_out.append(l1_name)
        return session_title(paths, l1_name, write)

    monkeypatch.setattr(titles, "session_title", counted)
    server = recall.RecallServer(indexed)
    request = {"session": "s-1", "prompt": QUESTION, "min": 0.5}
    assert '"the S3 uploads keep failing at random, can you look?"' in server._lookup(request)
    assert worked_out
    once = list(worked_out)
    again = server._lookup(dict(request, session="s-2"))
    assert '"the S3 uploads keep failing at random, can you look?"' in again
    assert worked_out == once  # the second answer used the titles kept from the first
    _l1(
        indexed,
        f"2026-11-02_100000_{EARLIER[:8]}.l1.jsonl",
        EARLIER,
        [("user", "uploads to S3 fail now and then"), ("assistant", ANSWER)],
    )
    refresh(indexed)
    assert '"uploads to S3 fail now and then"' in server._lookup(dict(request, session="s-3"))
    server.close()


# --- the detached resident lookup (the ``recall`` job) ---------------------------------------------


def test_the_hook_that_looked_up_itself_starts_the_recall_job_once(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.core import jobs
    from memkeeper.core.lock import file_lock
    from memkeeper.plugin import hook

    started: list[str] = []
    monkeypatch.setattr(jobs, "start_job", lambda paths, kind, options=None: started.append(kind))
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")

    def prompt(text: str) -> None:
        payload = {"session_id": CURRENT, "cwd": str(indexed.project), "prompt": text}
        hook.on_prompt(hook.Call(payload, str(indexed.project)))

    prompt(QUESTION)  # no resident lookup: looked up here, then the job is started
    assert started == [recall.RECALL_JOB]
    with file_lock(indexed.state / f"job-{recall.RECALL_JOB}.lock"):  # the job is starting or serving
        prompt("settings page renamed to Preferences")
    assert started == [recall.RECALL_JOB]


def _serving_recall_job(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> tuple[threading.Thread, Path]:
    """The recall job started in a thread (polling often), once its socket is there; and its folder."""
    import time

    monkeypatch.setattr(recall, "POLL_SECONDS", 0.05)
    job = threading.Thread(target=recall.run_recall_job, args=(indexed, {}))
    job.start()
    folder = indexed.state / recall_ask.RECALL_DIR
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not list(folder.glob(f"*{recall_ask.SOCKET_SUFFIX}")):
        time.sleep(0.02)
    return job, folder


def test_the_recall_job_serves_prompts_and_stops_when_idle(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.setattr(recall, "IDLE_SECONDS", 1.5)
    job, folder = _serving_recall_job(indexed, monkeypatch)
    request = json.dumps(
        {"project": str(indexed.project), "session": OTHER, "prompt": QUESTION, "min": 0.5}
    ).encode()
    assert "exponential backoff" in (recall_ask.ask_resident(str(indexed.root), request) or "")
    job.join(timeout=60)
    assert not job.is_alive()  # idle: it stopped by itself
    assert not list(folder.glob(f"*{recall_ask.SOCKET_SUFFIX}"))  # and removed its socket
    assert recall_ask.ask_resident(str(indexed.root), request) is None


def test_the_recall_job_stops_when_its_socket_is_removed(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the test suite's ``home`` fixture relies on to stop the jobs a test started."""

    job, folder = _serving_recall_job(indexed, monkeypatch)  # IDLE_SECONDS stays 15 minutes
    for sock in folder.glob(f"*{recall_ask.SOCKET_SUFFIX}"):
        sock.unlink()
    job.join(timeout=60)
    assert not job.is_alive()


def test_the_real_hook_starts_a_detached_recall_job_that_answers(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:

    from memkeeper.core.lock import is_locked

    monkeypatch.delenv("MEMKEEPER_NO_JOBS")
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
    out = _hook(indexed, "UserPromptSubmit", prompt=QUESTION)
    assert "exponential backoff" in out  # looked up in the hook this time
    folder = indexed.state / recall_ask.RECALL_DIR
    lock = indexed.state / f"job-{recall.RECALL_JOB}.lock"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(folder.glob(f"*{recall_ask.SOCKET_SUFFIX}")):
        time.sleep(0.05)
    sockets = list(folder.glob(f"*{recall_ask.SOCKET_SUFFIX}"))
    try:
        assert sockets, "the recall job did not start serving"
        assert is_locked(lock)
        request = json.dumps(
            {"project": str(indexed.project), "session": OTHER, "prompt": QUESTION, "min": 0.5}
        ).encode()
        assert "exponential backoff" in (
            recall_ask.ask_resident(str(indexed.root), request, timeout=30) or ""
        )
    finally:
        for sock in sockets:
            sock.unlink()  # the job stops when its socket is gone
    while time.monotonic() < deadline and is_locked(lock):
        time.sleep(0.1)
    assert not is_locked(lock)
