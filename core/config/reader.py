"""The one configuration reader (stdlib only: the hook path uses it) and the hook settings.

Layers: the defaults, the global ``~/.claude/memory-keeper/config.json``, then the
project's ``.claude/memory/config.json`` (the project wins, key by key). :func:`read_config`
validates each layer strictly against :data:`~memkeeper.core.config.table.FIELDS` (the
keys, kinds, defaults and bounds, generated from the one declaration: the pydantic models
of :mod:`memkeeper.core.config.model`, which the hook path may not import) and the merged result
(the carryover must stay below the threshold); hooks, the CLI and the TUI all read
through it. A long-lived reader (the resident lookup) reads again when a file changes
(:class:`memkeeper.core.recall.lookup.KeptSettings`); a hook reads at each event.

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

from .. import store
from ..basics import fastjson
from ..basics.tokens import CARRYOVER_TOKENS, ROTATION_THRESHOLD_TOKENS
from .table import FIELDS

# The hook path imports this module without ``typing`` (docs/hook-path.md): a JSON value is
# ``object`` (narrowed where it is used), and the store's classes are named through their
# package (``store.paths.StorePaths``), which mypy resolves and nothing evaluates at run time.


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message is one line naming file and key."""


#: How often a session is flushed by default (``memory.flushEvery``, declared in core/config/model.py).
def _declared_bool(key: str) -> bool:
    value = FIELDS[key][1]
    if not isinstance(value, bool):
        raise TypeError(f"{key}: the declared default {value!r} is not a bool")
    return value


def _declared_number(key: str) -> float:
    value = FIELDS[key][1]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{key}: the declared default {value!r} is not a number")
    return value


def _declared_int(key: str) -> int:
    value = _declared_number(key)
    if not isinstance(value, int):
        raise TypeError(f"{key}: the declared default {value!r} is not a whole number")
    return value


DEFAULT_FLUSH_EVERY = _declared_int("memory.flushEvery")
#: Per-prompt recall's bar (``recall.minConfidence``): see core/config/model.py and docs/recall.md.
DEFAULT_RECALL_CONFIDENCE = _declared_number("recall.minConfidence")


def global_config_file() -> str:
    return os.path.join(os.path.expanduser("~"), ".claude", "memory-keeper", "config.json")


def read_json_object(path: str | os.PathLike[str]) -> dict[str, object] | None:
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


def deep_merge(base: dict[str, object], override: dict[str, object]) -> dict[str, object]:
    merged = dict(base)
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = value
    return merged


# --- the schema ------------------------------------------------------------------------
# FIELDS (generated from the pydantic models of memkeeper.core.config.model, the one declaration):
# a dotted key → (kind, default, bounds). A top-level key is a leaf or a section of leaves.

SECTIONS = frozenset(key.split(".", 1)[0] for key in FIELDS if "." in key)


def default(key: str) -> object:
    """The declared default of the dotted ``key`` (None: unset, the reader derives it)."""
    return FIELDS[key][1]


def _type_name(value: object) -> str:
    if isinstance(value, str):
        return f"the string {fastjson.dumps(value)}"
    if value is None:
        return "null"
    return fastjson.dumps(value) if isinstance(value, (bool, int, float)) else type(value).__name__


