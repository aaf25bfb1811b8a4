"""The ``claude`` backend: the user's own Claude Code in headless mode, isolated and bounded.

One clean call (checked against Claude Code 2.1.197 and 2.1.330 with a loopback mock):

- ``--tools ""``: no built-in tool; ``--strict-mcp-config --mcp-config '{"mcpServers":{}}'``:
  no MCP server, so an installed plugin's (memkeeper's own included) tools never reach the
  request; ``--disable-slash-commands``: no skills or commands;
- ``--settings`` with ``disableAllHooks``: no hook runs in the child (with
  ``MEMKEEPER_IN_JOB=1`` in its environment as a second guard), so with hooks, MCP, skills
  and tools off an installed plugin contributes nothing; ``--bare`` is not used because it
  refuses OAuth (subscription) logins;
- ``--system-prompt``: a short system prompt instead of Claude Code's own (~26 kB);
- ``--max-turns 1``, ``--no-session-persistence`` (no transcript in ``~/.claude/projects``
  for our own plugin to mistake for a session), and a neutral working folder (no CLAUDE.md);
- no extended thinking and a small answer: by default Claude Code asks for 31,999 thinking
  tokens in ``max_tokens`` 32,000 (2.1.197) or adaptive thinking in 128,000 (2.1.33x) for what
  is a few bullets. :func:`answer_settings` turns thinking off (``CLAUDE_CODE_DISABLE_THINKING``,
  the one switch both versions obey; ``MAX_THINKING_TOKENS=0``, ``alwaysThinkingEnabled``),
  bounds the answer (``CLAUDE_CODE_MAX_OUTPUT_TOKENS``) and sets effort low; they go in
  ``--settings`` (above the user's own settings) and in the child's environment.

Bounded: the answer is read as ``stream-json`` with partial messages, so an API that
does not start answering within :data:`FIRST_TOKEN_SECONDS` is recognised as unreachable
and the child is killed; ``CLAUDE_CODE_MAX_RETRIES`` keeps a refused connection or a bad
login from being retried for minutes. Such failures raise :class:`BackendDown`, which
makes the backend rest (see ``summarizers.health``). A CLI that rejects one of the
isolation flags as unknown is retried once without it (older or newer versions).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from ..store.jobs import end_tree, start_child
from ._process import (
    MAX_OUTPUT_BYTES,
    capped,
    drain,
    feed,
    last_line,
    wait_for,
    wait_output,
)
from .backend import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    BackendDown,
    BackendError,
    BackendUnavailable,
    Completion,
    child_env,
)

NO_MCP = '{"mcpServers": {}}'
SYSTEM_PROMPT = (
    "You turn excerpts of coding sessions into short memory notes, exactly in the format asked. "
    "You have no tools; answer in one message."
)
#: The API must start answering (message_start) within this many seconds of the start.
FIRST_TOKEN_SECONDS = 8.0
#: Retries the CLI makes itself on a failed request (its default retries for minutes).
MAX_RETRIES = "1"
#: Flags a version may not know; dropped (once each) when the CLI says "unknown option".
OPTIONAL_FLAGS = ("--disable-slash-commands", "--strict-mcp-config", "--system-prompt")
#: What an unreachable API or a refused login looks like in claude's result or stderr.
DOWN_RE = re.compile(
    r"(?i)unable to connect|connection ?refused|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|getaddrinfo|"
    r"network|timed? ?out|not logged in|/login|invalid api key|authentication|unauthori[sz]ed|"
    r"oauth|credit balance|x-api-key|forbidden|api key"
)
UNKNOWN_OPTION_RE = re.compile(r"unknown option '?(--[a-z-]+)")


def answer_env(max_tokens: int) -> dict[str, str]:
    """The variables that make Claude Code ask for an answer of ``max_tokens`` without thinking."""
    return {
        "CLAUDE_CODE_DISABLE_THINKING": "1",
        "MAX_THINKING_TOKENS": "0",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(max_tokens),
        "CLAUDE_CODE_EFFORT_LEVEL": "low",
    }


def answer_settings(max_tokens: int) -> str:
    """``--settings`` for the child: no hook, no thinking, the answer bounded (see the module doc)."""
    settings = {"disableAllHooks": True, "alwaysThinkingEnabled": False, "env": answer_env(max_tokens)}
    return json.dumps(settings, separators=(",", ":"))


def claude_argv(
    executable: str,
    model: str,
    without: frozenset[str] = frozenset(),
    max_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
) -> list[str]:
    argv = [
        executable,
        "-p",
        "--model",
        model,
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--tools",
        "",
        "--max-turns",
        "1",
        "--no-session-persistence",
        "--settings",
        answer_settings(max_tokens),
    ]
    if "--strict-mcp-config" not in without:
        argv += ["--strict-mcp-config", "--mcp-config", NO_MCP]
    if "--disable-slash-commands" not in without:
        argv.append("--disable-slash-commands")
    if "--system-prompt" not in without:
        argv += ["--system-prompt", SYSTEM_PROMPT]
    return argv


def claude_env(max_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS) -> dict[str, str]:
    env = child_env()
    env.update(answer_env(max_tokens))
    env["CLAUDE_CODE_MAX_RETRIES"] = MAX_RETRIES
    env.setdefault("DISABLE_AUTOUPDATER", "1")
    return env


def _usage_tokens(usage: Any) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    parts = [usage.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    known = [p for p in parts if isinstance(p, int)]
    output = usage.get("output_tokens")
    return (sum(known) if known else None), (output if isinstance(output, int) else None)


def _json_lines(text: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _result_payload(stdout: str) -> dict[str, Any] | None:
    """The final result object: the whole output as one JSON, else the last result line."""
    try:
        whole: Any = json.loads(stdout.strip())
    except ValueError:
        whole = None
    if isinstance(whole, dict) and ("result" in whole or "is_error" in whole):
        return dict(whole)
    results = [
        v for v in _json_lines(stdout) if v.get("type") == "result" or ("is_error" in v and "result" in v)
    ]
    return results[-1] if results else None


def _failure(message: str) -> BackendError:
    return BackendDown(message) if DOWN_RE.search(message) else BackendError(message)


def parse_result(stdout: str, returncode: int, default_model: str) -> Completion:
    """The answer inside claude's ``json`` or ``stream-json`` result, or BackendError."""
    payload = _result_payload(stdout)
    if payload is None:
        shown = last_line(stdout) or "(no output)"
        raise BackendError(f"claude printed no JSON result (exit {returncode}): {shown}")
    result = payload.get("result")
    if payload.get("is_error") or returncode != 0:
        reason = result if isinstance(result, str) and result else payload.get("subtype", "unknown error")
        status = payload.get("api_error_status")
        extra = f" (API status {status})" if status else ""
        failure = _failure(f"claude failed (exit {returncode}): {str(reason)[:300]}{extra}")
        if status in (401, 403):
            failure = BackendDown(str(failure))
        raise failure
    if not isinstance(result, str):
        raise BackendError("claude's JSON result has no text 'result'")
    model = default_model
    usage_by_model = payload.get("modelUsage")
    if isinstance(usage_by_model, dict) and usage_by_model:
        model = next(iter(usage_by_model))
    input_tokens, output_tokens = _usage_tokens(payload.get("usage"))
    return Completion(result, model, input_tokens, output_tokens)


