"""Value classes for the hook path and ``memkeeper search``, where importing ``dataclasses`` (and
``inspect`` with it) or ``typing`` costs milliseconds on every run.

A :class:`Plain` subclass lists its fields in ``__slots__``, in the order its ``__init__`` takes
them; equality, hashing and ``repr`` follow that list, as a dataclass's would (a ``_field``
kept read-only behind a property shows as ``field``). :data:`NamedTuple` is typing's to the
type checker and a lean equivalent at run time.
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


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:

    class _NamedTupleMeta(type):
        """``class Hit(NamedTuple): ...`` made into a ``collections.namedtuple``, as typing's
        NamedTuple does (fields from the annotations, their defaults, the class's methods and
        docstring), without importing ``typing``: the search path would pay milliseconds for it."""

        def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, object]) -> type:
            from collections import namedtuple

            annotations = ns.get("__annotations__", {})
            assert isinstance(annotations, dict) and bases == (NamedTuple,), name
            defaults = [ns[field] for field in annotations if field in ns]
            made: type = namedtuple(name, annotations, defaults=defaults, module=str(ns["__module__"]))
            made.__annotations__ = annotations
            for key, value in ns.items():
                if key not in ("__module__", "__annotations__") and key not in annotations:
                    setattr(made, key, value)
            return made

    #: A base for typed named tuples: typing.NamedTuple to the type checker, a lean class at run time.
    NamedTuple = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})
