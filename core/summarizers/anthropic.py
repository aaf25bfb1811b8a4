"""The ``anthropic`` backend: the official SDK, used only when an API key is configured.

The SDK is an optional extra (``pip install memkeeper[anthropic]``) imported only when
this backend is used. The key comes from ``summarizer.apiKeyEnv`` (the name of an
environment variable, default ``ANTHROPIC_API_KEY``); memkeeper never stores keys.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .backend import DEFAULT_MAX_OUTPUT_TOKENS, BackendError, BackendUnavailable, Completion

if TYPE_CHECKING:
    from ..config.model import Config

#: Claude Code's short model aliases, mapped to API model aliases.
MODEL_ALIASES = {
    "haiku": "claude-haiku-4-5",
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-1",
}


def api_key(config: Config) -> str | None:
    value = os.environ.get(config.summarizer.apiKeyEnv, "").strip()
    return value or None


class AnthropicBackend:
    name = "anthropic"  # for logs, health and ``generator`` (the Backend protocol)

    def __init__(self, model: str = "haiku", key: str | None = None) -> None:
        self.model = MODEL_ALIASES.get(model, model)
        self.key = key

    def complete(
        self, prompt: str, timeout: float, max_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    ) -> Completion:
        if not self.key:
            raise BackendUnavailable("no Anthropic API key (set ANTHROPIC_API_KEY or choose another backend)")
        try:
            import anthropic
        except ImportError:
            raise BackendUnavailable(
                "the anthropic package is not installed (pip install 'memkeeper[anthropic]')"
            ) from None
        try:
            client: Any = anthropic.Anthropic(api_key=self.key, max_retries=0, timeout=timeout)
            message: Any = client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                messages=[{"role": "user", "content": prompt}],
            )
        except Exception as exc:  # the SDK's errors are many; each becomes one line
            raise BackendError(f"anthropic API call failed: {type(exc).__name__}: {str(exc)[:300]}") from None
        parts = [getattr(block, "text", "") for block in getattr(message, "content", []) or []]
        text = "".join(p for p in parts if isinstance(p, str))
        if not text.strip():
            raise BackendError("the anthropic API returned no text")
        usage = getattr(message, "usage", None)
        input_tokens = getattr(usage, "input_tokens", None)
        output_tokens = getattr(usage, "output_tokens", None)
        return Completion(
            text,
            str(getattr(message, "model", self.model)),
            input_tokens if isinstance(input_tokens, int) else None,
            output_tokens if isinstance(output_tokens, int) else None,
        )
