"""A record's JSON form: the fields of a dataclass under their names on the wire.

One function instead of a hand-written dict per record, so that a field added to a record is
in its JSON form without a second edit. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any


def camel(name: str) -> str:
    """``memory_bytes`` → ``memoryBytes`` (the JS plugin's spelling of JSON keys)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_fields(
    record: Any, *, camel_case: bool = False, keys: Mapping[str, str | None] | None = None
) -> dict[str, Any]:
    """The fields of the dataclass ``record`` in declaration order, one level deep (a nested value
    stays as it is): each under its name (camelCase with ``camel_case``), or under ``keys[name]``
    where given, left out where that is None."""
    renamed = keys or {}
    out: dict[str, Any] = {}
    for item in fields(record):
        key = renamed.get(item.name, camel(item.name) if camel_case else item.name)
        if key is not None:
            out[key] = getattr(record, item.name)
    return out
