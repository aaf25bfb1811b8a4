"""The one configuration schema: pydantic models over project → global → defaults.

This module is the one declaration of every key: its type, default, bounds and a one-line
explanation (``description``). Keys keep the JS plugin's names (``saveInterval``,
``memoryRotation``, ``memory``) so one config file serves both. The hook path may not
import pydantic, so its reader (:mod:`memkeeper.core.config.reader`) checks values against
:data:`memkeeper.core.config.table.FIELDS`, a plain table generated from these models
(``python -m memkeeper.core.config.model`` writes it; a test fails when it is out of date).

A bad value is a :class:`ConfigError` with one line that names the file and the key; an
unknown key is a warning, never an error.
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from ..basics.tokens import CARRYOVER_TOKENS, ROTATION_THRESHOLD_TOKENS
from ..store.paths import StorePaths
from .reader import ConfigError, read_config, scaled_threshold

__all__ = [
    "Config",
    "ConfigError",
    "LoadedConfig",
    "field_info",
    "load_config",
    "load_config_or_default",
    "table_source",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class RotationConfig(_Section):
    enabled: bool = Field(default=True, description="Archive memory.md when it reaches the threshold.")
    thresholdTokens: int | None = Field(
        default=None,
        gt=0,
        description="Archive memory.md at this many tokens (× 0.95); unset: 23,750.",
    )
    carryoverTokens: int | None = Field(
        default=None,
        gt=0,
        description="Tokens of memory.md's tail kept after a rotation (× 0.95); unset: 2,375.",
    )


class MemoryConfig(_Section):
    enabled: bool = Field(
        default=True, description="Keep memory; off: the hooks start no flush and make no model call."
    )
    flushEvery: int = Field(
        default=10,
        gt=0,
        description="Flush into memory.md every this many prompts and tool uses.",
    )
    retentionDays: int = Field(
        default=30, gt=0, description="L1 session files older than this many days are compressed."
    )


class SummarizerConfig(_Section):
    backend: Literal["auto", "claude", "anthropic", "command", "extractive"] = Field(
        default="auto",
        description="Who summarizes: auto, claude, anthropic, command, extractive (no model).",
    )
    model: str = Field(default="haiku", description="The model the claude and anthropic backends ask.")
    command: list[str] | None = Field(
        default=None, description="The command backend's argv: the prompt on stdin, the answer on stdout."
    )
    timeoutSeconds: float = Field(default=120.0, gt=0, description="The longest one model call may take.")
    minCallChars: int = Field(
        default=1500,
        ge=0,
        description="A flush with less conversation than this is summarized without a model.",
    )
    apiKeyEnv: str = Field(
        default="ANTHROPIC_API_KEY",
        description="The environment variable holding the anthropic backend's key.",
    )


class RecallConfig(_Section):
    """Per-prompt recall (the UserPromptSubmit hook): on or off, and the confidence a hit needs."""

    enabled: bool = Field(
        default=True, description="Add what memory knows to each prompt (per-prompt recall)."
    )
    # A calibrated confidence (search.scoring.calibrated) at which 82 % of injections (a confident
    # hit and its companions, recall.lookup.COMPANION_SHARE) held an answering turn on LoCoMo
    # (docs/recall.md); the "high" tier (0.92) injected too rarely.
    minConfidence: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Recall when a hit is at least this confident (0 to 1; higher is quieter).",
    )


class BudgetConfig(_Section):
    """Today's (UTC) cap on summarizer model calls and tokens, per project; past it the flush
    writes extractive bullets (free, nothing lost) until the next day. A heavy session (242
    tool calls) needs 2-6 flush calls of at most ~7,300 tokens each (a 24,000-character prompt
    and 1,024 tokens of answer) and a rotation's summary ~28,000: 50 calls and 500,000 tokens
    are several such sessions a day, and bound a runaway at about 0.5 M Haiku tokens."""

    dailyCalls: int = Field(
        default=50, ge=0, description="Model calls a day (UTC) before summaries fall back to extractive."
    )
    dailyTokens: int = Field(
        default=500_000,
        ge=0,
        description="Model tokens a day (UTC) before summaries fall back to extractive.",
    )


class Config(_Section):
    saveInterval: int = Field(
        default=25, gt=0, description="The JS plugin's save reminder, every this many tool uses."
    )
    keepRaw: bool = Field(default=False, description="The JS plugin's own key: keep raw transcripts.")
    quietStop: bool = Field(default=True, description="The JS plugin's own key: no message at session end.")
    rulesInjectionFrequency: int = Field(
        default=1, gt=0, description="The JS plugin's own key: inject the rules every this many prompts."
    )
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
    """The configuration read by the one reader (:func:`memkeeper.core.config.reader.read_config`,
    which raises ConfigError naming the file and key), as a typed view."""
    from .reader import global_config_file

    merged, warnings = read_config(str(paths.config))
    sources = [path for path in (global_config_file(), str(paths.config)) if Path(path).is_file()]
    # The reader checked every value against the table generated from these models: they agree.
    return LoadedConfig(config=Config.model_validate(merged), warnings=warnings, sources=sources)


def load_config_or_default(paths: StorePaths) -> tuple[Config, list[str]]:
    """The config, or the defaults plus the error as a warning (for paths that must go on)."""
    try:
        loaded = load_config(paths)
    except ConfigError as exc:
        return Config(), [str(exc)]
    return loaded.config, loaded.warnings


# --- the hook path's table, derived from the models -------------------------------------------


def field_info() -> dict[str, FieldInfo]:
    """Every leaf key of the schema, dotted (``memory.flushEvery``), with its pydantic field."""
    out: dict[str, FieldInfo] = {}
    for name, info in Config.model_fields.items():
        section = info.annotation
        if isinstance(section, type) and issubclass(section, _Section):
            for key, leaf in section.model_fields.items():
                out[f"{name}.{key}"] = leaf
        else:
            out[name] = info
    return out


def _kind(annotation: Any) -> Any:
    """The table's kind of a field's type: bool, int, float, str, argv or the allowed strings."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is Literal:
        return tuple(args)
    if isinstance(annotation, types.UnionType) and len(args) == 1:
        return _kind(args[0])  # optional: the default is None, a file may not say null
    if typing.get_origin(annotation) is list and args == [str]:
        return "argv"
    for kind in (bool, int, float, str):
        if annotation is kind:
            return kind.__name__
    raise TypeError(f"no table kind for {annotation!r}")


