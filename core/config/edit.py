"""Reading and changing the configuration key by key: what ``memkeeper config`` and the TUI's
settings screen share.

Each value comes with its source: ``default`` (declared in :mod:`memkeeper.core.config.model`),
``global`` (``~/.claude/memory-keeper/config.json``) or ``project`` (the store's
``config.json``; it wins). A change is parsed and checked against the one schema
(:data:`~memkeeper.core.config.table.FIELDS`), then the whole configuration it would make
is read as the hooks will read it (:func:`~memkeeper.core.config.reader.read_config`); only then
is the layer written, atomically (:mod:`memkeeper.core.store.atomic`) under a lock (the store
lock for the project's file), with every other key kept as it was: unknown keys, the JS
plugin's keys, their order. A refused change is a :class:`ConfigError` of one line and
writes nothing; so is a layer file that cannot be parsed (it is never reset).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Literal

from ..store.paths import StorePaths
from ..store.records import json_fields
from .reader import (
    ConfigError,
    default,
    global_config_file,
    leaf_error,
    read_config,
    read_layer,
)
from .table import FIELDS

Layer = Literal["project", "global"]
Source = Literal["default", "global", "project"]
LAYERS: tuple[Layer, ...] = ("project", "global")
_TRUE = ("true", "on", "yes", "1")
_FALSE = ("false", "off", "no", "0")


@dataclass(frozen=True)
class Setting:
    """One key: its value in effect, where that value comes from, its default and explanation."""

    key: str
    value: Any
    source: Source
    default: Any
    description: str
    #: The value each layer sets (absent: not set there).
    layers: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return json_fields(self)


def layer_file(paths: StorePaths, layer: Layer) -> str:
    return global_config_file() if layer == "global" else os.fspath(paths.config)


def check_key(key: str) -> None:
    """ConfigError (naming the closest key) unless ``key`` is a known dotted key."""
    if key not in FIELDS:
        from difflib import get_close_matches

        close = get_close_matches(key, list(FIELDS), n=1, cutoff=0.5)
        hint = f"; did you mean '{close[0]}'?" if close else " (see: memkeeper config list)"
        raise ConfigError(f"unknown setting '{key}'{hint}")


def _lookup(data: dict[str, Any] | None, key: str) -> tuple[bool, Any]:
    section, _, leaf = key.rpartition(".")
    part = (data or {}).get(section) if section else data
    if isinstance(part, dict) and leaf in part:
        return True, part[leaf]
    return False, None


def settings(paths: StorePaths) -> list[Setting]:
    """Every key with its value in effect and its source (ConfigError for a file that does not
    read: the hooks would be using the defaults)."""
    from .model import field_info

    merged, _warnings = read_config(os.fspath(paths.config))
    layers = {layer: read_layer(layer_file(paths, layer)) for layer in LAYERS}
    out: list[Setting] = []
    for key, info in field_info().items():
        found: dict[str, Any] = {}
        for layer in LAYERS:
            ok, value = _lookup(layers[layer], key)
            if ok:
                found[layer] = value
        source: Source = "project" if "project" in found else "global" if "global" in found else "default"
        _ok, value = _lookup(merged, key)
        out.append(
            Setting(
                key=key,
                value=value if source != "default" else default(key),
                source=source,
                default=default(key),
                description=info.description or "",
                layers=found,
            )
        )
    return out


def setting(paths: StorePaths, key: str) -> Setting:
    check_key(key)
    return next(item for item in settings(paths) if item.key == key)


def parse_value(key: str, text: str) -> Any:
    """The value ``text`` (as typed on a command line or in a field) means for ``key``;
    ConfigError (one line) when it cannot be one."""
    check_key(key)
    kind = FIELDS[key][0]
    word = text.strip()
    value: Any = word
    if kind == "bool" and word.lower() in _TRUE + _FALSE:
        value = word.lower() in _TRUE
    elif kind in ("int", "float"):
        value = _number(word)
    elif kind == "argv":
        value = _argv(key, word)
    why = leaf_error(key, value)
    if why:
        raise ConfigError(f"bad value for '{key}': {why}")
    return int(value) if kind == "int" else value


def _number(word: str) -> Any:
    cleaned = word.replace("_", "").replace(",", "")
    for convert in (int, float):
        try:
            return convert(cleaned)
        except ValueError:
            continue
    return word  # refused by the schema: "must be a number, not the string …"


def _argv(key: str, word: str) -> Any:
    if word in ("", "null"):
        return None
    if word.startswith("["):
        try:
            return json.loads(word)
        except ValueError as exc:
            raise ConfigError(f"bad value for '{key}': not a JSON list ({exc})") from None
    import shlex

    try:
        return shlex.split(word)
    except ValueError as exc:
        raise ConfigError(f"bad value for '{key}': {exc}") from None


def set_value(paths: StorePaths, key: str, value: Any, layer: Layer = "project") -> None:
    """Write ``key = value`` into ``layer``'s file, checked first (see the module's docstring)."""
    check_key(key)
    why = leaf_error(key, value)
    if why:
        raise ConfigError(f"bad value for '{key}': {why}")
    _change(paths, layer, key, lambda section: section.__setitem__(key.rpartition(".")[2], value))


def unset_value(paths: StorePaths, key: str, layer: Layer = "project") -> bool:
    """Remove ``key`` from ``layer``'s file (then the other layer or the default applies);
    False when that file did not set it."""
    check_key(key)
    leaf = key.rpartition(".")[2]
    removed: list[bool] = []
    _change(paths, layer, key, lambda section: removed.append(section.pop(leaf, _MISSING) is not _MISSING))
    return bool(removed and removed[0])


_MISSING = object()


def _change(paths: StorePaths, layer: Layer, key: str, edit: Any) -> None:
    """Under the layer's lock: read its file as written, ``edit`` the section holding ``key``,
    check the configuration it makes, write it atomically (nothing when it did not change)."""
    from ..store.lock import file_lock, reentrant_lock

    path = layer_file(paths, layer)
    if layer == "project":
        from ..store.paths import ensure_store

        ensure_store(paths)
        lock: Any = reentrant_lock(paths.lock)
    else:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        lock = file_lock(os.path.join(os.path.dirname(path), ".config.lock"))
    with lock:
        data = read_layer(path)
        before = json.dumps(data)
        data = {} if data is None else data
        section_name, _, _leaf = key.rpartition(".")
        section = data
        if section_name:
            found = data.get(section_name)
            if found is not None and not isinstance(found, dict):
                raise ConfigError(f"{path}: '{section_name}' is not an object: fix the file by hand first")
            if found is None:
                found = data[section_name] = {}
            section = found
        edit(section)
        if section_name and not section:
            del data[section_name]  # nothing left in a section this change emptied
        if json.dumps(data) == before or (before == "null" and not data):
            return  # no change (an unset of what was never set writes no file either)
        read_config(os.fspath(paths.config), instead=(path, data))  # raises: nothing written
        from ..store.atomic import atomic_write_json

        atomic_write_json(path, data)
