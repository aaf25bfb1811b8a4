"""Per-prompt recall: the right earlier memory for a typed prompt, silent otherwise, never twice, never blocking."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.config.reader import DEFAULT_RECALL_CONFIDENCE, hook_settings
from memkeeper.core.context.session_start import build_context
from memkeeper.core.recall import ask as recall_ask
from memkeeper.core.recall import lookup as recall
from memkeeper.core.search import refresh
from memkeeper.core.store.paths import StorePaths
from tests.memkeeper_cli import run_hook

#: The resident lookups these tests start answer within the hook's 0.3 s deadline; two such modules on
#: two workers at once starve each other's (this one and the other module of the group run on one worker).
pytestmark = pytest.mark.xdist_group("recall-deadline")

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
    from memkeeper.core.store.lock import file_lock

    state_dir = indexed.state / recall_ask.RECALL_DIR
    state_dir.mkdir(exist_ok=True)
    with file_lock(state_dir / f"{CURRENT}.lock", timeout=1):
        assert _ask(indexed, QUESTION) == ""


def _hook(store: StorePaths, event: str, session: str = CURRENT, **fields: str) -> str:
    payload = {"session_id": session, "cwd": str(store.project), "hook_event_name": event, **fields}
    proc = run_hook(event, payload, timeout=60)  # as Claude Code runs it from a checkout
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
    assert len(pasted.encode()) > recall_ask.MAX_REQUEST
    try:
        out = _hook(indexed, "UserPromptSubmit", prompt=pasted)
        assert "exponential backoff" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert server.served == 1  # answered by the server, not looked up in the hook
    finally:
        server.close()


class _OneAnswer:
    """A resident lookup of the store (on its real channel, with its secret) that takes one question,
    notes it (``received``, ``asked``) and sends ``reply`` (never, when None: it hangs)."""

    def __init__(self, store: StorePaths, reply: bytes | None) -> None:
        self.listener = _listen(store)
        self.reply = reply
        self.asked = threading.Event()
        self.done = threading.Event()
        self.received: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with self.listener.accept() as conn:
            data = conn.recv_bytes()
            if data.startswith(recall_ask.PAYLOAD_REQUEST):  # a hook's payload: read as the server reads it
                verdict, question = recall.read_payload(data[len(recall_ask.PAYLOAD_REQUEST) :])
                self.received.append(question or {})
                self.asked.set()
                if self.reply is not None:
                    conn.send_bytes(verdict)
                    conn.send_bytes(recall_ask.hook_output(self.reply.decode()))
            else:
                self.received.append(json.loads(data))
                self.asked.set()
                if self.reply is not None:
                    conn.send_bytes(self.reply)
            self.done.wait(60)

    def stdout_of(self, run: Callable[[], object]) -> str:
        """What ``run`` writes to stdout (as the hook does, through a text wrapper), once served."""
        out = io.BytesIO()
        stdout = io.TextIOWrapper(out)  # (kept: collecting it would close ``out``)
        try:
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(sys, "stdout", stdout)
                run()
        finally:
            self.close()
        return out.getvalue().decode()

    def close(self) -> None:
        self.done.set()
        self.thread.join(timeout=60)
        self.listener.close()


def _listen(store: StorePaths) -> Any:
    """A listener on the store's channel, its secret written as a server writes it."""
    return recall.RecallServer._listen(recall_ask.Channel(str(store.root), create=True))


