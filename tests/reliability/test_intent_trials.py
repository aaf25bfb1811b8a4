"""Kill trials over rotation, migration and restore; the next ordinary operation (no doctor) recovers.

The small CI count; ``bench/crash_campaign.py`` runs the same trials at scale.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability import intent_kit

#: Every named step of every operation is killed at least once, plus timed kills.
TRIALS_PER_OPERATION = 10


@pytest.mark.parametrize("operation", list(intent_kit.OPERATIONS))
def test_next_operation_completes_a_killed_one(operation: str, tmp_path: Path) -> None:
    duration_of, trial = intent_kit.OPERATIONS[operation]
    duration = duration_of(tmp_path)
    results = [trial(tmp_path, seed, duration) for seed in range(TRIALS_PER_OPERATION)]
    assert [r for r in results if not r.ok] == []
    assert any(r.killed for r in results)  # the trials did interrupt the operation


@pytest.mark.parametrize("step", [s for steps in intent_kit.STEPS.values() for s in steps])
def test_every_step_is_a_real_kill_point(step: str, tmp_path: Path) -> None:
    """Each named step kills the child, and the next operation still loses nothing."""
    operation = step.split(":")[0]
    _duration_of, trial = intent_kit.OPERATIONS[operation]
    for seed in range(200):  # find a seed whose plan is this step (the plan is seeded)
        import random

        planned = intent_kit._kill_plan(random.Random(seed), operation, 1.0)
        if planned[0] == step:
            break
    result = trial(tmp_path, seed, 1.0)
    assert result.kill == step and result.killed and result.ok, result
