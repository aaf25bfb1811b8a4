"""Summarizer backends behind one small interface, and the budgeted, logged model call.

A backend turns a prompt into text: ``Backend.complete(prompt, timeout) -> Completion``
(the interface and the errors: :mod:`~memkeeper.core.summarizers.backend`). Four exist, one module each: ``claude`` (the user's own Claude Code, headless),
``anthropic`` (the official SDK, needs a key), ``command`` (any argv reading the prompt
on stdin) and ``extractive`` (no model: a deterministic summary of the text).
:func:`get_backend` (:mod:`~memkeeper.core.summarizers.registry`) resolves a name ("auto" =
claude on PATH, else anthropic with a key, else extractive). :func:`complete` is what the rest of memkeeper calls: it
enforces the daily caps of ``config.budget`` (raising :class:`BudgetExceeded` before
any model is called) and appends one line per call to a bounded JSONL log in
``.state/model-calls.jsonl``; :func:`budget_status` reads that log for status/TUI.

The modules import downwards only: this package > ``health`` > ``registry`` > the backends >
``_process`` > ``backend`` (tests/unit/test_import_cycles.py keeps it so).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from ..basics.fastjson import json_lines
from ..basics.timestamps import iso_now, utc_day
from ..basics.tokens import estimate_tokens
from ..store.atomic import append_text, atomic_write_bytes
from ..store.lock import file_lock
from .backend import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    MAX_OUTPUT_TOKENS,
    Backend,
    BackendDown,
    BackendError,
    BackendResting,
    BackendUnavailable,
    BudgetExceeded,
    Completion,
    SummarizerError,
    child_env,
)
from .registry import BACKEND_NAMES, get_backend, resolve_backend_name

if TYPE_CHECKING:
    from ..config.model import Config
    from ..store.paths import StorePaths

__all__ = [
    "BACKEND_NAMES",
    "CALL_LOG_KEEP",
    "CALL_LOG_NAME",
    "CALL_LOG_TRIM_AT",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "MAX_OUTPUT_TOKENS",
    "Backend",
    "BackendDown",
    "BackendError",
    "BackendResting",
    "BackendUnavailable",
    "BudgetExceeded",
    "Completion",
    "SummarizerError",
    "budget_status",
    "child_env",
    "complete",
    "get_backend",
    "log_call",
    "read_call_log",
    "resolve_backend_name",
]

CALL_LOG_NAME = "model-calls.jsonl"
#: The call log keeps its last CALL_LOG_KEEP lines; it is trimmed when it passes CALL_LOG_TRIM_AT.
CALL_LOG_KEEP = 1000
CALL_LOG_TRIM_AT = 1200


# --- budget and call log -------------------------------------------------------------


def _log_path(paths: StorePaths) -> Any:
    return paths.state / CALL_LOG_NAME


def read_call_log(paths: StorePaths) -> list[dict[str, Any]]:
    """Every parseable line of the call log (a damaged line is skipped, not fatal)."""
    try:
        raw = _log_path(paths).read_text("utf-8", errors="replace")
    except FileNotFoundError:
        return []
    return list(json_lines(raw))


def _charged(record: dict[str, Any]) -> bool:
    """A call counts against the budget if a model was actually asked (not refused)."""
    return record.get("outcome") not in ("budget", "resting") and record.get("backend") != "extractive"


def _record_tokens(record: dict[str, Any]) -> int:
    total = 0
    for key in ("inputTokens", "outputTokens"):
        value = record.get(key)
        if isinstance(value, int):
            total += value
    if total == 0 and isinstance(record.get("estimatedTokens"), int):
        total = record["estimatedTokens"]
    return total


def budget_status(paths: StorePaths, config: Config) -> dict[str, Any]:
    """Today's (UTC) model use against the caps, for ``status``, ``summaries`` and the TUI."""
    today = utc_day()
    records = [r for r in read_call_log(paths) if str(r.get("ts", "")).startswith(today)]
    charged = [r for r in records if _charged(r)]
    calls = len(charged)
    tokens = sum(_record_tokens(r) for r in charged)
    refused = [r for r in records if r.get("outcome") == "budget"]
    daily_calls = config.budget.dailyCalls
    daily_tokens = config.budget.dailyTokens
    exceeded = calls >= daily_calls or tokens >= daily_tokens
    return {
        "day": today,
        "calls": calls,
        "tokens": tokens,
        "dailyCalls": daily_calls,
        "dailyTokens": daily_tokens,
        "exceeded": exceeded,
        "refusedToday": len(refused),
        "lastRefusedAt": refused[-1].get("ts") if refused else None,
        "failedToday": sum(1 for r in charged if r.get("outcome") != "ok"),
    }


