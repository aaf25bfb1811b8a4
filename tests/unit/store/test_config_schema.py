"""One config schema: the pydantic models declare every key; the hook path's table is generated
from them (and checked here), so the hooks, the CLI and the TUI cannot disagree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memkeeper.core.config import table as config_table
from memkeeper.core.config.model import Config, field_info, table_source
from memkeeper.core.config.reader import HookSettings, leaf_error, value_of
from memkeeper.core.config.table import FIELDS


def test_the_hook_table_is_generated_from_the_models() -> None:
    written = Path(config_table.__file__).read_text(encoding="utf-8")
    assert written == table_source(written), (
        "core/config/table.py is stale: run python -m memkeeper.core.config.model"
    )
    assert "memory.flushEvery" in written and "gt" in written


def test_every_declared_key_has_an_explanation() -> None:
    assert set(field_info()) == set(FIELDS)
    for key, info in field_info().items():
        assert info.description and "\n" not in info.description, key
        assert len(info.description) <= 74, f"{key}: one line of the settings screen at 80 columns"


def test_hook_defaults_are_the_declared_defaults() -> None:
    declared = Config()
    hook = HookSettings()
    assert hook.flush_every == declared.memory.flushEvery
    assert hook.memory_enabled is declared.memory.enabled
    assert hook.save_interval == declared.saveInterval
    assert hook.recall_enabled is declared.recall.enabled
    assert hook.recall_min_confidence == declared.recall.minConfidence
    assert hook.rotation_enabled is declared.memoryRotation.enabled
    assert (hook.threshold_tokens, hook.carryover_tokens) == (
        declared.threshold_tokens,
        declared.carryover_tokens,
    )
    for key in FIELDS:
        section, _, leaf = key.rpartition(".")
        model = getattr(declared, section) if section else declared
        assert value_of({}, key) == getattr(model, leaf), key


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("memory.flushEvery", 0),
        ("memory.flushEvery", 2.5),
        ("memory.enabled", "maybe"),
        ("recall.minConfidence", 1.5),
        ("budget.dailyCalls", -1),
        ("summarizer.backend", "gpt"),
        ("summarizer.timeoutSeconds", 0),
        ("summarizer.command", "ls"),
    ],
)
def test_a_value_the_table_refuses_the_models_refuse(key: str, value: object) -> None:
    """The bounds and kinds agree (the reader is stricter still: it never coerces "false" or "3")."""
    from pydantic import ValidationError

    section, _, leaf = key.rpartition(".")
    assert leaf_error(key, value)
    with pytest.raises(ValidationError):
        Config.model_validate({section: {leaf: value}} if section else {leaf: value}, strict=False)


def test_the_hook_reader_imports_no_pydantic() -> None:
    code = (
        "import sys, memkeeper.core.config.reader as s; s.read_config('none.json'); "
        "print('pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
