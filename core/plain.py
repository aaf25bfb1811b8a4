"""Value classes for the hook path, where importing ``dataclasses`` (and ``inspect`` with it)
costs milliseconds on every tool call.

A subclass lists its fields in ``__slots__``, in the order its ``__init__`` takes them;
equality, hashing and ``repr`` follow that list, as a dataclass's would (a ``_field``
kept read-only behind a property shows as ``field``).
"""

from __future__ import annotations


class Plain:
    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and other._values() == self._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name.lstrip('_')}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"
