"""Each backend behind the one interface, and the budgeted, logged ``complete``."""

from __future__ import annotations

import json
import time
import types
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.basics.timestamps import iso_now
from memkeeper.core.config.model import Config
from memkeeper.core.store.paths import StorePaths
from memkeeper.core.summaries.summary import generate_summary, load_summary, summary_path
from memkeeper.core.summarizers import (
    BackendDown,
    BackendError,
    BackendUnavailable,
    budget_status,
    complete,
    get_backend,
    read_call_log,
)
from memkeeper.core.summarizers.claude import ClaudeBackend
from memkeeper.core.summarizers.command import CommandBackend
from memkeeper.core.summarizers.extractive import ExtractiveBackend
from tests.unit.summary.summary_helpers import (
    CLAUDE_ARGV,
    FAKE_CLAUDE,
    GOOD_ANSWER,
    add_archive,
    pid_alive,
    write_config,
    write_script,
)


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake ``claude`` first on PATH; returns the file where it records its call."""
    bin_dir = tmp_path / "fakebin"
    write_script(bin_dir, "claude", FAKE_CLAUDE)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    log = tmp_path / "claude-call.json"
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(log))
    monkeypatch.setenv("FAKE_CLAUDE_ANSWER", json.dumps(GOOD_ANSWER))
    return log


def test_claude_backend_exact_argv_stdin_and_guard(store: StorePaths, fake_claude: Path) -> None:
    result = ClaudeBackend().complete("Summarize this.\nline two ünïcode", timeout=30)
    call = json.loads(fake_claude.read_text("utf-8"))
    # No tools, no MCP server (memkeeper's own included), no skills, no hooks, one turn,
    # no transcript; streamed so a silent API is noticed at the first-token deadline.
    assert call["argv"] == CLAUDE_ARGV
    assert call["stdin"] == "Summarize this.\nline two ünïcode"  # prompt on stdin, not in argv
    assert call["guard"] == "1"  # our hooks see MEMKEEPER_IN_JOB and never recurse
    assert Path(call["cwd"]).resolve() != store.project.resolve()  # the project's CLAUDE.md is not loaded
    assert json.loads(result.text) == GOOD_ANSWER
    assert result.model == "claude-haiku-4-5-20251001"
    assert (result.input_tokens, result.output_tokens) == (1500, 250)


def test_claude_is_the_auto_default_when_on_path(store: StorePaths, fake_claude: Path) -> None:
    add_archive(store)
    summary = generate_summary(store, "memory_20260302_150000.md")
    assert summary.generator == "claude:claude-haiku-4-5-20251001"
    assert summary.themes[0].name == "auth"
    call = json.loads(fake_claude.read_text("utf-8"))
    assert "<<<ARCHIVE" in call["stdin"] and "httpOnly cookie" in call["stdin"]
    record = read_call_log(store)[-1]
    assert record["backend"] == "claude" and record["outcome"] == "ok" and record["purpose"] == "l3-summary"
    assert record["inputTokens"] == 1500 and record["outputTokens"] == 250 and "durationMs" in record


def test_claude_hang_is_killed_with_its_children(
    store: StorePaths, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "hang")
    with pytest.raises(BackendDown) as info:
        ClaudeBackend().complete("x", timeout=1.5)
    assert "did not start answering within 1.5 s" in str(info.value)
    child = int(Path(str(fake_claude) + ".child").read_text())
    for _ in range(100):  # SIGKILL of the group is immediate; allow the reaper a moment
        if not pid_alive(child):
            break
        time.sleep(0.05)
    assert not pid_alive(child)


def test_claude_silent_api_is_down_at_the_first_token_deadline(
    store: StorePaths, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "hang")
    started = time.monotonic()
    with pytest.raises(BackendDown) as info:
        ClaudeBackend(first_token=1.0).complete("x", timeout=60)
    assert "did not start answering within 1 s" in str(info.value)
    assert time.monotonic() - started < 30  # bounded by the first-token deadline, not the 60 s timeout


def test_claude_answer_started_but_slow_is_an_ordinary_error(
    store: StorePaths, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "slow")
    with pytest.raises(BackendError) as info:
        ClaudeBackend(first_token=0.5).complete("x", timeout=2.0)
    assert not isinstance(info.value, BackendDown)
    assert "did not finish within 2 s" in str(info.value)


def test_claude_unknown_flag_is_dropped_once(
    store: StorePaths, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "old")
    result = ClaudeBackend().complete("x", timeout=30)
    assert json.loads(result.text) == GOOD_ANSWER
    assert "--disable-slash-commands" not in json.loads(fake_claude.read_text("utf-8"))["argv"]


def claude_error(monkeypatch: pytest.MonkeyPatch, mode: str) -> BackendError:
    """The error ``claude`` (the fake, in FAKE_CLAUDE_MODE ``mode``) makes the backend raise."""
    monkeypatch.setenv("FAKE_CLAUDE_MODE", mode)
    with pytest.raises(BackendError) as info:
        ClaudeBackend().complete("x", timeout=30)
    return info.value


@pytest.mark.parametrize(("mode", "down"), [("refused", True), ("fail", True), ("crash", False)])
def test_claude_unreachable_or_logged_out_is_down(
    store: StorePaths, fake_claude: Path, monkeypatch: pytest.MonkeyPatch, mode: str, down: bool
) -> None:
    assert isinstance(claude_error(monkeypatch, mode), BackendDown) is down


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        ("fail", "claude failed (exit 1): Not logged in"),
        ("crash", "claude failed (exit 3): panic: something broke"),
        ("garbage", "claude printed no JSON result (exit 0): "),
    ],
)
def test_claude_failures_are_one_line_errors(
    store: StorePaths, fake_claude: Path, monkeypatch: pytest.MonkeyPatch, mode: str, words: str
) -> None:
    error = str(claude_error(monkeypatch, mode))
    assert words in error
    assert "\n" not in error


def test_claude_missing_from_path_is_unavailable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BackendUnavailable):
        ClaudeBackend().complete("x", timeout=5)


def test_command_backend_reads_stdin_and_prints(tmp_path: Path) -> None:
    script = write_script(tmp_path, "upper", "import sys\nprint(sys.stdin.read().upper())\n")
    result = CommandBackend([str(script)]).complete("hello ünïcode", timeout=10)
    assert result.text.strip() == "HELLO ÜNÏCODE"
    assert result.model == "upper" and result.input_tokens is None


def test_command_backend_failures(tmp_path: Path) -> None:
    failing = write_script(
        tmp_path, "failing", "import sys\nsys.stderr.write('model not loaded\\n')\nsys.exit(2)\n"
    )
    with pytest.raises(BackendError, match="failing exited with status 2: model not loaded"):
        CommandBackend([str(failing)]).complete("x", timeout=10)
    silent = write_script(tmp_path, "silent", "pass\n")
    with pytest.raises(BackendError, match="silent printed nothing"):
        CommandBackend([str(silent)]).complete("x", timeout=10)
    slow = write_script(tmp_path, "slow", "import time\ntime.sleep(60)\n")
    with pytest.raises(BackendError, match="slow did not answer within 1 s"):
        CommandBackend([str(slow)]).complete("x", timeout=1)
    with pytest.raises(BackendUnavailable, match="cannot run"):
        CommandBackend([str(tmp_path / "nope")]).complete("x", timeout=1)


class _FakeMessages:
    calls: list[dict[str, Any]] = []

    def create(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return types.SimpleNamespace(
            content=[types.SimpleNamespace(type="text", text=json.dumps(GOOD_ANSWER))],
            usage=types.SimpleNamespace(input_tokens=900, output_tokens=120),
            model="claude-haiku-4-5-20251001",
        )


class _FakeClient:
    def __init__(self, **kwargs: Any) -> None:
        self.options = kwargs
        self.messages = _FakeMessages()


def test_anthropic_backend_with_key(
    monkeypatch: pytest.MonkeyPatch, store: StorePaths, tmp_path: Path
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "anthropic", types.SimpleNamespace(Anthropic=_FakeClient))
    monkeypatch.setenv("PATH", str(tmp_path))  # no claude: auto must pick the SDK
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    backend = get_backend(Config())
    assert backend.name == "anthropic"
    result = backend.complete("Summarize", timeout=20)
    assert json.loads(result.text) == GOOD_ANSWER
    assert (result.input_tokens, result.output_tokens) == (900, 120)
    sent = _FakeMessages.calls[-1]
    assert sent["model"] == "claude-haiku-4-5" and sent["messages"][0]["content"] == "Summarize"


def test_anthropic_without_key_is_unavailable_and_auto_falls_to_extractive(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert get_backend(Config()).name == "extractive"
    with pytest.raises(BackendUnavailable, match="no Anthropic API key"):
        get_backend(Config.model_validate({"summarizer": {"backend": "anthropic"}})).complete("x", 5)


def test_extractive_backend_answers_the_summary_prompt() -> None:
    prompt = "instructions...\n<<<ARCHIVE\n## 2026-01-02\n- [db]: chose Postgres because of JSONB\nARCHIVE>>>"
    answer = json.loads(ExtractiveBackend().complete(prompt, timeout=1).text)
    assert answer["keyDecisions"][0]["decision"].startswith("db: chose Postgres")
    assert answer["keyDecisions"][0]["reason"] == "JSONB"


def test_command_backend_without_argv_is_a_config_error(store: StorePaths) -> None:
    write_config(store, {"summarizer": {"backend": "command"}})
    from memkeeper.core.config.model import load_config

    with pytest.raises(BackendUnavailable, match=r"summarizer\.command"):
        get_backend(load_config(store).config)


def test_complete_logs_every_call_and_the_log_stays_bounded(
    store: StorePaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memkeeper.core.summarizers as summarizers

    monkeypatch.setattr(summarizers, "CALL_LOG_KEEP", 20)
    monkeypatch.setattr(summarizers, "CALL_LOG_TRIM_AT", 30)
    script = write_script(tmp_path, "echo-model", "import sys\nprint('ok ' + sys.stdin.read())\n")
    config = Config.model_validate({"summarizer": {"backend": "command", "command": [str(script)]}})
    for i in range(3):
        complete(store, config, f"prompt {i}", purpose="test")
    log = read_call_log(store)
    assert [r["outcome"] for r in log] == ["ok", "ok", "ok"]
    assert (
        log[0]["backend"] == "command" and log[0]["model"] == "echo-model" and log[0]["estimatedTokens"] > 0
    )
    for _ in range(40):
        summarizers.log_call(store, {"ts": "2000-01-01T00:00:00.000Z", "backend": "x", "outcome": "ok"})
    assert 20 <= len(read_call_log(store)) <= 30
    assert (store.state / "model-calls.jsonl").stat().st_mode & 0o777 == 0o600


def test_budget_status_counts_today_only(store: StorePaths) -> None:
    import memkeeper.core.summarizers as summarizers

    summarizers.log_call(
        store, {"ts": "2000-01-01T00:00:00.000Z", "backend": "claude", "outcome": "ok", "inputTokens": 10**9}
    )
    summarizers.log_call(
        store,
        {
            "ts": iso_now(),
            "backend": "claude",
            "outcome": "ok",
            "inputTokens": 100,
            "outputTokens": 20,
        },
    )
    summarizers.log_call(store, {"ts": iso_now(), "backend": "extractive", "outcome": "ok"})
    status = budget_status(store, Config())
    assert (status["calls"], status["tokens"], status["exceeded"]) == (1, 120, False)


def test_summary_file_written_by_claude_path_is_loadable(store: StorePaths, fake_claude: Path) -> None:
    add_archive(store)
    generate_summary(store, "memory_20260302_150000.md", backend="claude")
    data = json.loads(summary_path(store, "memory_20260302_150000.md").read_text("utf-8"))
    assert data["sourceFile"] == "memory_20260302_150000.md" and data["generatedAt"].endswith("Z")
    generator = load_summary(summary_path(store, "memory_20260302_150000.md")).generator
    assert generator is not None and generator.startswith("claude:")


def test_the_sdk_is_imported_only_when_the_anthropic_backend_runs() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import memkeeper.core.summarizers.anthropic, memkeeper.core.summaries.summary\n"
        "from memkeeper.core.config.model import Config\n"
        "from memkeeper.core.summarizers import get_backend\n"
        "get_backend(Config.model_validate({'summarizer': {'backend': 'extractive'}}))\n"
        "print('anthropic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
