"""The summarizers' interface: the errors a model call ends with, a completion, what a backend
offers, which backend a name resolves to, and a model subprocess's environment.

The backends (one module each) and the package's budgeted call import it; it imports no backend.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from memkeeper.core.config import Config

BACKEND_NAMES = ("claude", "anthropic", "command", "extractive")


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

    def complete(self, prompt: str, timeout: float) -> Completion: ...


def api_key(config: Config) -> str | None:
    """The Anthropic API key from the environment variable ``summarizer.apiKeyEnv`` names."""
    value = os.environ.get(config.summarizer.apiKeyEnv, "").strip()
    return value or None


def _has_api_key(config: Config) -> bool:
    return api_key(config) is not None


def resolve_backend_name(config: Config, name: str | None = None) -> str:
    """The concrete backend name for ``name`` (or the configured one), resolving "auto"."""
    chosen = name or config.summarizer.backend
    if chosen == "auto":
        if shutil.which("claude"):
            return "claude"
        if _has_api_key(config):
            return "anthropic"
        return "extractive"
    if chosen not in BACKEND_NAMES:
        raise BackendUnavailable(
            f"unknown summarizer backend {chosen!r} (known: auto, {', '.join(BACKEND_NAMES)})"
        )
    return chosen


def child_env() -> dict[str, str]:
    """The environment for a model subprocess: ours, plus the guard our hooks check."""
    env = dict(os.environ)
    env["MEMKEEPER_IN_JOB"] = "1"
    return env
