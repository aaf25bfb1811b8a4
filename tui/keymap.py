"""The app's key bindings as data: ``keymap.json`` beside this module, read once.

A screen, modal or widget takes its section of the table in its class body::

    BINDINGS = keymap.bindings("browse")

A row ``"name": {"keys", "action", "description", "show", "priority"}`` of section ``browse``
becomes ``Binding(keys, action, description, show=show, priority=priority, id="browse.name")``:

- ``keys``: Textual key names, comma-separated for more than one (``"d,delete"``);
- ``action``: the class's own ``action_<name>`` (no namespace, no arguments);
- ``description``: what the key does, as the footer and the help screen (F1) show it;
- ``show``: ``false`` keeps it out of the footer (default ``true``);
- ``priority``: ``true`` lets it win over the focused widget's keys (default ``false``).

The id ("browse.search") is what a Textual keymap (``App.set_keymap``) rebinds. ``"$comment"``
keys are notes for the reader. The table and the classes are checked against each other as the
classes are made: a missing section, a name twice, a row with an unknown, missing or mistyped field,
or an action the class does not have stops the import with a :class:`KeymapError` naming the id.
JSON rather than TOML: ``json`` is loaded anyway and parses the table in a few hundredths of a
millisecond, where ``tomllib`` would add about 3 ms to the TUI's start.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from textual.binding import Binding, BindingType

TABLE = Path(__file__).with_name("keymap.json")
"""The one table of key bindings (package data)."""

_TYPES: dict[str, type] = {
    "keys": str,
    "action": str,
    "description": str,
    "show": bool,
    "priority": bool,
}
_REQUIRED = ("keys", "action", "description")
_NOTE = "$comment"


class KeymapError(Exception):
    """The key table is malformed or disagrees with a class (the message names the binding's id)."""


class KeyTable(list[BindingType]):
    """A class's ``BINDINGS``; when the class is made, every action must be one of its own."""

    def __set_name__(self, owner: type, name: str) -> None:
        for binding in self:
            assert isinstance(binding, Binding)
            if not callable(getattr(owner, f"action_{binding.action}", None)):
                raise KeymapError(
                    f"{TABLE.name}: {binding.id}: {owner.__qualname__} has no action_{binding.action}"
                )


def row_binding(ident: str, row: object) -> Binding:
    """The :class:`Binding` of one row of the table; ``ident`` is its id ("browse.search")."""
    if not isinstance(row, dict):
        raise KeymapError(f"{TABLE.name}: {ident}: a binding is an object {{keys, action, description}}")
    unknown = sorted(set(row) - set(_TYPES))
    missing = [field for field in _REQUIRED if not row.get(field)]
    if unknown or missing:
        raise KeymapError(f"{TABLE.name}: {ident}: unknown {unknown}, missing or empty {missing}")
    for field, value in row.items():
        if not isinstance(value, _TYPES[field]):
            raise KeymapError(f"{TABLE.name}: {ident}: {field} must be a {_TYPES[field].__name__}")
    action = row["action"]
    if not action.isidentifier():
        raise KeymapError(f"{TABLE.name}: {ident}: action {action!r} must be a plain action name")
    return Binding(
        row["keys"],
        action,
        row["description"],
        show=row.get("show", True),
        priority=row.get("priority", False),
        id=ident,
    )


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a name given twice (``json`` would keep the last one silently)."""
    found = dict(pairs)
    if len(found) < len(pairs):
        twice = sorted({name for name, _ in pairs if [n for n, _ in pairs].count(name) > 1})
        raise KeymapError(f"{TABLE.name}: {', '.join(twice)} given twice in one object")
    return found


def parse(text: str) -> dict[str, list[Binding]]:
    """Every section of a key table (JSON ``text``), its rows as bindings, in the table's order."""
    sections: dict[str, list[Binding]] = {}
    for section, rows in json.loads(text, object_pairs_hook=_unique).items():
        if section == _NOTE:
            continue
        if not isinstance(rows, dict):
            raise KeymapError(f"{TABLE.name}: {section}: a section is an object of bindings")
        sections[section] = [
            row_binding(f"{section}.{name}", row) for name, row in rows.items() if name != _NOTE
        ]
    return sections


@cache
def table() -> dict[str, list[Binding]]:
    """The app's key table, read from :data:`TABLE` on the first call."""
    return parse(TABLE.read_text(encoding="utf-8"))


def bindings(section: str) -> KeyTable:
    """The bindings of ``section`` of the key table, as a class's ``BINDINGS``."""
    try:
        return KeyTable(table()[section])
    except KeyError:
        raise KeymapError(f"{TABLE.name} has no section {section!r}") from None
