"""What a summarizer backend is: the interface every backend implements and the errors a call ends with.

A backend turns a prompt into text: ``Backend.complete(prompt, timeout, max_tokens) -> Completion``.
The backends (``claude``, ``anthropic``, ``command``, ``extractive``) import this module and nothing
above it; :mod:`memkeeper.core.summarizers.registry` picks one by name, and the package
(:mod:`memkeeper.core.summarizers`) makes the budgeted, logged call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol

#: The longest answer a call may get, in output tokens, by purpose. A flush asks for 2-4
#: one-sentence bullets (memkeeper keeps at most 6 of 300 characters: ~450 tokens); an L3
#: summary for one JSON object (at most 10 themes, decisions and issues: ~3,000 tokens).
#: Claude Code would otherwise ask for 32,000 (2.1.197) or 128,000 (2.1.33x) with thinking on.
MAX_OUTPUT_TOKENS = {"flush": 1024, "l3-summary": 4096}
DEFAULT_MAX_OUTPUT_TOKENS = 4096


class SummarizerError(Exception):
    """Base of the errors a model call can end with; the message is one line."""


class BackendError(SummarizerError):
    """The backend could not produce an answer (missing, timed out, exited non-zero, ...)."""


class BackendUnavailable(BackendError):
    """The backend cannot run at all here (not installed, no key, no command): retrying cannot help."""


class BackendDown(BackendUnavailable):
    """The backend is unreachable or refuses us (connection, no answer in time, auth): it rests."""


class BackendResting(BackendUnavailable):
    """The backend failed that way lately and rests (see ``summarizers.health``); nothing was called."""


class BudgetExceeded(SummarizerError):
    """Today's cap on model calls or tokens is reached; no model was called."""


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None


class Backend(Protocol):
    """What every backend offers: a name (for logs and ``generator``) and one call."""

    @property
    def name(self) -> str: ...

    def complete(
        self, prompt: str, timeout: float, max_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    ) -> Completion: ...


def child_env() -> dict[str, str]:
    """The environment for a model subprocess: ours, plus the guard our hooks check."""
    env = dict(os.environ)
    env["MEMKEEPER_IN_JOB"] = "1"
    return env