def log_call(paths: StorePaths, record: dict[str, Any]) -> None:
    """Append one call record; trim the log to its last CALL_LOG_KEEP lines when it grows."""
    path = _log_path(paths)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    with file_lock(path.with_name(CALL_LOG_NAME + ".lock")):
        append_text(path, line)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        lines = data.splitlines(keepends=True)
        if len(lines) > CALL_LOG_TRIM_AT:
            atomic_write_bytes(path, b"".join(lines[-CALL_LOG_KEEP:]))


def complete(
    paths: StorePaths,
    config: Config,
    prompt: str,
    *,
    purpose: str,
    backend: str | None = None,
    force: bool = False,
) -> Completion:
    """Ask the backend ``backend`` (default: configured) for an answer, within today's budget.

    Raises :class:`BudgetExceeded` (nothing called; the refusal is logged),
    :class:`BackendResting` (nothing called: the backend failed lately and rests, unless
    ``force``) or :class:`BackendError`; a :class:`BackendUnavailable` failure starts a
    rest. The extractive backend is free and never refused.
    """
    from .health import record_down, record_success, resting_until

    chosen = get_backend(config, backend)
    record: dict[str, Any] = {"ts": iso_now(), "backend": chosen.name, "purpose": purpose}
    if chosen.name != "extractive":
        until = None if force else resting_until(paths, chosen.name)
        if until is not None:
            raise BackendResting(
                f"{chosen.name} is resting after a failure (until {until:%Y-%m-%d %H:%M} UTC)"
            )
        status = budget_status(paths, config)
        if status["exceeded"]:
            record.update(outcome="budget", durationMs=0)
            log_call(paths, record)
            raise BudgetExceeded(
                f"daily model budget reached ({status['calls']}/{status['dailyCalls']} calls, "
                f"{status['tokens']}/{status['dailyTokens']} tokens today)"
            )
    started = time.monotonic()
    try:
        max_tokens = MAX_OUTPUT_TOKENS.get(purpose, DEFAULT_MAX_OUTPUT_TOKENS)
        result = chosen.complete(prompt, config.summarizer.timeoutSeconds, max_tokens)
    except BackendError as exc:
        record.update(
            outcome="error",
            error=str(exc)[:500],
            durationMs=int((time.monotonic() - started) * 1000),
            estimatedTokens=estimate_tokens(prompt),
        )
        log_call(paths, record)
        if isinstance(exc, BackendUnavailable):
            record_down(paths, chosen.name, str(exc))
        raise
    record_success(paths, chosen.name)
    record.update(outcome="ok", model=result.model, durationMs=int((time.monotonic() - started) * 1000))
    if result.input_tokens is not None:
        record["inputTokens"] = result.input_tokens
    if result.output_tokens is not None:
        record["outputTokens"] = result.output_tokens
    if result.input_tokens is None and result.output_tokens is None:
        # Unknown usage (command backend) still counts: estimate it so the cap holds.
        record["estimatedTokens"] = estimate_tokens(prompt) + estimate_tokens(result.text)
    log_call(paths, record)
    return result