def test_the_prompt_hook_asks_the_resident_lookup_before_it_counts(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question goes out first, so the server looks up while the hook counts the prompt."""
    from memkeeper.core.log import counters, progress
    from memkeeper.plugin import hook

    server = _OneAnswer(indexed, b"[memkeeper] from the resident lookup")
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
    assert progress.read_counters(indexed)["sessions"][CURRENT]["messages"] == 1
    assert "from the resident lookup" in written


def test_the_hook_puts_the_question_before_it_finishes_interrupted_work_or_counts(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the hook's own entry point: the question is out before the rest of the hook runs."""
    from memkeeper.core.log import counters, progress
    from memkeeper.plugin import hook

    server = _OneAnswer(indexed, b"[memkeeper] answered")
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
    assert question == {"session": CURRENT, "prompt": QUESTION}  # the server reads the config
    assert steps == [("finish", True), ("count", True)]
    assert progress.read_counters(indexed)["sessions"][CURRENT]["messages"] == 1
    context = json.loads(written)["hookSpecificOutput"]["additionalContext"]
    assert context == "[memkeeper] answered"


def test_a_hung_server_leaves_the_hook_counting_and_silent(indexed: StorePaths) -> None:
    """A resident lookup that takes the question and never answers: the real hook returns within its bound."""
    server = _OneAnswer(indexed, None)
    try:
        start = time.monotonic()
        assert _hook(indexed, "UserPromptSubmit", prompt=QUESTION) == ""
        assert time.monotonic() - start < 30  # (bounded: one ASK_TIMEOUT; the bound here is generous)
    finally:
        server.close()
    assert _messages(indexed) == 1


def _messages(store: StorePaths, session: str = CURRENT) -> int:
    from memkeeper.core.log import progress

    entry = progress.read_counters(store)["sessions"].get(session) or {}
    return int(entry.get("messages", 0))


def test_the_resident_server_answers_and_the_hook_counts(indexed: StorePaths) -> None:
    """The real hook (its own process) asks a resident lookup and counts the prompt itself, once."""
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
    server = recall.RecallServer(indexed)
    server.warm()
    assert server.start(warm=False)
    try:
        out = _hook(indexed, "UserPromptSubmit", prompt=QUESTION)
        assert "exponential backoff" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert _messages(indexed) == 1 and server.served == 1
        assert _hook(indexed, "UserPromptSubmit", prompt="write a haiku about autumn leaves") == ""
        assert _messages(indexed) == 2 and server.served == 2  # nothing to inject: counted all the same
        assert _hook(indexed, "UserPromptSubmit", prompt="/compact") == ""  # nothing to ask
        assert _messages(indexed) == 3 and server.served == 2
    finally:
        server.close()


def test_the_warm_up_loads_what_the_first_answer_needs(indexed: StorePaths) -> None:
    """A resident lookup's first answer imports nothing more (it cost the first prompt about 60 ms)."""
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
    code = """
import json, sys, time
from pathlib import Path
from memkeeper.core.recall import lookup as recall, ask as recall_ask, wire as recall_wire
from memkeeper.core.store.paths import StorePaths
store = StorePaths(Path(sys.argv[1]))
server = recall.RecallServer(store)
server.warm()
assert server.start(warm=False)
channel = recall_ask.Channel(str(store.root))
key, family, address = channel.secret()
client = recall_wire.connect(family, address, key, time.monotonic() + 30)
before = set(sys.modules)
client.send_bytes(json.dumps({"session": sys.argv[2], "prompt": sys.argv[3]}).encode())
reply = client.recv_bytes()
server.close()
print(b"exponential backoff" in reply, sorted(set(sys.modules) - before))
"""
    done = subprocess.run(
        [sys.executable, "-P", "-c", code, str(indexed.project), CURRENT, QUESTION],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "[]"]  # answered, with nothing more loaded


def test_a_server_injects_nothing_while_the_config_turns_recall_off(indexed: StorePaths) -> None:
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


def test_one_server_per_store(indexed: StorePaths) -> None:
    """A second server (another session's MCP server) leaves the channel to the first."""
    first, second = recall.RecallServer(indexed), recall.RecallServer(indexed)
    assert first.start(warm=False)
    try:
        assert not second.start(warm=False)
        key = recall_ask.Channel(str(indexed.root)).secret()[0]
    finally:
        first.close()
    assert not os.path.exists(first.path)  # its secret is gone with it
    assert second.start(warm=False)  # the channel is free again: a new secret
    try:
        assert recall_ask.Channel(str(indexed.root)).secret()[0] != key
    finally:
        second.close()


def test_a_stale_channel_is_skipped_and_the_hook_looks_up_itself(indexed: StorePaths) -> None:
    _listen(indexed).close()  # (closing removes the socket; the secret stays, as a killed server's)
    assert os.path.exists(recall_ask.Channel(str(indexed.root)).key_file)
    assert "exponential backoff" in _ask(indexed, QUESTION)


def test_a_server_that_does_not_answer_never_blocks_the_prompt(indexed: StorePaths) -> None:
    server = _OneAnswer(indexed, None)  # takes the question but never answers
    try:
        assert recall_ask.ask_resident(str(indexed.root), b"{}", timeout=0.2) == ""
    finally:
        server.close()
    server = _OneAnswer(indexed, None)
    try:
        assert _ask(indexed, QUESTION) == ""
    finally:
        server.close()


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


@pytest.fixture
def checklist(empty_store: StorePaths) -> StorePaths:
    """Two earlier sessions (who owns the release checklist, a step added to it) and this one."""
    store = empty_store
    sessions = {
        ("2026-11-02", EARLIER): [
            ("user", "who keeps the release checklist up to date?"),
            ("assistant", "Priya owns the release checklist; it lives in the wiki under Operations."),
            ("user", "thanks"),
        ],
        ("2026-11-05", OTHER): [
            ("user", "add the database migration step to the release checklist"),
            ("assistant", "Added the migration step before the smoke tests."),
            ("user", "good"),
        ],
        ("2026-11-07", CURRENT): [
            ("user", "rename the settings page"),
            ("assistant", "The settings page is now called Preferences."),
        ],
    }
    for (day, session), entries in sessions.items():
        _l1(store, f"{day}_100000_{session[:8]}.l1.jsonl", session, entries)
    refresh(store)
    return store


def test_a_confident_hit_brings_its_companions(checklist: StorePaths) -> None:
    """Once a hit is confident, the next best come with it down to COMPANION_SHARE of the bar; never alone."""
    from memkeeper.core.search.engine import search_confident

    question, bar = "who owns the release checklist?", 0.5
    floor = bar * recall.COMPANION_SHARE
    alone = search_confident(checklist, question, bar)
    along = search_confident(checklist, question, bar, floor=floor)
    assert alone is not None and along is not None
    assert [h.snippet[:22] for h in alone] == ["Priya owns the release"]
    assert [h.snippet[:22] for h in along] == ["Priya owns the release", "add the database migra"]
    assert along[0].confidence >= bar > along[1].confidence >= floor
    # no confident hit: nothing, however close the next one comes to the floor
    vague = "release checklist owner"
    full = _full_ranking_confidences(checklist, vague)
    assert max(full) < 0.3 and sorted(full)[-2] >= 0.15
    assert search_confident(checklist, vague, 0.3, floor=0.15) == []
    # through the whole step: the companion is injected after the confident hit
    text = _ask(checklist, question, confidence=bar)
    lines = text.splitlines()[1:]
    assert len(lines) == 2 and "Priya owns" in lines[0] and "migration step" in lines[1], text


def _full_ranking_confidences(store: StorePaths, prompt: str) -> list[float]:
    """The full ranking's confidences for ``prompt``."""
    from memkeeper.core.search.engine import search_readonly

    full = search_readonly(store, prompt, limit=10)
    assert full is not None
    return [h.confidence for h in full.hits]


def test_companions_come_only_after_a_new_confident_hit() -> None:
    """pick: the first hit injected is confident; the others need COMPANION_SHARE of the bar."""
    from memkeeper.core.search.model import Hit

    def hit(n: int, confidence: float) -> Hit:
        name = f"sessions/2026-11-0{n}_100000_{EARLIER[:8]}.l1.jsonl"
        return Hit(
            f"l1-{n}", "l1", "prompt", name, 1, EARLIER, None, "", f"entry {n}", 5, 1.0, (), confidence
        )

    hits = [hit(1, 0.8), hit(2, 0.45), hit(3, 0.25), hit(4, 0.2)]
    assert [h.id for h in recall.pick(hits, CURRENT, {}, 0.6)] == ["l1-1", "l1-2"]
    assert recall.pick(hits[1:], CURRENT, {}, 0.6) == []  # companions never come alone
    # the confident hit shown earlier in the session: its companions do not come on their own
    assert recall.pick(hits, CURRENT, {"shown": ["l1-1"]}, 0.6) == []


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
    from memkeeper.core.capture import titles

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
    from memkeeper.core.store import jobs
    from memkeeper.core.store.lock import file_lock
    from memkeeper.plugin import hook

    started: list[str] = []
    monkeypatch.setattr(jobs, "start_job", lambda paths, kind, options=None: started.append(kind))
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")

    def prompt(text: str) -> None:
        payload: dict[str, object] = {"session_id": CURRENT, "cwd": str(indexed.project), "prompt": text}
        hook.on_prompt(hook.Call(payload, str(indexed.project)))

    prompt(QUESTION)  # no resident lookup: looked up here, then the job is started
    assert started == [recall.RECALL_JOB]
    with file_lock(indexed.state / f"job-{recall.RECALL_JOB}.lock"):  # the job is starting or serving
        prompt("settings page renamed to Preferences")
    assert started == [recall.RECALL_JOB]


def _serving_recall_job(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> tuple[threading.Thread, Path]:
    """The recall job started in a thread (polling often), once its channel's secret is there; and that file."""
    import time

    monkeypatch.setattr(recall, "POLL_SECONDS", 0.05)
    job = threading.Thread(target=recall.run_recall_job, args=(indexed, {}))
    job.start()
    key = Path(recall_ask.Channel(str(indexed.root), create=True).key_file)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not key.exists():
        time.sleep(0.02)
    return job, key


def test_the_recall_job_serves_prompts_and_stops_when_idle(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.setattr(recall, "IDLE_SECONDS", 1.5)
    job, key = _serving_recall_job(indexed, monkeypatch)
    request = json.dumps({"session": OTHER, "prompt": QUESTION, "min": 0.5}).encode()
    assert "exponential backoff" in (recall_ask.ask_resident(str(indexed.root), request) or "")
    job.join(timeout=60)
    assert not job.is_alive()  # idle: it stopped by itself
    assert not key.exists()  # and removed its secret
    assert recall_ask.ask_resident(str(indexed.root), request) is None


def test_the_recall_job_stops_when_its_secret_is_removed(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the test suite's ``home`` fixture relies on to stop the jobs a test started."""

    job, key = _serving_recall_job(indexed, monkeypatch)  # IDLE_SECONDS stays 15 minutes
    key.unlink()
    job.join(timeout=60)
    assert not job.is_alive()


def test_the_real_hook_starts_a_detached_recall_job_that_answers(
    indexed: StorePaths, monkeypatch: pytest.MonkeyPatch
) -> None:

    from memkeeper.core.store.lock import is_locked

    monkeypatch.delenv("MEMKEEPER_NO_JOBS")
    indexed.config.write_text(json.dumps({"recall": {"minConfidence": 0.5}}), encoding="utf-8")
    out = _hook(indexed, "UserPromptSubmit", prompt=QUESTION)
    assert "exponential backoff" in out  # looked up in the hook this time
    key = Path(recall_ask.Channel(str(indexed.root), create=True).key_file)
    lock = indexed.state / f"job-{recall.RECALL_JOB}.lock"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not key.exists():
        time.sleep(0.05)
    try:
        assert key.exists(), "the recall job did not start serving"
        assert is_locked(lock)
        request = json.dumps({"session": OTHER, "prompt": QUESTION, "min": 0.5}).encode()
        assert "exponential backoff" in (
            recall_ask.ask_resident(str(indexed.root), request, timeout=30) or ""
        )
    finally:
        key.unlink(missing_ok=True)  # the job stops when its secret is gone
    while time.monotonic() < deadline and is_locked(lock):
        time.sleep(0.1)
    assert not is_locked(lock)
