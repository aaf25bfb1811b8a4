"""The validated configuration: a pydantic model over project → global → defaults.

Keys keep the JS plugin's names (``saveInterval``, ``memoryRotation``, ``memory``) so
one config file serves both. A bad value is a :class:`ConfigError` with one line that
names the file and the key; an unknown key is a warning, never an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memkeeper.core.settings import (
    DEFAULT_FLUSH_EVERY,
    DEFAULT_RECALL_CONFIDENCE,
    DEFAULT_RETENTION_DAYS,
    DEFAULT_SAVE_INTERVAL,
    ConfigError,
    read_config,
    scaled_threshold,
)
from memkeeper.core.store import StorePaths
from memkeeper.core.tokens import CARRYOVER_TOKENS, ROTATION_THRESHOLD_TOKENS

__all__ = ["Config", "ConfigError", "LoadedConfig", "load_config", "load_config_or_default"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class RotationConfig(_Section):
    enabled: bool = True
    thresholdTokens: int | None = Field(default=None, gt=0)
    carryoverTokens: int | None = Field(default=None, gt=0)


class MemoryConfig(_Section):
    enabled: bool = True
    flushEvery: int = Field(default=DEFAULT_FLUSH_EVERY, gt=0)
    retentionDays: int = Field(default=DEFAULT_RETENTION_DAYS, gt=0)


class SummarizerConfig(_Section):
    #: "auto" picks claude when it is on PATH, then anthropic with a key, then extractive.
    backend: Literal["auto", "claude", "anthropic", "command", "extractive"] = "auto"
    model: str = "haiku"
    command: list[str] | None = None
    timeoutSeconds: float = Field(default=120.0, gt=0)
    #: A flush batch with less conversation than this is summarized without a model.
    minCallChars: int = Field(default=1500, ge=0)
    #: Environment variable holding the API key of the ``anthropic`` backend.
    apiKeyEnv: str = "ANTHROPIC_API_KEY"


class RecallConfig(_Section):
    """Per-prompt recall (the UserPromptSubmit hook): on or off, and the confidence a hit needs."""

    enabled: bool = True
    minConfidence: float = Field(default=DEFAULT_RECALL_CONFIDENCE, ge=0, le=1)


class BudgetConfig(_Section):
    """Today's (UTC) cap on summarizer model calls and tokens, per project; past it the flush
    writes extractive bullets (free, nothing lost) until the next day. A heavy session (242
    tool calls) needs 2-6 flush calls of at most ~7,300 tokens each (a 24,000-character prompt
    and 1,024 tokens of answer) and a rotation's summary ~28,000: 50 calls and 500,000 tokens
    are several such sessions a day, and bound a runaway at about 0.5 M Haiku tokens."""

    dailyCalls: int = Field(default=50, ge=0)
    dailyTokens: int = Field(default=500_000, ge=0)


class Config(_Section):
    saveInterval: int = Field(default=DEFAULT_SAVE_INTERVAL, gt=0)
    keepRaw: bool = False  # the JS plugin's keys: known, read by it
    quietStop: bool = True
    rulesInjectionFrequency: int = Field(default=1, gt=0)
    memoryRotation: RotationConfig = Field(default_factory=RotationConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    summarizer: SummarizerConfig = Field(default_factory=SummarizerConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    recall: RecallConfig = Field(default_factory=RecallConfig)

    @property
    def threshold_tokens(self) -> int:
        """Rotation threshold: ``floor(thresholdTokens × 0.95)`` if set, else 23,750."""
        return scaled_threshold(self.memoryRotation.thresholdTokens, ROTATION_THRESHOLD_TOKENS)

    @property
    def carryover_tokens(self) -> int:
        return scaled_threshold(self.memoryRotation.carryoverTokens, CARRYOVER_TOKENS)


class LoadedConfig(BaseModel):
    config: Config
    warnings: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)


def load_config(paths: StorePaths) -> LoadedConfig:
    """The configuration read by the one reader (:func:`memkeeper.core.settings.read_config`,
    which raises ConfigError naming the file and key), as a typed view."""
    from memkeeper.core.settings import global_config_file

    merged, warnings = read_config(str(paths.config))
    sources = [path for path in (global_config_file(), str(paths.config)) if Path(path).is_file()]
    try:
        config = Config.model_validate(merged)
    except ValidationError as exc:  # the schemas disagree: a bug, still one line
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise ConfigError(f"{paths.config}: bad value for '{key}': {first['msg']}") from None
    return LoadedConfig(config=config, warnings=warnings, sources=sources)


def load_config_or_default(paths: StorePaths) -> tuple[Config, list[str]]:
    """The config, or the defaults plus the error as a warning (for paths that must go on)."""
    try:
        loaded = load_config(paths)
    except ConfigError as exc:
        return Config(), [str(exc)]
    return loaded.config, loaded.warnings
