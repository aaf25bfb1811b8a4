"""The summarizer backends by name: which one "auto" means here, and building the one configured.

Each backend module is imported only when its backend is built (the ``anthropic`` SDK, for
one, costs a lot to import and is an optional extra).
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from .backend import Backend, BackendUnavailable

if TYPE_CHECKING:
    from ..config.model import Config

BACKEND_NAMES = ("claude", "anthropic", "command", "extractive")


def _has_api_key(config: Config) -> bool:
    from .anthropic import api_key

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


def get_backend(config: Config, name: str | None = None) -> Backend:
    """The backend called ``name`` (default: the configured one), built from ``config``."""
    resolved = resolve_backend_name(config, name)
    model = config.summarizer.model
    if resolved == "claude":
        from .claude import ClaudeBackend

        return ClaudeBackend(model=model)
    if resolved == "anthropic":
        from .anthropic import AnthropicBackend, api_key

        return AnthropicBackend(model=model, key=api_key(config))
    if resolved == "command":
        from .command import CommandBackend

        if not config.summarizer.command:
            raise BackendUnavailable(
                "the command backend needs summarizer.command (an argv list) in config.json"
            )
        return CommandBackend(argv=list(config.summarizer.command))
    from .extractive import ExtractiveBackend

    return ExtractiveBackend()
