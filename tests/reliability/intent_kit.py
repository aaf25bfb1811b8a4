"""Kill campaign for the intent records: rotation, migration and restore, recovered WITHOUT doctor.

Each trial runs one operation in a child process and kills it with SIGKILL, either at a
named step (``MEMKEEPER_CRASH_AT``, chosen by a seeded RNG among the operation's steps) or
after a seeded delay over the operation's measured duration. Then the *next ordinary
operation* runs as a real process — a ``PostToolUse`` hook after a rotation, ``memkeeper
migrate-legacy`` again after a migration, ``memkeeper trash`` after a restore — and the
store is checked: every line present once (bytes lost, duplicated lines), no two
byte-identical archives, no phantom trash entry, no intent left, the index agreeing with
the files, and a read-only ``doctor`` finding nothing. ``doctor`` never repairs anything.

Shared by ``tests/reliability/test_intent_trials.py`` (CI) and ``bench/crash_campaign.py``.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.reliability import reliability_kit as kit

STEPS = {
    "rotation": ["rotation:intent", "rotation:archive", "rotation:memory", "rotation:index"],
    "migration": [
        "migration:intent",
        "migration:backup",
        "migration:archive",
        "migration:memory",
        "migration:index",
    ],
    "restore": ["restore:intent", "restore:file", "restore:index"],
}


@dataclass
class Trial(kit.Outcome):
    operation: str
    kill: str  # the step, or "t=<ms>" for a timed kill
    killed: bool = False  # the child died of the kill (False: it had finished first)
    duplicate_archives: int = 0

    @property
    def ok(self) -> bool:
        return super().ok and not self.duplicate_archives


def _env(base: Path, step: str | None) -> dict[str, str]:
    env = kit.child_env(base / "home")
    env.pop("MEMKEEPER_CRASH_AT", None)
    if step:
        env["MEMKEEPER_CRASH_AT"] = step
    return env


def _run(code: str, args: list[str], env: dict[str, str], delay: float | None) -> int:
    rc, _took, err = kit.run_child(code, args, env, delay)
    if rc not in (0, -signal.SIGKILL):
        raise RuntimeError(f"child failed rc={rc}: {err.strip()[-300:]}")
    return rc


def _memkeeper(project: Path, env: dict[str, str], *args: str, stdin: str = "") -> None:
    env = dict(env)
    env.pop("MEMKEEPER_CRASH_AT", None)
    done = subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(project), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    if done.returncode < 0 or "Traceback" in done.stderr:  # 3 is "nothing to do"
        raise RuntimeError(f"memkeeper {' '.join(args)} rc={done.returncode}: {done.stderr[-300:]}")


def _kill_plan(rng: random.Random, operation: str, duration: float) -> tuple[str | None, float | None, str]:
    """(step, delay, label): half the trials kill at a named step, half after a timed delay."""
    if rng.random() < 0.5:
        step = rng.choice(STEPS[operation])
        return step, None, step
    delay = rng.uniform(0, duration * 1.1)
    return None, delay, f"t={delay * 1000:.0f}ms"


def _line_counts(data: bytes) -> Counter[int]:
    return Counter(n for n in (kit.line_ok(ln) for ln in data.split(b"\n") if ln) if n is not None)


def _common_checks(paths: Any, trial: Trial) -> None:
    from memkeeper.core import doctor
    from memkeeper.core.doctor.index_checks import duplicate_archives
    from memkeeper.core.store import intents

    trial.duplicate_archives = len(duplicate_archives(paths))
    if intents.pending(paths):
        trial.problems.append(f"intent left: {intents.pending(paths)}")
    left = doctor.problems_left(doctor.diagnose(paths, stale_seconds=3600))
    if left:
        trial.problems.append("doctor (read only) finds: " + "; ".join(f"{f.code} {f.path}" for f in left))
    kit._check_index_agrees(paths, trial)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- rotation

ROTATE_CHILD = r"""
import sys
from pathlib import Path
from memkeeper.core.log import rotation
from memkeeper.core.store.paths import StorePaths
paths = StorePaths(Path(sys.argv[1]))
print("ready", flush=True)
rotation.rotate(paths, int(sys.argv[2]), int(sys.argv[3]))
"""
ROT_LINES = 250  # ~22 KB: over the trial threshold, under twice it (so a hook rotates inline)


def _rotation_store(base: Path, name: str) -> Any:
    from memkeeper.core.store.atomic import atomic_write_bytes

    paths = kit.new_project(base, name)
    atomic_write_bytes(paths.memory, b"".join(kit.make_line(i) for i in range(ROT_LINES)))
    return paths


def rotation_duration(base: Path) -> float:
    paths = _rotation_store(base, "calibrate-rotate")
    start = time.monotonic()
    _run(
        ROTATE_CHILD, [str(paths.project), str(kit.ROT_THRESHOLD), str(kit.ROT_CARRY)], _env(base, None), None
    )
    return time.monotonic() - start


def rotation_trial(base: Path, seed: int, duration: float) -> Trial:
    rng = random.Random(seed)
    step, delay, label = _kill_plan(rng, "rotation", duration)
    paths = _rotation_store(base, f"rot{seed}")
    trial = Trial("rotation", label)
    env = _env(base, step)
    rc = _run(ROTATE_CHILD, [str(paths.project), str(kit.ROT_THRESHOLD), str(kit.ROT_CARRY)], env, delay)
    trial.killed = rc == -signal.SIGKILL
    # The next ordinary operation: a tool call's hook (it rotates when due).
    payload = json.dumps({"session_id": "s1", "cwd": str(paths.project), "hook_event_name": "PostToolUse"})
    _memkeeper(paths.project, env, "hook", "PostToolUse", stdin=payload)
    lines, structure = kit.reconstruct(paths, kit.ROT_CARRY)
    trial.problems += structure
    counts = _line_counts(b"\n".join(lines))
    trial.bytes_lost = sum(len(kit.make_line(n)) for n in range(ROT_LINES) if n not in counts)
    trial.count_duplicates(counts)
    _common_checks(paths, trial)
    return trial


# --------------------------------------------------------------------------- migration

MIGRATE_CHILD = r"""
import sys
from pathlib import Path
from memkeeper.core.log.migrate import migrate_legacy
from memkeeper.core.store.paths import StorePaths
paths = StorePaths(Path(sys.argv[1]))
print("ready", flush=True)
migrate_legacy(paths, start_summaries=False)
"""


def _migration_store(base: Path, name: str) -> Any:
    from memkeeper.core.store.atomic import atomic_write_bytes

    paths = kit.new_project(base, name)
    atomic_write_bytes(paths.memory, kit.legacy_content())
    return paths


def migration_duration(base: Path) -> float:
    paths = _migration_store(base, "calibrate-migrate")
    start = time.monotonic()
    _run(MIGRATE_CHILD, [str(paths.project)], _env(base, None), None)
    return time.monotonic() - start


def migration_trial(base: Path, seed: int, duration: float) -> Trial:
    rng = random.Random(seed)
    step, delay, label = _kill_plan(rng, "migration", duration)
    paths = _migration_store(base, f"mig{seed}")
    original = kit.legacy_content()
    trial = Trial("migration", label)
    env = _env(base, step)
    trial.killed = _run(MIGRATE_CHILD, [str(paths.project)], env, delay) == -signal.SIGKILL
    # The next ordinary operation: the user runs the migration again.
    _memkeeper(paths.project, env, "migrate-legacy")
    layout = kit.migration_layout(paths)
    want = _line_counts(original)
    have = _line_counts(layout)
    trial.bytes_lost = sum(len(kit.make_line(n)) for n in want if n not in have)
    trial.count_duplicates(have)
    if layout != original:
        trial.problems.append("archives + memory.md are not the original file byte for byte")
    _common_checks(paths, trial)
    return trial


# --------------------------------------------------------------------------- restore

RESTORE_CHILD = r"""
import sys
from pathlib import Path
from memkeeper.core.store.trash import restore
from memkeeper.core.store.paths import StorePaths
paths = StorePaths(Path(sys.argv[1]))
print("ready", flush=True)
restore(paths, sys.argv[2])
"""


def _restore_store(base: Path, name: str, kind: str) -> tuple[Any, str, dict[str, bytes]]:
    """A store with one forgotten item in the trash; (paths, trash id, the files as they were)."""
    from memkeeper.core.log import rotation
    from memkeeper.core.store import trash as forget
    from memkeeper.core.store.atomic import atomic_write_bytes

    paths = _rotation_store(base, name)
    result = rotation.rotate(paths, kit.ROT_THRESHOLD, kit.ROT_CARRY)
    assert result is not None
    files: dict[str, bytes] = {}
    if kind == "archive":
        summary = paths.root / result.archive.replace(".md", ".summary.raw.txt")
        atomic_write_bytes(summary, b"raw summary output\n" * 50)
        files = {
            result.archive: paths.archive(result.archive).read_bytes(),
            summary.name: summary.read_bytes(),
        }
        item = forget.forget_archive(paths, result.archive)
    else:
        l1 = paths.sessions / "2026-01-01_0000_abc.l1.jsonl"
        raw = paths.sessions / "2026-01-01_0000_abc.raw.jsonl"
        atomic_write_bytes(l1, b"".join(b'{"ts": "2026-01-01T00:00:00Z", "n": %d}\n' % i for i in range(400)))
        atomic_write_bytes(raw, b'{"raw": true}\n' * 400)
        files = {f"sessions/{l1.name}": l1.read_bytes(), f"sessions/{raw.name}": raw.read_bytes()}
        item = forget.forget_l1(paths, l1.name)
    return paths, item.id, files


def restore_duration(base: Path) -> float:
    paths, trash_id, _files = _restore_store(base, "calibrate-restore", "archive")
    start = time.monotonic()
    _run(RESTORE_CHILD, [str(paths.project), trash_id], _env(base, None), None)
    return time.monotonic() - start


def restore_trial(base: Path, seed: int, duration: float) -> Trial:
    rng = random.Random(seed)
    kind = "archive" if seed % 2 else "l1"
    step, delay, label = _kill_plan(rng, "restore", duration)
    paths, trash_id, files = _restore_store(base, f"res{seed}", kind)
    trial = Trial(f"restore ({kind})", label)
    env = _env(base, step)
    trial.killed = _run(RESTORE_CHILD, [str(paths.project), trash_id], env, delay) == -signal.SIGKILL
    # The next ordinary operation: listing the trash.
    _memkeeper(paths.project, env, "trash")
    _check_restore(paths, trash_id, files, trial)
    _common_checks(paths, trial)
    return trial


def _check_restore(paths: Any, trash_id: str, files: dict[str, bytes], trial: Trial) -> None:
    """All or nothing: every file back and no trash entry, or (killed before it began) all still
    in the trash under its entry. A file in neither place is lost, in both duplicated."""
    from memkeeper.core.store.trash import list_trash

    trashed = [p.read_bytes() for p in paths.trash.rglob("*") if p.is_file() and p.name != "manifest.json"]
    back = {rel for rel, data in files.items() if (paths.root / rel).is_file()}
    kept = {rel for rel, data in files.items() if data in trashed}
    _count_restored_files(paths, files, back, kept, trial)
    listed = [item.id for item in list_trash(paths)]
    _check_restore_all_or_nothing(set(files), back, kept, listed, trash_id, trial)


def _count_restored_files(
    paths: Any, files: dict[str, bytes], back: set[str], kept: set[str], trial: Trial
) -> None:
    """Check each file: changed if back with other bytes, lost if in neither place, duplicated if in both."""
    for rel, data in files.items():
        if rel in back and (paths.root / rel).read_bytes() != data:
            trial.problems.append(f"{rel} came back changed")
        if rel not in back and rel not in kept:
            trial.bytes_lost += len(data)
        if rel in back and rel in kept:
            trial.duplicated_lines += data.count(b"\n")


def _check_restore_all_or_nothing(
    names: set[str], back: set[str], kept: set[str], listed: list[str], trash_id: str, trial: Trial
) -> None:
    """Check the restore is whole: all back with no trash entry left, or none back and its entry kept."""
    if back == names:
        if listed:
            trial.problems.append("restored, but a phantom trash entry is left")
    elif kept == names and not back:
        if listed != [trash_id]:
            trial.problems.append("not restored, and the trash entry is gone")
    else:
        trial.problems.append(f"half restored: back {sorted(back)}, still in the trash {sorted(kept)}")


OPERATIONS: dict[str, tuple[Callable[[Path], float], Callable[[Path, int, float], Trial]]] = {
    "rotation": (rotation_duration, rotation_trial),
    "migration": (migration_duration, migration_trial),
    "restore": (restore_duration, restore_trial),
}
