"""A record's JSON form: fields in declaration order, camelCase on request, renamed or left out."""

from __future__ import annotations

from dataclasses import dataclass, field

from memkeeper.core.store.records import camel, json_fields


@dataclass
class _Record:
    memory_bytes: int
    plugin_dir: str
    skipped: int = 0
    names: list[str] = field(default_factory=list)


def test_camel_joins_the_parts() -> None:
    assert camel("memory_bytes") == "memoryBytes"
    assert camel("this_memkeeper") == "thisMemkeeper"
    assert camel("plain") == "plain"


def test_fields_by_name_in_order() -> None:
    record = _Record(3, "/p", names=["a"])
    assert list(json_fields(record).items()) == [
        ("memory_bytes", 3),
        ("plugin_dir", "/p"),
        ("skipped", 0),
        ("names", ["a"]),
    ]


def test_camel_case_renamed_and_left_out() -> None:
    record = _Record(3, "/p")
    data = json_fields(record, camel_case=True, keys={"plugin_dir": "dir", "skipped": None})
    assert data == {"memoryBytes": 3, "dir": "/p", "names": []}
    assert list(data) == ["memoryBytes", "dir", "names"]


def test_nested_values_stay_as_they_are() -> None:
    inner = _Record(1, "x")
    outer = _Record(2, "y", names=[inner])  # type: ignore[list-item]
    assert json_fields(outer)["names"][0] is inner
