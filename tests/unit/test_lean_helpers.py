"""The lean stand-ins the search and hook processes use instead of costly imports behave as what
they stand for: core.plain.NamedTuple (no collections.namedtuple, which compiles source for every
class) as collections' named tuples, core.fastjson as the json package."""

from __future__ import annotations

import copy
import pickle
from collections import namedtuple

import pytest

from memkeeper.core.plain import NamedTuple


class Point(NamedTuple):
    """A point."""

    x: int
    y: int
    label: str = "p"
    tags: tuple[str, ...] = ()

    @property
    def norm(self) -> int:
        return abs(self.x) + abs(self.y)

    def moved(self, dx: int) -> Point:
        return self._replace(x=self.x + dx)


Reference = namedtuple("Reference", ["x", "y", "label", "tags"], defaults=["p", ()])


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1, 2), {}),
        ((1, 2, "q"), {}),
        ((1, 2, "q", ("a",)), {}),
        ((1,), {"y": 2}),
        ((), {"x": 1, "y": 2, "tags": ("t",)}),
        ((1, 2), {"label": "z"}),
    ],
)
def test_it_is_built_and_read_as_collections_builds_it(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    point = Point(*args, **kwargs)  # type: ignore[arg-type]
    reference = Reference(*args, **kwargs)
    assert tuple(point) == tuple(reference) and hash(point) == hash(reference)
    assert (point.x, point.y, point.label, point.tags) == (
        reference.x,
        reference.y,
        reference.label,
        reference.tags,
    )
    assert point._asdict() == reference._asdict()
    assert repr(point) == repr(reference).replace("Reference", "Point")


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((1,), {}), ((1, 2, "q", (), 5), {}), ((1, 2), {"nope": 1}), ((1, 2), {"x": 3})],
)
def test_a_wrong_call_is_refused_as_collections_refuses_it(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    with pytest.raises(TypeError):
        Reference(*args, **kwargs)
    with pytest.raises(TypeError):
        Point(*args, **kwargs)  # type: ignore[arg-type]


def test_its_helpers_methods_and_copies() -> None:
    point = Point(1, -2)
    assert Point._fields == ("x", "y", "label", "tags") and Point._field_defaults == {
        "label": "p",
        "tags": (),
    }
    assert Point.__match_args__ == Point._fields and Point.__doc__ == "A point."
    assert Point._make([3, 4, "m", ()]) == (3, 4, "m", ())
    with pytest.raises(TypeError):
        Point._make([3, 4])
    assert point._replace(label="r") == (1, -2, "r", ())
    with pytest.raises(ValueError):
        point._replace(z=1)  # type: ignore[call-arg]
    assert point.norm == 3 and point.moved(2) == (3, -2, "p", ())
    assert pickle.loads(pickle.dumps(point)) == point and type(pickle.loads(pickle.dumps(point))) is Point
    assert copy.copy(point) == point and copy.deepcopy(point) == point
    assert isinstance(point, tuple) and not hasattr(point, "__dict__")
    match point:
        case Point(x, y):
            assert (x, y) == (1, -2)


@pytest.mark.parametrize(
    "value",
    [{"a": [1, 2.5, None, True], "b": {"c": 'é\n"q"'}}, [float("nan"), float("inf")], "text", 3, [], {}],
)
def test_fastjson_text_is_json_dumps(value: object) -> None:
    """The search path serialises tool inputs with core.fastjson.text, not the json package."""
    import json

    from memkeeper.core import fastjson

    assert fastjson.text(value) == json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize(
    "line", ['{"a": 1}', '[1, "x"] tail', "nul", '"open', "  {}", "{} ", "1e5", "-Infinity"]
)
def test_fastjson_raw_decode_is_the_decoders(line: str) -> None:
    import json

    from memkeeper.core import fastjson

    try:
        expected: object = json.JSONDecoder().raw_decode(line)
    except ValueError:
        expected = ValueError
    try:
        got: object = fastjson.raw_decode(line)
    except ValueError:
        got = ValueError
    if line.startswith(" "):  # raw_decode skips leading whitespace, as json.loads does
        expected = json.JSONDecoder().raw_decode(line, 2)
    assert got == expected
