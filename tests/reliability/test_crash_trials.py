"""Crash trials: each operation is SIGKILLed at seeded points, then repaired and checked.

The small CI counts here; ``bench/reliability_full.py`` runs the same trials at scale.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability import reliability_kit as kit

TRIALS_PER_OPERATION = 6


@pytest.mark.parametrize("operation", list(kit.OPERATIONS))
def test_killed_operation_loses_nothing(operation: str, tmp_path: Path) -> None:
    duration_of, trial = kit.OPERATIONS[operation]
    duration = duration_of(tmp_path)
    failures = []
    for seed in range(TRIALS_PER_OPERATION):
        result = trial(tmp_path, seed, duration)
        if not result.ok:
            failures.append(result)
    assert failures == []


def test_rotation_trial_settings_match_the_config(tmp_path: Path) -> None:
    from memkeeper.core.config.reader import hook_settings

    paths = kit.new_project(tmp_path, "p")
    settings = hook_settings(paths)
    assert (settings.threshold_tokens, settings.carryover_tokens) == (kit.ROT_THRESHOLD, kit.ROT_CARRY)


def test_conservation_check_sees_a_lost_line(tmp_path: Path) -> None:
    """The checker itself: a dropped line, a duplicate and a torn line are all caught."""
    paths = kit.new_project(tmp_path, "p")
    lines = [kit.make_line(i) for i in range(10)]
    paths.memory.write_bytes(b"".join(lines[:4] + lines[5:] + [lines[7], lines[8][:10] + b"\n"]))
    result = kit.TrialResult("check", 0)
    stream, problems = kit.reconstruct(paths, kit.ROT_CARRY)
    kit.check_conservation(result, stream, 10, 10)
    assert result.bytes_lost == len(lines[4])
    assert result.duplicated_lines == 1 and result.torn_lines == 1 and not result.ok


def test_a_write_cut_by_the_kill_is_told_apart_from_a_torn_line() -> None:
    """A kill inside a multi-page append can cut the writer's own unconfirmed line short."""
    lines = [kit.make_line(i).rstrip(b"\n") for i in range(5)]
    cut = kit.make_line(5)[:15]
    ok = kit.TrialResult("check", 0)
    kit.check_conservation(ok, [*lines, cut], required=5, possible=10)
    assert ok.ok and ok.inflight_torn == 1 and ok.cut_ids == {5}
    confirmed = kit.TrialResult("check", 0)
    kit.check_conservation(confirmed, [*lines[:4], kit.make_line(4)[:15]], required=5, possible=10)
    assert not confirmed.ok and confirmed.torn_lines == 1
