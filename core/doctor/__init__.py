"""``memkeeper doctor``: check the store against its invariants and repair what can be repaired.

Each invariant is one :class:`~memkeeper.core.doctor.base.Check` with a ``diagnose``
(reads only) and a ``repair`` (under the store lock, never losing data: every file it
replaces, rewrites or moves is first copied to ``.backups/doctor-<UTC>/``, keeping its
path inside the store). :data:`CHECKS` lists them in repair order; to add one, write a
``Check`` subclass and put an instance in that list.

Findings are errors (data at risk or wrong), warnings (hygiene that should be fixed) or
notes (harmless, such as the 0644 modes the JS plugin writes): notes are shown and
fixable but do not make the store unhealthy.
"""

from __future__ import annotations

from ..store.boundary import store_links
from ..store.lock import reentrant_lock
from ..store.paths import StorePaths
from .base import (
    ERROR,
    NOTE,
    TEMP_STALE_SECONDS,
    WARNING,
    Backup,
    Check,
    Context,
    Finding,
    writable,
)
from .crash_checks import (
    FlushJournalCheck,
    IntentsCheck,
    InterruptedRotationCheck,
    L1PendingCheck,
    MigrationOrphansCheck,
)
from .file_checks import (
    AdoptedCheck,
    CountersCheck,
    EncodingCheck,
    GitignoreCheck,
    L1LinesCheck,
    LeftoversCheck,
    PermissionsCheck,
)
from .index_checks import DuplicateArchivesCheck, IndexCheck, SummariesCheck

__all__ = [
    "CHECKS",
    "ERROR",
    "NOTE",
    "WARNING",
    "Check",
    "Context",
    "Finding",
    "diagnose",
    "problems_left",
    "repair",
]

#: Every check, in the order repairs run: the crash leftovers first (they decide which
#: archives are real), then the summaries and the index, then single files, modes last.
CHECKS: list[Check] = [
    IntentsCheck(),
    MigrationOrphansCheck(),
    InterruptedRotationCheck(),
    DuplicateArchivesCheck(),
    SummariesCheck(),
    IndexCheck(),
    LeftoversCheck(),
    L1PendingCheck(),
    FlushJournalCheck(),
    L1LinesCheck(),
    CountersCheck(),
    EncodingCheck(),
    GitignoreCheck(),
    PermissionsCheck(),
    AdoptedCheck(),
]


def _link_findings(paths: StorePaths) -> list[Finding]:
    """Symbolic links inside the store: report-only, and no other check runs while there are
    any (each would read through them)."""
    return [
        Finding(
            ERROR, "store-link", f"a symbolic link inside the store (remove it): {link}", link, fixable=False
        )
        for link in store_links(paths.root)
    ]


def _read_only_findings(paths: StorePaths) -> list[Finding]:
    """A store this process cannot write: said once; the checks, which only read, still run."""
    if writable(paths):
        return []
    return [
        Finding(
            WARNING,
            "store-read-only",
            f"the store is read-only here ({paths.root}): nothing can be saved into it or repaired"
            " until it is writable (doctor checked what it can read)",
            fixable=False,
        )
    ]


def _diagnose(ctx: Context) -> list[Finding]:
    if not ctx.paths.root.is_dir():
        return []
    links = _link_findings(ctx.paths)
    if links:
        return links
    return _read_only_findings(ctx.paths) + [finding for check in CHECKS for finding in check.diagnose(ctx)]


def diagnose(paths: StorePaths, *, stale_seconds: float = TEMP_STALE_SECONDS) -> list[Finding]:
    """Every problem in the store, without changing anything. Empty means healthy.

    ``stale_seconds`` is how old a temp file or rerun flag must be to count as left over.
    """
    return _diagnose(Context(paths, stale_seconds))


def _repair_one(ctx: Context, check: Check, failures: list[str]) -> None:
    """Diagnose ``check`` afresh (earlier repairs may have changed things) and fix what it finds;
    a failure (read-only disk, permissions) leaves its findings standing."""
    try:
        found = [f for f in check.diagnose(ctx) if f.fixable]
        if found:
            check.repair(ctx, found)
    except (OSError, ValueError) as exc:
        failures.append(f"{type(exc).__name__}: {exc}")


def repair(paths: StorePaths, *, stale_seconds: float = TEMP_STALE_SECONDS) -> list[Finding]:
    """Fix what :func:`diagnose` finds, backing up first; returns the findings marked repaired.

    A finding left with ``repaired=False`` is still there (report-only, or the fix failed);
    the list reflects a fresh :func:`diagnose` after the repairs.
    """
    if not paths.root.is_dir():
        return []
    links = _link_findings(paths)
    if links:
        return links  # nothing is repaired, moved or backed up through a link
    if not writable(paths):
        return diagnose(paths, stale_seconds=stale_seconds)  # says so; nothing can be repaired
    ctx = Context(paths, stale_seconds, holding_lock=True, backup=Backup(paths))
    failures: list[str] = []
    with reentrant_lock(paths.lock):
        before = _diagnose(ctx)
        for check in CHECKS:
            _repair_one(ctx, check, failures)
        try:
            ctx.backed_up().secure()
        except OSError as exc:
            failures.append(f"{type(exc).__name__}: {exc}")
        after = _diagnose(ctx)
    remaining = {(f.code, f.path) for f in after}
    for finding in before:
        finding.repaired = (finding.code, finding.path) not in remaining
    # Problems that appeared only after the first pass (say, a new file's mode) stay visible.
    seen = {(f.code, f.path) for f in before}
    result = before + [f for f in after if (f.code, f.path) not in seen]
    result += [
        Finding(ERROR, "repair-failed", f"a repair could not be done: {failure}", fixable=False)
        for failure in dict.fromkeys(failures)
    ]
    return result


def problems_left(findings: list[Finding]) -> list[Finding]:
    """The findings that still make the store unhealthy (notes never do)."""
    return [f for f in findings if not f.repaired and f.severity != NOTE]
