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
    from _collections import _tuplegetter  # collections.namedtuple's field accessor (C)

    _tuple_new = tuple.__new__

    class _Fields(tuple):
        """What every lean named tuple shares: collections.namedtuple's methods, written once."""

        __slots__ = ()
        _fields: tuple[str, ...] = ()
        _field_defaults: dict[str, object] = {}

        @classmethod
        def _make(cls, iterable):
            made = _tuple_new(cls, iterable)
            if len(made) != len(cls._fields):
                raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(made)}")
            return made

        def _replace(self, **changes):
            made = self._make(map(changes.pop, self._fields, self))
            if changes:
                raise ValueError(f"Got unexpected field names: {list(changes)!r}")
            return made

        def _asdict(self):
            return dict(zip(self._fields, self, strict=True))

        def __repr__(self):
            return f"{type(self).__name__}({', '.join(f'{n}={v!r}' for n, v in zip(self._fields, self, strict=True))})"

        def __getnewargs__(self):
            return tuple(self)

    def _constructor(name, fields, defaults):
        """A generic ``__new__``: positional calls as fast as collections' compiled one. The first
        call by name compiles collections' (real parameters) and puts it on the class for the
        rest, so only a class that is called so pays for compiling it."""
        count, required = len(fields), len(fields) - len(defaults)

        def __new__(cls, *args, **named):
            if named or len(args) != count:
                if named or not required <= len(args) < count:
                    compiled = _compiled(name, fields, defaults)
                    cls.__new__ = staticmethod(compiled)
                    return compiled(cls, *args, **named)
                args += defaults[len(args) - required :]  # positional, the rest left to defaults
            return _tuple_new(cls, args)

        return __new__

    def _compiled(name, fields, defaults):
        """collections.namedtuple's ``__new__``: the fields as parameters, compiled from source."""
        names = ", ".join(fields)
        namespace = {"_tuple_new": _tuple_new, "__builtins__": {}, "__name__": f"namedtuple_{name}"}
        made = eval(f"lambda _cls, {names}: _tuple_new(_cls, ({names},))", namespace)
        made.__name__ = "__new__"
        made.__defaults__ = defaults or None
        return made

    class _NamedTupleMeta(type):
        """``class Hit(NamedTuple): ...`` made into a named tuple as typing's NamedTuple does (fields
        from the annotations, their defaults, the class's methods and docstring), without importing
        ``typing``, and without ``collections.namedtuple``, which compiles source for every class
        (fifteen classes cost a search process milliseconds)."""

        def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, object]) -> type:
            annotations = ns.get("__annotations__", {})
            assert isinstance(annotations, dict) and bases == (NamedTuple,), name
            fields = tuple(annotations)
            defaults = tuple(ns[field] for field in fields if field in ns)
            if any(field in ns for field in fields[: len(fields) - len(defaults)]):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            body = {key: value for key, value in ns.items() if key not in annotations}
            body.update(
                {field: _tuplegetter(i, f"Alias for field number {i}") for i, field in enumerate(fields)}
            )
            body.update(
                __slots__=(),
                __new__=_constructor(name, fields, defaults),
                _fields=fields,
                _field_defaults=dict(zip(fields[len(fields) - len(defaults) :], defaults, strict=True)),
                __match_args__=fields,
                __annotations__=annotations,
            )
            return type.__new__(type, name, (_Fields,), body)

    #: A base for typed named tuples: typing.NamedTuple to the type checker, a lean class at run time.
    NamedTuple = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})
