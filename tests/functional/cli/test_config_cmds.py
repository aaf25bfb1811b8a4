"""``memkeeper config``: list, get, set and unset through the one schema; each value's source;
a bad value refused in one line (exit 2) with nothing written; every other key kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memkeeper.cli.main import main
from memkeeper.core.config.reader import hook_settings
from memkeeper.core.store.paths import StorePaths
from tests.refused_settings import REFUSED_VALUES


def _global(home: Path) -> Path:
    return home / ".claude" / "memory-keeper" / "config.json"


def _run(store: StorePaths, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["--project", str(store.project), "config", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _json(store: StorePaths, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code, out, _err = _run(store, capsys, *args, "--json")
    assert code == 0
    return json.loads(out)


def test_set_writes_the_chosen_layer_and_get_names_the_source(
    store: StorePaths, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _json(store, capsys, "get", "memory.flushEvery")["source"] == "default"
    assert _run(store, capsys, "set", "memory.flushEvery", "4", "--global")[0] == 0
    assert json.loads(_global(home).read_text()) == {"memory": {"flushEvery": 4}}
    got = _json(store, capsys, "get", "memory.flushEvery")
    assert (got["value"], got["source"]) == (4, "global")
    assert _run(store, capsys, "set", "memory.flushEvery", "7")[0] == 0  # the project's file by default
    got = _json(store, capsys, "get", "memory.flushEvery")
    assert (got["value"], got["source"], got["layers"]) == (7, "project", {"project": 7, "global": 4})
    assert hook_settings(store).flush_every == 7  # what the hooks read
    listed = {row["key"]: row for row in _json(store, capsys, "list")["settings"]}
    assert listed["memory.flushEvery"]["source"] == "project"
    assert listed["recall.enabled"]["source"] == "default" and listed["recall.enabled"]["description"]
    code, out, _err = _run(store, capsys, "list")
    row = next(line for line in out.splitlines() if line.startswith("memory.flushEvery"))
    assert "7" in row and "project config" in row
    assert _run(store, capsys, "unset", "memory.flushEvery")[0] == 0
    assert _json(store, capsys, "get", "memory.flushEvery")["source"] == "global"


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        *REFUSED_VALUES,
        ("memory.flushEvery", "three", "must be a number"),
        ("memory.enabled", "maybe", "must be true or false"),
        ("summarizer.backend", "gpt", "must be one of"),
        ("memoryRotation.carryoverTokens", "30000", "below the rotation threshold"),
        ("memory.flushEvry", "3", "did you mean 'memory.flushEvery'"),
    ],
)
def test_a_bad_value_is_refused_in_one_line_and_nothing_is_written(
    store: StorePaths, capsys: pytest.CaptureFixture[str], key: str, value: str, why: str
) -> None:
    store.config.write_text('{"memory": {"flushEvery": 5}, "mine": [1, 2]}')
    before = store.config.read_bytes()
    code, out, err = _run(store, capsys, "set", key, value)
    assert code == 2 and out == "" and why in err and len(err.strip().splitlines()) == 1
    assert store.config.read_bytes() == before


def test_unknown_and_js_keys_are_kept_in_order(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    original = {
        "keepRaw": True,
        "mine": {"deep": [1, {"x": None}]},
        "memory": {"enabled": True, "flushEvery": 5, "retentionDays": 14, "futureKey": "kept"},
        "zLast": "still last",
    }
    store.config.write_text(json.dumps(original))
    assert _run(store, capsys, "set", "memory.enabled", "off")[0] == 0
    written = json.loads(store.config.read_text())
    assert list(written) == list(original) and written["mine"] == original["mine"]
    assert written["memory"] == {"enabled": False, "flushEvery": 5, "retentionDays": 14, "futureKey": "kept"}
    assert written["keepRaw"] is True and written["zLast"] == "still last"


def test_a_file_that_does_not_parse_is_never_rewritten(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    store.config.write_text('{"memory": {"flushEvery": 5,,}')
    code, _out, err = _run(store, capsys, "set", "memory.flushEvery", "6")
    assert code == 2 and "not valid JSON" in err and str(store.config) in err
    assert store.config.read_text() == '{"memory": {"flushEvery": 5,,}'


def test_status_shows_a_change_at_once(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(store, capsys, "set", "memory.enabled", "false")[0] == 0
    assert _run(store, capsys, "set", "recall.enabled", "false", "--global")[0] == 0
    capsys.readouterr()
    main(["--project", str(store.project), "status", "--json"])
    settings = json.loads(capsys.readouterr().out)["settings"]
    assert settings["memoryEnabled"] is False and settings["recallEnabled"] is False
    main(["--project", str(store.project), "status"])
    assert "memory off · recall off" in capsys.readouterr().out


def test_usage_errors_are_one_line(store: StorePaths, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _run(store, capsys, "set", "memory.enabled")
    assert code == 2 and "config set KEY VALUE" in err and len(err.strip().splitlines()) == 1