def _bounds(info: FieldInfo) -> tuple[tuple[str, float], ...]:
    bounds: list[tuple[str, float]] = []
    for item in info.metadata:
        for name in ("gt", "ge", "le"):
            value = getattr(item, name, None)
            if value is not None:
                bounds.append((name, value))
    return tuple(bounds)


def _literal(value: Any) -> str:
    """``value`` as Python source the way ruff formats it (double quotes, ``(x,)``)."""
    if isinstance(value, tuple):
        inner = ", ".join(_literal(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, str):
        import json

        return json.dumps(value)
    return repr(value)


TABLE_FILE = Path(__file__).resolve().with_name("table.py")
_TABLE_START = "FIELDS: dict[str, tuple[object, object, tuple[tuple[str, float], ...]]] = {"


def table_source(current: str) -> str:
    """:mod:`memkeeper.core.config.table`'s text (``current``) with its ``FIELDS`` generated
    from the models (what comes before them, the docstring and imports, is kept)."""
    head = current.split(_TABLE_START, 1)[0]
    rows = [
        f"    {_literal(key)}: {_literal((_kind(info.annotation), info.get_default(), _bounds(info)))},"
        for key, info in field_info().items()
    ]
    return "\n".join([head + _TABLE_START, *rows, "}", ""])


if __name__ == "__main__":
    TABLE_FILE.write_text(table_source(TABLE_FILE.read_text(encoding="utf-8")), encoding="utf-8")