def _number(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def _simple_error(value: object, kind: str) -> str | None:
    """bool, str and argv leaves."""
    if kind == "bool":
        return None if isinstance(value, bool) else f"must be true or false, not {_type_name(value)}"
    if kind == "str":
        return None if isinstance(value, str) else f"must be a string, not {_type_name(value)}"
    ok = value is None or (isinstance(value, list) and value and all(isinstance(v, str) for v in value))
    return None if ok else f"must be a list of strings (a command and its arguments), not {_type_name(value)}"


def _number_error(value: object, kind: str, bounds: tuple[tuple[str, float], ...]) -> str | None:
    """int and float leaves: a number (an int a whole one) within ``bounds``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number, not {_type_name(value)}"
    if kind == "int" and not float(value).is_integer():
        return f"must be a whole number, not {_type_name(value)}"
    limits = dict(bounds)
    low, high = limits.get("ge", limits.get("gt")), limits.get("le")
    inside = (
        ("gt" not in limits or value > limits["gt"])
        and ("ge" not in limits or value >= limits["ge"])
        and (high is None or value <= high)
    )
    if inside:
        return None
    if low is not None and high is not None:
        return f"must be between {_number(low)} and {_number(high)}, not {_type_name(value)}"
    if "gt" in limits:
        return f"must be above {_number(limits['gt'])}, not {_type_name(value)}"
    return f"must be at least {_number(low if low is not None else 0)}, not {_type_name(value)}"


def leaf_error(key: str, value: object) -> str | None:
    """Why ``value`` does not fit the dotted ``key``, or None when it does."""
    kind, _default, bounds = FIELDS[key]
    if isinstance(kind, tuple):
        return None if value in kind else f"must be one of {', '.join(kind)}, not {_type_name(value)}"
    if kind in ("bool", "str", "argv"):
        return _simple_error(value, kind)
    return _number_error(value, str(kind), bounds)


def validate_layer(path: str, data: dict[str, object]) -> tuple[dict[str, object], list[str]]:
    """``data`` checked against :data:`FIELDS` (whole numbers made ``int``) and its unknown keys
    as warnings; ConfigError (one line: file, key, why) for the first bad value."""
    clean: dict[str, object] = {}
    warnings: list[str] = []
    for key, value in data.items():
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(
                    f"{path}: bad value for '{key}': must be an object, not {_type_name(value)}"
                )
            clean[key] = _validate_section(path, key, value, warnings)
        elif key in FIELDS:
            clean[key] = _checked(path, key, value)
        else:
            warnings.append(f"{path}: unknown key '{key}' (ignored)")
            clean[key] = value
    return clean, warnings


def _validate_section(
    path: str, name: str, section: dict[str, object], warnings: list[str]
) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in section.items():
        dotted = f"{name}.{key}"
        if dotted in FIELDS:
            out[key] = _checked(path, dotted, value)
        else:
            warnings.append(f"{path}: unknown key '{dotted}' (ignored)")
            out[key] = value
    return out


def _checked(path: str, key: str, value: object) -> object:
    why = leaf_error(key, value)
    if why:
        raise ConfigError(f"{path}: bad value for '{key}': {why}")
    return int(value) if FIELDS[key][0] == "int" and isinstance(value, (int, float)) else value


def read_layer(path: str) -> dict[str, object] | None:
    """The JSON object of one config file as written (None: no file); ConfigError if unusable."""
    try:
        return read_json_object(path)
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None


def read_config(
    project_config: str, instead: tuple[str, dict[str, object]] | None = None
) -> tuple[dict[str, object], list[str]]:
    """The merged, validated configuration (global, then ``project_config``) and its warnings.

    ``instead``: (a file, its would-be content) read in place of that file (a change checked
    before it is written). Raises ConfigError: a file that is not a JSON object, a bad value,
    or a carryover that is not below the rotation threshold (which would re-archive
    memory.md on every event).
    """
    merged: dict[str, object] = {}
    warnings: list[str] = []
    rotation_source = ""
    for path in (global_config_file(), project_config):
        data = instead[1] if instead is not None and instead[0] == path else read_layer(path)
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


def scaled_threshold(configured: object, default: int) -> int:
    """``floor(configured * 0.95)`` for a configured positive number, else ``default``."""
    if isinstance(configured, bool) or not isinstance(configured, (int, float)) or configured <= 0:
        return default
    return int(configured * 0.95)  # floor: the value is positive (no math import on the hook path)


class HookSettings(tuple[bool, int, int, bool, int, int, bool, float]):
    """The settings the hooks use; each default is the declared one (:data:`FIELDS`).

    A tuple with named fields, written out: importing ``dataclasses`` (and its ``inspect``) or
    ``typing`` (for ``NamedTuple``) costs a counting hook more than its budget leaves
    (docs/hook-path.md).
    """

    __slots__ = ()

    def __new__(
        cls,
        rotation_enabled: bool = _declared_bool("memoryRotation.enabled"),
        threshold_tokens: int = ROTATION_THRESHOLD_TOKENS,
        carryover_tokens: int = CARRYOVER_TOKENS,
        memory_enabled: bool = _declared_bool("memory.enabled"),
        flush_every: int = DEFAULT_FLUSH_EVERY,
        save_interval: int = _declared_int("saveInterval"),
        recall_enabled: bool = _declared_bool("recall.enabled"),
        recall_min_confidence: float = DEFAULT_RECALL_CONFIDENCE,
    ) -> HookSettings:
        return tuple.__new__(
            cls,
            (
                rotation_enabled,
                threshold_tokens,
                carryover_tokens,
                memory_enabled,
                flush_every,
                save_interval,
                recall_enabled,
                recall_min_confidence,
            ),
        )

    @property
    def rotation_enabled(self) -> bool:
        return self[0]

    @property
    def threshold_tokens(self) -> int:
        return self[1]

    @property
    def carryover_tokens(self) -> int:
        return self[2]

    @property
    def memory_enabled(self) -> bool:
        return self[3]

    @property
    def flush_every(self) -> int:
        return self[4]

    @property
    def save_interval(self) -> int:
        return self[5]

    @property
    def recall_enabled(self) -> bool:
        return self[6]

    @property
    def recall_min_confidence(self) -> float:
        return self[7]


def _get(data: dict[str, object], section: str, key: str) -> object:
    part = data.get(section)
    return part.get(key) if isinstance(part, dict) else None


def value_of(merged: dict[str, object], key: str) -> object:
    """The dotted ``key``'s value in a validated configuration, else its declared default."""
    section, _, leaf = key.rpartition(".")
    found = _get(merged, section, leaf) if section else merged.get(leaf)
    return default(key) if found is None else found


def hook_settings(paths: store.paths.StorePaths) -> HookSettings:
    return hook_settings_at(os.fspath(paths.config))


def hook_settings_at(project_config: str) -> HookSettings:
    """The hook settings from :func:`read_config`; on a ConfigError, the defaults (logged once)."""
    try:
        merged, _warnings = read_config(project_config)
    except ConfigError as exc:
        _log_config_error_once(os.path.dirname(project_config), str(exc))
        return HookSettings()
    return HookSettings(
        rotation_enabled=_bool_of(merged, "memoryRotation.enabled"),
        threshold_tokens=scaled_threshold(
            _get(merged, "memoryRotation", "thresholdTokens"), ROTATION_THRESHOLD_TOKENS
        ),
        carryover_tokens=scaled_threshold(
            _get(merged, "memoryRotation", "carryoverTokens"), CARRYOVER_TOKENS
        ),
        memory_enabled=_bool_of(merged, "memory.enabled"),
        flush_every=_int_of(merged, "memory.flushEvery"),
        save_interval=_int_of(merged, "saveInterval"),
        recall_enabled=_bool_of(merged, "recall.enabled"),
        recall_min_confidence=float(_number_of(merged, "recall.minConfidence")),
    )


# A validated configuration holds values of their declared kinds; these give them typed (the
# declared default for what could only be another kind).
def _bool_of(merged: dict[str, object], key: str) -> bool:
    value = value_of(merged, key)
    return value if isinstance(value, bool) else _declared_bool(key)


def _int_of(merged: dict[str, object], key: str) -> int:
    value = value_of(merged, key)
    return value if isinstance(value, int) and not isinstance(value, bool) else _declared_int(key)


def _number_of(merged: dict[str, object], key: str) -> float:
    value = value_of(merged, key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else _declared_number(key)


def _log_config_error_once(root: str, message: str) -> None:
    """One line in the store's log the first time this config error is seen (never raises)."""
    if not os.path.isdir(root):
        return
    try:
        from ..store.atomic import atomic_write_text

        seen = os.path.join(root, ".state", "config-error.txt")
        try:
            with open(seen, encoding="utf-8") as handle:
                if handle.read() == message:
                    return
        except OSError:
            pass
        from ..store.jobs import log_line

        log_line(os.path.join(root, "logs"), f"config: {message}; using the defaults")
        atomic_write_text(seen, message)
    except Exception:  # the hook must go on whatever happens here
        pass
