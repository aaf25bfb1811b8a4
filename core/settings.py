"""The raw configuration layers and the few settings the hook path needs, stdlib only.

The hook runs on every tool call, so it must not import pydantic. It reads the same
files as :mod:`memkeeper.core.config` (project ``.claude/memory/config.json``, then the
global ``~/.claude/memory-keeper/config.json``, then defaults) and falls back to the
default for any value it cannot use; ``memkeeper status`` reports such values.
"""

from __future__ import annotations

import os

from memkeeper.core import fastjson
from memkeeper.core.tokens import CARRYOVER_TOKENS, ROTATION_THRESHOLD_TOKENS

TYPE_CHECKING = False  # neither typing nor pathlib is imported at run time (hook path)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from memkeeper.core.store import StorePaths

DEFAULT_SAVE_INTERVAL = 25
DEFAULT_FLUSH_EVERY = 10
DEFAULT_RETENTION_DAYS = 30
#: Per-prompt recall injects hits at or above this confidence (seed 003's "high" tier).
DEFAULT_RECALL_CONFIDENCE = 0.92


def global_config_file() -> str:
    return os.path.join(os.path.expanduser("~"), ".claude", "memory-keeper", "config.json")


def global_config_path() -> Path:
    from pathlib import Path

    return Path(global_config_file())


def read_json_object(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The JSON object in ``path``, None if the file is missing; ValueError if unusable."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    data = fastjson.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the top level is not a JSON object")
    return data


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def config_layers(paths: StorePaths) -> list[tuple[Path, dict[str, Any] | None, str | None]]:
    """(path, data or None, error or None) for the global then the project file."""
    layers: list[tuple[Path, dict[str, Any] | None, str | None]] = []
    for path in (global_config_path(), paths.config):
        try:
            layers.append((path, read_json_object(path), None))
        except (ValueError, UnicodeDecodeError, OSError) as exc:
            layers.append((path, None, f"{path}: not valid JSON ({exc})"))
    return layers


def scaled_threshold(configured: Any, default: int) -> int:
    """``floor(configured * 0.95)`` for a configured positive number, else ``default``."""
    if isinstance(configured, bool) or not isinstance(configured, (int, float)) or configured <= 0:
        return default
    return int(configured * 0.95)  # floor: the value is positive (no math import on the hook path)


class HookSettings:
    """The settings the hooks use (a plain class: no dataclasses import on the hook path)."""

    __slots__ = (
        "carryover_tokens",
        "flush_every",
        "memory_enabled",
        "recall_enabled",
        "recall_min_confidence",
        "rotation_enabled",
        "save_interval",
        "threshold_tokens",
    )

    def __init__(
        self,
        rotation_enabled: bool = True,
        threshold_tokens: int = ROTATION_THRESHOLD_TOKENS,
        carryover_tokens: int = CARRYOVER_TOKENS,
        memory_enabled: bool = True,
        flush_every: int = DEFAULT_FLUSH_EVERY,
        save_interval: int = DEFAULT_SAVE_INTERVAL,
        recall_enabled: bool = True,
        recall_min_confidence: float = DEFAULT_RECALL_CONFIDENCE,
    ) -> None:
        self.rotation_enabled = rotation_enabled
        self.threshold_tokens = threshold_tokens
        self.carryover_tokens = carryover_tokens
        self.memory_enabled = memory_enabled
        self.flush_every = flush_every
        self.save_interval = save_interval
        self.recall_enabled = recall_enabled
        self.recall_min_confidence = recall_min_confidence

    def _key(self) -> tuple[bool, int, int, bool, int, int, bool, float]:
        return (
            self.rotation_enabled,
            self.threshold_tokens,
            self.carryover_tokens,
            self.memory_enabled,
            self.flush_every,
            self.save_interval,
            self.recall_enabled,
            self.recall_min_confidence,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookSettings) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            "HookSettings(rotation_enabled={}, threshold_tokens={}, carryover_tokens={}, memory_enabled={}, "
            "flush_every={}, save_interval={}, recall_enabled={}, recall_min_confidence={})".format(
                *self._key()
            )
        )


def _get(data: dict[str, Any], section: str, key: str) -> Any:
    part = data.get(section)
    return part.get(key) if isinstance(part, dict) else None


def _fraction(value: Any, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return default
    return float(value)


def _positive_int(value: Any, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return default
    return value


def hook_settings(paths: StorePaths) -> HookSettings:
    return hook_settings_at(os.fspath(paths.config))


def hook_settings_at(project_config: str) -> HookSettings:
    """The hook settings from the global file then ``project_config``; defaults for bad values."""
    merged: dict[str, Any] = {}
    for path in (global_config_file(), project_config):
        try:
            data = read_json_object(path)
        except (ValueError, UnicodeDecodeError, OSError):
            continue  # reported by `memkeeper status`; the hook goes on with defaults
        if data:
            merged = deep_merge(merged, data)
    rotation_enabled = _get(merged, "memoryRotation", "enabled")
    memory_enabled = _get(merged, "memory", "enabled")
    recall_enabled = _get(merged, "recall", "enabled")
    return HookSettings(
        rotation_enabled=rotation_enabled if isinstance(rotation_enabled, bool) else True,
        threshold_tokens=scaled_threshold(
            _get(merged, "memoryRotation", "thresholdTokens"), ROTATION_THRESHOLD_TOKENS
        ),
        carryover_tokens=scaled_threshold(
            _get(merged, "memoryRotation", "carryoverTokens"), CARRYOVER_TOKENS
        ),
        memory_enabled=memory_enabled if isinstance(memory_enabled, bool) else True,
        flush_every=_positive_int(_get(merged, "memory", "flushEvery"), DEFAULT_FLUSH_EVERY),
        save_interval=_positive_int(merged.get("saveInterval"), DEFAULT_SAVE_INTERVAL),
        recall_enabled=recall_enabled if isinstance(recall_enabled, bool) else True,
        recall_min_confidence=_fraction(_get(merged, "recall", "minConfidence"), DEFAULT_RECALL_CONFIDENCE),
    )
