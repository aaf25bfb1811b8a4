"""The one configuration reader (stdlib only: the hook path uses it) and the hook settings.

Layers: the global ``~/.claude/memory-keeper/config.json``, then the project's
``.claude/memory/config.json``, then defaults. :func:`read_config` validates each layer
strictly against :data:`SCHEMA` and the merged result (the carryover must stay below the
threshold); hooks, the CLI and the TUI all read through it, and
:mod:`memkeeper.core.config` only gives the validated values a typed (pydantic) view.

One documented behaviour for every value, everywhere:

- a value of the wrong type is an error, never coerced: ``"enabled": "false"``,
  ``"flushEvery": "3"`` and ``"thresholdTokens": "10000"`` are errors (strings);
- a count must be a whole number: ``10000.0`` is 10000, ``10000.9`` is an error; a token
  count or an interval must be above 0 (``0`` is an error);
- the JS plugin's own keys (``keepRaw``, ``quietStop``, ``rulesInjectionFrequency``) are
  known; any other unknown key is a warning, never an error;
- an error is one line naming the file and the key (:class:`ConfigError`). The CLI and the
  TUI show it (exit 2); the hooks use the defaults for everything and log it once to
  ``logs/memkeeper.log`` (again only when the error changes).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from memkeeper.core import fastjson
from memkeeper.core.tokens import CARRYOVER_TOKENS, ROTATION_THRESHOLD_TOKENS

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from memkeeper.core.store import StorePaths


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message is one line naming file and key."""


DEFAULT_SAVE_INTERVAL = 25
DEFAULT_FLUSH_EVERY = 10
DEFAULT_RETENTION_DAYS = 30
#: Per-prompt recall injects hits at or above this confidence: a calibrated confidence (see
#: search.scoring.calibrated) at which 81 % of injections held an answering turn on LoCoMo
#: (docs/recall.md); the "high" tier (0.92) injected for fewer than one question in five.
DEFAULT_RECALL_CONFIDENCE = 0.6


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


# --- the schema ----------------------------------------------------------------------
# A leaf is (kind, low) with kind one of "bool", "count" (a whole number >= low), "number"
# (>= low), "fraction" (0..1), "str", "argv" (a list of strings, or null), or a tuple of the
# allowed strings; a section is a dict of leaves.

SUMMARIZER_BACKENDS = ("auto", "claude", "anthropic", "command", "extractive")
SCHEMA: dict[str, Any] = {
    "saveInterval": ("count", 1),
    # the JS plugin's own keys: known (read by it, not by us), so never warned about
    "keepRaw": ("bool", 0),
    "quietStop": ("bool", 0),
    "rulesInjectionFrequency": ("count", 1),
    "memoryRotation": {
        "enabled": ("bool", 0),
        "thresholdTokens": ("count", 1),
        "carryoverTokens": ("count", 1),
    },
    "memory": {"enabled": ("bool", 0), "flushEvery": ("count", 1), "retentionDays": ("count", 1)},
    "summarizer": {
        "backend": (SUMMARIZER_BACKENDS, 0),
        "model": ("str", 0),
        "command": ("argv", 0),
        "timeoutSeconds": ("number", 0.001),
        "minCallChars": ("count", 0),
        "apiKeyEnv": ("str", 0),
    },
    "budget": {"dailyCalls": ("count", 0), "dailyTokens": ("count", 0)},
    "recall": {"enabled": ("bool", 0), "minConfidence": ("fraction", 0)},
}


def _type_name(value: Any) -> str:
    if isinstance(value, str):
        return f"the string {fastjson.dumps(value)}"
    if value is None:
        return "null"
    return fastjson.dumps(value) if isinstance(value, (bool, int, float)) else type(value).__name__


def _choice_error(value: Any, allowed: tuple[str, ...]) -> str | None:
    return None if value in allowed else f"must be one of {', '.join(allowed)}, not {_type_name(value)}"


def _simple_error(value: Any, kind: str) -> str | None:
    """bool, str and argv leaves."""
    if kind == "bool":
        return None if isinstance(value, bool) else f"must be true or false, not {_type_name(value)}"
    if kind == "str":
        return None if isinstance(value, str) else f"must be a string, not {_type_name(value)}"
    ok = value is None or (isinstance(value, list) and value and all(isinstance(v, str) for v in value))
    return None if ok else f"must be a list of strings (a command and its arguments), not {_type_name(value)}"


