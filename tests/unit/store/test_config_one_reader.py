"""One config reader for hooks, CLI and TUI: strict, one line naming file and key, the same
answer everywhere; the hooks use the defaults and log a bad config once."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

import pytest

from memkeeper.cli.main import main as cli_main
from memkeeper.core.basics.tokens import CARRYOVER_TOKENS, ROTATION_THRESHOLD_TOKENS
from memkeeper.core.config.model import ConfigError, load_config
from memkeeper.core.config.reader import HookSettings, hook_settings, read_config
from memkeeper.core.store.paths import StorePaths


def _write(store: StorePaths, data: dict[str, Any]) -> None:
    store.config.write_text(json.dumps(data))


def _cli(store: StorePaths, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(["--project", str(store.project), *args])
    return code, out.getvalue(), err.getvalue()


BAD: list[tuple[dict[str, Any], str, str]] = [
    ({"memoryRotation": {"enabled": "false"}}, "memoryRotation.enabled", 'not the string "false"'),
    ({"memory": {"flushEvery": "3"}}, "memory.flushEvery", 'not the string "3"'),
    ({"memoryRotation": {"thresholdTokens": "10000"}}, "memoryRotation.thresholdTokens", "must be a number"),
    ({"memoryRotation": {"thresholdTokens": 10000.9}}, "memoryRotation.thresholdTokens", "whole number"),
    ({"memoryRotation": {"thresholdTokens": 0}}, "memoryRotation.thresholdTokens", "above 0"),
    ({"memoryRotation": {"thresholdTokens": 2000}}, "memoryRotation.carryoverTokens", "below the rotation"),
    (
        {"memoryRotation": {"thresholdTokens": 4000, "carryoverTokens": 4000}},
        "memoryRotation.carryoverTokens",
        "below",
    ),
    ({"recall": {"minConfidence": 2}}, "recall.minConfidence", "between 0 and 1"),
    ({"summarizer": {"backend": "gpt"}}, "summarizer.backend", "one of"),
]


@pytest.mark.parametrize(("data", "key", "why"), BAD)
def test_a_bad_value_is_one_line_naming_file_and_key_everywhere(
    store: StorePaths, data: dict[str, Any], key: str, why: str
) -> None:
    _write(store, data)
    with pytest.raises(ConfigError) as err:
        read_config(str(store.config))
    message = str(err.value)
    assert str(store.config) in message and f"'{key}'" in message and why in message and "\n" not in message
    with pytest.raises(ConfigError):
        load_config(store)  # the typed view (CLI, TUI) reads through the same reader
    code, out, err_text = _cli(store, "rotate")  # a command that acts: refuses with the one line
    assert code == 2 and f"'{key}'" in err_text and len(err_text.strip().splitlines()) == 1
    code, out, err_text = _cli(store, "status")  # status says so, and shows the defaults the hooks use
    assert code == 0 and f"'{key}'" in " ".join(out.split())
    # the hooks: the defaults, whatever the bad value was
    assert hook_settings(store) == HookSettings()
    assert hook_settings(store).rotation_enabled is True


def test_hooks_log_a_bad_config_once(store: StorePaths) -> None:
    _write(store, {"memory": {"flushEvery": "3"}})
    for _ in range(3):
        assert hook_settings(store).flush_every == 10
    log = (store.logs / "memkeeper.log").read_text()
    assert log.count("memory.flushEvery") == 1 and "using the defaults" in log
    _write(store, {"memory": {"flushEvery": 0}})
    hook_settings(store)
    assert (store.logs / "memkeeper.log").read_text().count("memory.flushEvery") == 2  # a new error: logged


def test_good_values_read_the_same_in_hooks_and_cli(store: StorePaths) -> None:
    _write(
        store,
        {
            "memoryRotation": {"enabled": False, "thresholdTokens": 10000.0, "carryoverTokens": 1000},
            "memory": {"flushEvery": 3},
            "keepRaw": True,
            "quietStop": False,
            "rulesInjectionFrequency": 5,
        },
    )
    hooks = hook_settings(store)
    loaded = load_config(store)
    assert loaded.warnings == []  # the JS plugin's keys are known
    assert hooks.rotation_enabled is False and loaded.config.memoryRotation.enabled is False
    assert hooks.flush_every == 3 == loaded.config.memory.flushEvery
    assert hooks.threshold_tokens == 9500 == loaded.config.threshold_tokens
    assert hooks.carryover_tokens == 950 == loaded.config.carryover_tokens
    code, out, _err = _cli(store, "status", "--json")
    assert code == 0


def test_defaults_keep_the_carryover_below_the_threshold() -> None:
    assert CARRYOVER_TOKENS < ROTATION_THRESHOLD_TOKENS


def test_rotate_force_below_the_carryover_refuses(store: StorePaths) -> None:
    _write(store, {"memoryRotation": {"thresholdTokens": 4000, "carryoverTokens": 1000}})
    small = "## 2026-05-01\n- [note]: a short memory\n"
    store.memory.write_text(small)
    code, out, err = _cli(store, "rotate", "--force")
    assert code != 0 and "carryover" in err and len(err.strip().splitlines()) == 1
    assert store.memory.read_text() == small
    assert not list(store.root.glob("memory_*.md"))
