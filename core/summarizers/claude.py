"""The ``claude`` backend: the user's own Claude Code in headless mode.

``claude -p --model M --output-format json --tools "" --max-turns 1
--no-session-persistence --settings '{"disableAllHooks": true}'`` with the prompt on
stdin. No tools, one turn, no transcript left in ``~/.claude/projects`` (so our own
plugin never mistakes a summary call for a session), no hooks in the child, and
``MEMKEEPER_IN_JOB=1`` in its environment as a second guard. It runs in a neutral
folder so the project's CLAUDE.md is not loaded into the prompt. Failures come back
as a JSON result with ``is_error``; a hung call is killed at the timeout.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from memkeeper.core.summarizers import BackendError, BackendUnavailable, Completion
from memkeeper.core.summarizers._process import last_line, run_with_timeout

HOOKS_OFF = '{"disableAllHooks": true}'


def claude_argv(executable: str, model: str) -> list[str]:
    return [
        executable,
        "-p",
        "--model",
        model,
        "--output-format",
        "json",
        "--tools",
        "",
        "--max-turns",
        "1",
        "--no-session-persistence",
        "--settings",
        HOOKS_OFF,
    ]


def _usage_tokens(usage: Any) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    parts = [usage.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    known = [p for p in parts if isinstance(p, int)]
    output = usage.get("output_tokens")
    return (sum(known) if known else None), (output if isinstance(output, int) else None)


def parse_result(stdout: str, returncode: int, default_model: str) -> Completion:
    """The answer inside claude's ``--output-format json`` result, or BackendError."""
    payload: Any = None
    text = stdout.strip()
    try:
        payload = json.loads(text)
    except ValueError:
        # Some versions print log lines before the result: take the last JSON line.
        for line in reversed(text.splitlines()):
            try:
                payload = json.loads(line)
                break
            except ValueError:
                continue
    if not isinstance(payload, dict) or ("result" not in payload and "is_error" not in payload):
        shown = last_line(text) or "(no output)"
        raise BackendError(f"claude printed no JSON result (exit {returncode}): {shown}")
    result = payload.get("result")
    if payload.get("is_error") or returncode != 0:
        reason = result if isinstance(result, str) and result else payload.get("subtype", "unknown error")
        raise BackendError(f"claude failed (exit {returncode}): {str(reason)[:300]}")
    if not isinstance(result, str):
        raise BackendError("claude's JSON result has no text 'result'")
    model = default_model
    usage_by_model = payload.get("modelUsage")
    if isinstance(usage_by_model, dict) and usage_by_model:
        model = next(iter(usage_by_model))
    input_tokens, output_tokens = _usage_tokens(payload.get("usage"))
    return Completion(result, model, input_tokens, output_tokens)


class ClaudeBackend:
    """Headless ``claude -p``; ``executable`` defaults to ``claude`` found on PATH."""

    def __init__(self, model: str = "haiku", executable: str | None = None) -> None:
        self.model = model
        self.executable = executable

    @property
    def name(self) -> str:
        return "claude"

    def complete(self, prompt: str, timeout: float) -> Completion:
        executable = self.executable or shutil.which("claude")
        if not executable:
            raise BackendUnavailable("claude is not on PATH (install Claude Code or choose another backend)")
        argv = claude_argv(executable, self.model)
        proc = run_with_timeout(argv, prompt, timeout, cwd=Path(tempfile.gettempdir()))
        if proc.returncode != 0 and not proc.stdout.strip():
            detail = last_line(proc.stderr) or "no output"
            raise BackendError(f"claude failed (exit {proc.returncode}): {detail}")
        return parse_result(proc.stdout, proc.returncode, self.model)