def _number_error(value: Any, kind: str, low: float) -> str | None:
    """count, number and fraction leaves."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number, not {_type_name(value)}"
    if kind == "count" and not float(value).is_integer():
        return f"must be a whole number, not {_type_name(value)}"
    if kind == "fraction":
        return None if 0 <= value <= 1 else f"must be between 0 and 1, not {_type_name(value)}"
    if value < low:
        return f"must be {'above 0' if low > 0 else 'at least 0'}, not {_type_name(value)}"
    return None


def _leaf_error(value: Any, kind: Any, low: float) -> str | None:
    """Why ``value`` does not fit the leaf, or None when it does."""
    if isinstance(kind, tuple):
        return _choice_error(value, kind)
    if kind in ("bool", "str", "argv"):
        return _simple_error(value, kind)
    return _number_error(value, kind, low)


def validate_layer(path: str, data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``data`` checked against :data:`SCHEMA` (counts made ``int``) and its unknown keys
    as warnings; ConfigError (one line: file, key, why) for the first bad value."""
    clean: dict[str, Any] = {}
    warnings: list[str] = []
    for key, value in data.items():
        spec = SCHEMA.get(key)
        if spec is None:
            warnings.append(f"{path}: unknown key '{key}' (ignored)")
            clean[key] = value
        elif isinstance(spec, dict):
            if not isinstance(value, dict):
                raise ConfigError(
                    f"{path}: bad value for '{key}': must be an object, not {_type_name(value)}"
                )
            clean[key] = _validate_section(path, key, spec, value, warnings)
        else:
            clean[key] = _checked(path, key, value, spec)
    return clean, warnings


def _validate_section(
    path: str, name: str, spec: dict[str, Any], section: dict[str, Any], warnings: list[str]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in section.items():
        leaf = spec.get(key)
        if leaf is None:
            warnings.append(f"{path}: unknown key '{name}.{key}' (ignored)")
            out[key] = value
        else:
            out[key] = _checked(path, f"{name}.{key}", value, leaf)
    return out


def _checked(path: str, key: str, value: Any, leaf: tuple[Any, float]) -> Any:
    why = _leaf_error(value, *leaf)
    if why:
        raise ConfigError(f"{path}: bad value for '{key}': {why}")
    return int(value) if leaf[0] == "count" else value


def read_config(project_config: str) -> tuple[dict[str, Any], list[str]]:
    """The merged, validated configuration (global, then ``project_config``) and its warnings.

    Raises ConfigError: a file that is not a JSON object, a bad value, or a carryover that
    is not below the rotation threshold (which would re-archive memory.md on every event).
    """
    merged: dict[str, Any] = {}
    warnings: list[str] = []
    rotation_source = ""
    for path in (global_config_file(), project_config):
        try:
            data = read_json_object(path)
        except (ValueError, UnicodeDecodeError, OSError) as exc:
            raise ConfigError(f"{path}: not valid JSON ({exc})") from None
        if data is None:
            continue
        clean, found = validate_layer(path, data)
        warnings.extend(found)
        if isinstance(clean.get("memoryRotation"), dict):
            rotation_source = path
        merged = deep_merge(merged, clean)
    threshold = scaled_threshold(_get(merged, "memoryRotation", "thresholdTokens"), ROTATION_THRESHOLD_TOKENS)
    carryover = scaled_threshold(_get(merged, "memoryRotation", "carryoverTokens"), CARRYOVER_TOKENS)
    if carryover >= threshold:
        raise ConfigError(
            f"{rotation_source or project_config}: bad value for 'memoryRotation.carryoverTokens': the carryover "
            f"({carryover} tokens) must stay below the rotation threshold ({threshold} tokens)"
        )
    return merged, warnings


def scaled_threshold(configured: Any, default: int) -> int:
    """``floor(configured * 0.95)`` for a configured positive number, else ``default``."""
    if isinstance(configured, bool) or not isinstance(configured, (int, float)) or configured <= 0:
        return default
    return int(configured * 0.95)  # floor: the value is positive (no math import on the hook path)


class HookSettings(NamedTuple):
    """The settings the hooks use.

    A named tuple, not a dataclass: importing ``dataclasses`` (and its ``inspect``) costs a
    hook 14 ms of CPU, more than the counting hooks' budget leaves (docs/hook-path.md).
    """

    rotation_enabled: bool = True
    threshold_tokens: int = ROTATION_THRESHOLD_TOKENS
    carryover_tokens: int = CARRYOVER_TOKENS
    memory_enabled: bool = True
    flush_every: int = DEFAULT_FLUSH_EVERY
    save_interval: int = DEFAULT_SAVE_INTERVAL
    recall_enabled: bool = True
    recall_min_confidence: float = DEFAULT_RECALL_CONFIDENCE


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
    """The hook settings from :func:`read_config`; on a ConfigError, the defaults (logged once)."""
    try:
        merged, _warnings = read_config(project_config)
    except ConfigError as exc:
        _log_config_error_once(os.path.dirname(project_config), str(exc))
        return HookSettings()
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


def _log_config_error_once(root: str, message: str) -> None:
    """One line in the store's log the first time this config error is seen (never raises)."""
    if not os.path.isdir(root):
        return
    try:
        from memkeeper.core.atomic import atomic_write_text

        seen = os.path.join(root, ".state", "config-error.txt")
        try:
            with open(seen, encoding="utf-8") as handle:
                if handle.read() == message:
                    return
        except OSError:
            pass
        from memkeeper.core.jobs import log_line

        log_line(os.path.join(root, "logs"), f"config: {message}; using the defaults")
        atomic_write_text(seen, message)
    except Exception:  # the hook must go on whatever happens here
        pass
