"""Timestamps, in one place: UTC stamps written to files, parsing them back, local display.

Everything the store writes is UTC: ISO-8601 with milliseconds and ``Z`` exactly as the
JS plugin's ``new Date().toISOString()`` (index, logs, L1 entries, summaries), compact
``YYYYMMDD_HHMMSS`` stamps in backup names, ``YYYY-MM-DD`` days, and the memory.md section
header ``## YYYY-MM-DD_HHMM (local MM-DD_HHMM)`` that also shows the local time.

``time`` only at import (the hook path counts with :func:`iso_now`); ``datetime`` is
imported by the functions that take or return one.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any


def iso_from_epoch(seconds: float) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC) for seconds since the epoch."""
    whole = int(seconds)
    millis = min(999, int(round((seconds - whole) * 1000)))
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"


def iso_now() -> str:
    """Now as JS ``new Date().toISOString()``."""
    return iso_from_epoch(time.time())


def iso(moment: datetime) -> str:
    """An aware datetime as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC; milliseconds truncated)."""
    from datetime import UTC

    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def utc_now() -> datetime:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def parse_iso(value: Any) -> datetime | None:
    """An ISO-8601 string (``Z`` or an offset; naive means UTC) as an aware UTC datetime."""
    if not isinstance(value, str) or not value:
        return None
    from datetime import UTC, datetime

    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def utc_day(moment: datetime | None = None) -> str:
    """``YYYY-MM-DD`` of ``moment`` (now) in UTC."""
    from datetime import UTC

    return (moment or utc_now()).astimezone(UTC).strftime("%Y-%m-%d")


def day_of_epoch(seconds: float) -> str:
    """``YYYY-MM-DD`` (UTC) of seconds since the epoch, such as a file's mtime."""
    return time.strftime("%Y-%m-%d", time.gmtime(int(seconds)))


def file_stamp(micros: bool = False) -> str:
    """``YYYYMMDD_HHMMSS`` (``_ffffff`` with ``micros``) of now in UTC, for backup file names."""
    now = time.time()
    stamp = time.strftime("%Y%m%d_%H%M%S", time.gmtime(int(now)))
    return f"{stamp}_{int((now % 1) * 1_000_000):06d}" if micros else stamp


def section_header(moment: datetime, local: datetime | None = None) -> str:
    """``## YYYY-MM-DD_HHMM (local MM-DD_HHMM)``: UTC first, as the JS skill writes it.

    ``local`` is the same moment on the local clock (default: this machine's zone).
    """
    from datetime import UTC

    local = local if local is not None else moment.astimezone()
    return f"## {moment.astimezone(UTC):%Y-%m-%d_%H%M} (local {local:%m-%d_%H%M})"


def short_time(stamp: str | None) -> str:
    """``2026-11-21T11:49:00.000Z`` → ``2026-11-21 11:49Z`` (absolute, so screenshots are stable)."""
    if not stamp:
        return "never"
    return stamp[:16].replace("T", " ") + ("Z" if stamp.endswith("Z") else "")


def local_time(stamp: str, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A UTC stamp (``2026-11-21T11:49:00.000Z``) on this machine's clock, as ``fmt``.

    What the TUI shows people; a stamp that does not parse is shown as it is.
    """
    moment = parse_iso(stamp)
    return moment.astimezone().strftime(fmt) if moment is not None else stamp