@dataclass
class _Run:
    returncode: int
    stdout: str
    stderr: str
    answered: bool  # the API started answering (or the CLI printed its result)


def _answered(line: bytes) -> bool:
    """True for a line that shows the API answered: a stream event, a message or the result."""
    try:
        value = json.loads(line)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("type") in ("stream_event", "assistant", "result")


def stream_run(
    argv: list[str], prompt: str, timeout: float, first_token: float, env: dict[str, str] | None = None
) -> _Run:
    """Run claude, reading its output as it comes; stop at the first-token or the overall deadline."""
    errors = tempfile.TemporaryFile()
    try:
        proc = start_child(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            cwd=tempfile.gettempdir(),
            env=env if env is not None else claude_env(),
        )
    except OSError as exc:
        errors.close()
        raise BackendUnavailable(f"cannot run claude: {exc.strerror or exc}") from None
    try:
        feed(proc.stdin, prompt.encode("utf-8", "replace"))
        out, answered, finished = _read(proc, time.monotonic(), timeout, first_token)
        finished = finished and wait_for(proc, 2.0)
    finally:
        end_tree(proc)  # the child and anything it left behind
    errors.seek(0)
    stderr = errors.read()[-4096:].decode("utf-8", "replace")
    errors.close()
    code = proc.returncode if finished else -9
    return _Run(code, out.decode("utf-8", "replace"), stderr, answered)


def _read(
    proc: subprocess.Popen[bytes], started: float, timeout: float, first_token: float
) -> tuple[bytes, bool, bool]:
    """(output, the API answered, the output ended) once it ends or a deadline passes.

    The output has ended at EOF, or once claude itself has exited (past a short grace: a
    process it left behind may hold the pipe)."""
    out = bytearray()
    answered = False

    def deadline() -> float:
        nonlocal answered
        if not answered:  # look at the complete lines that arrived
            lines = bytes(out).split(b"\n")[:-1]
            answered = any(_answered(line) for line in lines[-64:])
        return started + (timeout if answered else min(timeout, first_token))

    finished = wait_output(proc, [drain(proc.stdout, capped(out, MAX_OUTPUT_BYTES))], deadline)
    deadline()
    return bytes(out), answered, finished


class ClaudeBackend:
    """Headless ``claude -p``; ``executable`` defaults to ``claude`` found on PATH."""

    name = "claude"  # for logs, health and ``generator`` (the Backend protocol)

    def __init__(
        self, model: str = "haiku", executable: str | None = None, first_token: float = FIRST_TOKEN_SECONDS
    ) -> None:
        self.model = model
        self.executable = executable
        self.first_token = first_token

    def complete(
        self, prompt: str, timeout: float, max_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    ) -> Completion:
        executable = self.executable or shutil.which("claude")
        if not executable:
            raise BackendUnavailable("claude is not on PATH (install Claude Code or choose another backend)")
        without: set[str] = set()
        while True:
            argv = claude_argv(executable, self.model, frozenset(without), max_tokens)
            run = stream_run(argv, prompt, timeout, self.first_token, claude_env(max_tokens))
            unknown = UNKNOWN_OPTION_RE.search(run.stderr + run.stdout[-2000:])
            if run.returncode != 0 and unknown and unknown.group(1) in OPTIONAL_FLAGS:
                if unknown.group(1) not in without:
                    without.add(unknown.group(1))
                    continue
            return self._completion(run, timeout)

    def _completion(self, run: _Run, timeout: float) -> Completion:
        if _result_payload(run.stdout) is not None:
            return parse_result(run.stdout, run.returncode, self.model)
        if not run.answered and run.returncode == -9:
            waited = min(timeout, self.first_token)
            raise BackendDown(f"claude: the API did not start answering within {waited:g} s (unreachable?)")
        if run.returncode == -9:
            raise BackendError(f"claude did not finish within {timeout:g} s (killed)")
        if run.returncode == 0:
            shown = last_line(run.stdout) or "(no output)"
            raise BackendError(f"claude printed no JSON result (exit 0): {shown}")
        detail = last_line(run.stderr) or last_line(run.stdout) or "no output"
        raise _failure(f"claude failed (exit {run.returncode}): {detail}")
