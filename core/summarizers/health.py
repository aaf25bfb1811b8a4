"""Backend health: a backend that is unreachable or refuses us rests instead of being retried.

After a failure that says the backend cannot answer at all (connection refused, no
first token in time, not logged in, bad key, not installed), the backend *rests*: no
model call is made until ``restUntil``, and every flush in between goes straight to
the extractive path. The rest doubles with each failure in a row (10 min up to 6 h)
and ends at the first success. The state is one small JSON file in ``.state/``
written atomically under a lock; ``status`` and the TUI read it through
:func:`backend_report`.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..basics.timestamps import iso, parse_iso, utc_now
from ..store.atomic import atomic_write_json
from ..store.layout import BACKEND_HEALTH_FILE
from ..store.lock import file_lock

if TYPE_CHECKING:
    from ..config.model import Config
    from ..store.paths import StorePaths

HEALTH_NAME = BACKEND_HEALTH_FILE
FIRST_REST = timedelta(minutes=10)
LONGEST_REST = timedelta(hours=6)


def _path(paths: StorePaths) -> Any:
    return paths.state / HEALTH_NAME


def read_health(paths: StorePaths) -> dict[str, Any]:
    """The recorded health of each backend, by name ({} when none is recorded or it is unreadable)."""
    try:
        data = json.loads(_path(paths).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def _update(paths: StorePaths, backend: str, change: Any) -> None:
    path = _path(paths)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with file_lock(path.with_name(HEALTH_NAME + ".lock"), timeout=5.0):
            data = read_health(paths)
            record = dict(data.get(backend) or {})
            change(record)
            data[backend] = record
            atomic_write_json(path, data)
    except OSError:
        return  # a read-only or full disk: the rest is not recorded, the flush still falls back


def resting_until(paths: StorePaths, backend: str, now: datetime | None = None) -> datetime | None:
    """When ``backend``'s rest ends, or None if it is not resting."""
    until = parse_iso((read_health(paths).get(backend) or {}).get("restUntil"))
    return until if until is not None and until > (now or utc_now()) else None


def resting_backends(paths: StorePaths) -> list[dict[str, Any]]:
    """``{"backend", "restingUntil", "lastFailure"}`` of each backend resting now (stdlib only:
    the SessionStart hook reads it)."""
    now = utc_now()
    found = []
    for name, record in sorted(read_health(paths).items()):
        until = parse_iso(record.get("restUntil"))
        if until is not None and until > now:
            found.append(
                {"backend": name, "restingUntil": iso(until), "lastFailure": record.get("lastFailure")}
            )
    return found


def record_success(paths: StorePaths, backend: str) -> None:
    def change(record: dict[str, Any]) -> None:
        record["lastOkAt"] = iso(utc_now())
        record["failures"] = 0
        record.pop("restUntil", None)

    if (read_health(paths).get(backend) or {}).get("failures", 0) or not _recent_ok(paths, backend):
        _update(paths, backend, change)


def _recent_ok(paths: StorePaths, backend: str) -> bool:
    """True if a success was recorded in the last minute (saves a write per call)."""
    last = parse_iso((read_health(paths).get(backend) or {}).get("lastOkAt"))
    return last is not None and utc_now() - last < timedelta(minutes=1)


def record_down(paths: StorePaths, backend: str, reason: str) -> datetime:
    """Note that ``backend`` cannot answer; returns the end of its rest."""
    now = utc_now()
    ends: list[datetime] = []

    def change(record: dict[str, Any]) -> None:
        failures = int(record.get("failures") or 0) + 1
        rest = min(FIRST_REST * (2 ** (failures - 1)), LONGEST_REST)
        record.update(
            failures=failures, lastFailureAt=iso(now), lastFailure=reason[:300], restUntil=iso(now + rest)
        )
        ends.append(now + rest)

    _update(paths, backend, change)
    return ends[0] if ends else now + FIRST_REST


def backend_report(paths: StorePaths, config: Config) -> dict[str, Any]:
    """Which backend summarizes, why, whether it rests and when it last answered (status, TUI)."""
    from .backend import BackendError
    from .registry import resolve_backend_name

    configured = config.summarizer.backend
    try:
        resolved = resolve_backend_name(config)
        why = _why(configured, resolved)
    except BackendError as exc:
        resolved, why = "extractive", str(exc)
    record = read_health(paths).get(resolved) or {}
    until = resting_until(paths, resolved)
    in_use = "extractive" if until else resolved
    if until:
        why = f"{resolved} is resting until {iso(until)} after: {record.get('lastFailure') or 'a failure'}"
    return {
        "configured": configured,
        "backend": resolved,
        "inUse": in_use,
        "why": why,
        "restingUntil": iso(until) if until else None,
        "lastOkAt": record.get("lastOkAt"),
        "lastFailureAt": record.get("lastFailureAt"),
        "lastFailure": record.get("lastFailure"),
    }


def _why(configured: str, resolved: str) -> str:
    if configured != "auto":
        return f"configured: summarizer.backend = {configured}"
    if resolved == "claude":
        return "auto: claude is on PATH"
    if resolved == "anthropic":
        return "auto: no claude on PATH, an Anthropic API key is set"
    return "auto: no claude on PATH and no Anthropic API key"
