"""The store's file names, in one place: make them, parse them, recognise them, tier of a path.

- ``memory.md`` and the named files (``project.md`` …) are tier ``memory``;
- ``memory_YYYYMMDD_HHMMSS.md`` archives (the UTC time of the rotation; a migrated legacy
  store uses ``memory_<day>_2359NN.md``) are tier ``l2``;
- ``memory_YYYYMMDD_HHMMSS.summary.json`` beside each archive (named as the JS plugin's
  ``replace('.md', '.summary.json')``) are tier ``l3``; the model's last unusable answer
  is kept as ``….summary.raw.txt``;
- ``sessions/<UTC YYYY-MM-DD_HHMMSS of the first entry>_<session id[:8]>.l1.jsonl`` (or
  ``.l1.jsonl.gz`` once compressed) are tier ``l1``.

Stdlib only, and lean at import (``os`` and ``time``; ``re`` is imported by the functions
that parse): the hook path names files with it.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from .layout import MEMORY_FILE, SESSIONS_DIR

if TYPE_CHECKING:
    import re
    from collections.abc import Collection
    from datetime import datetime
    from typing import Literal

    Tier = Literal["memory", "l3", "l2", "l1"]
    L1Kind = Literal["l1", "l1gz"]

ARCHIVE_PREFIX = "memory_"
ARCHIVE_SUFFIX = ".md"
SUMMARY_SUFFIX = ".summary.json"
RAW_SUMMARY_SUFFIX = ".summary.raw.txt"
L1_SUFFIX = ".l1.jsonl"
L1_GZ_SUFFIX = ".l1.jsonl.gz"
L1_SUFFIXES = (L1_SUFFIX, L1_GZ_SUFFIX)

_ARCHIVE_DATE = r"^memory_(\d{4})(\d{2})(\d{2})_"
_ARCHIVE_TIME = r"^memory_(\d{8})_(\d{6})\.md$"
_L1_NAME = (
    r"^(?P<date>\d{4}-\d{2}-\d{2})_(?P<hh>\d{2})(?P<mm>\d{2})(?P<ss>\d{2})?"
    r"(?:_(?P<sid>[A-Za-z0-9_-]{1,36}))?\.l1\.jsonl(?P<gz>\.gz)?$"
)


def _match(pattern: str, name: str) -> re.Match[str] | None:
    import re  # not at import time: the hook path uses the other functions

    return re.match(pattern, name)


# --- archives (L2) and their summaries (L3) ------------------------------------------


def archive_name(epoch: float) -> str:
    """``memory_YYYYMMDD_HHMMSS.md`` for a moment (seconds since the epoch), in UTC."""
    return time.strftime(f"{ARCHIVE_PREFIX}%Y%m%d_%H%M%S{ARCHIVE_SUFFIX}", time.gmtime(int(epoch)))


def archive_name_for(moment: datetime) -> str:
    """:func:`archive_name` for an aware datetime."""
    return archive_name(moment.timestamp())


def archive_name_on(day: str, hhmmss: str) -> str:
    """``memory_YYYYMMDD_<hhmmss>.md`` for a ``YYYY-MM-DD`` day (a migrated legacy section)."""
    return f"{ARCHIVE_PREFIX}{day.replace('-', '')}_{hhmmss}{ARCHIVE_SUFFIX}"


def is_archive(name: str) -> bool:
    """``memory_*.md`` but not ``memory.md``: an L2 archive (as the JS plugin lists them)."""
    return name.startswith(ARCHIVE_PREFIX) and name.endswith(ARCHIVE_SUFFIX) and name != MEMORY_FILE


def summary_name(archive: str) -> str:
    """``memory_X.md`` → ``memory_X.summary.json`` (as the JS ``replace('.md', …)``)."""
    return archive.replace(ARCHIVE_SUFFIX, SUMMARY_SUFFIX, 1)


def raw_summary_name(archive: str) -> str:
    """``memory_X.md`` → ``memory_X.summary.raw.txt``: the model's last unusable answer."""
    return archive.removesuffix(ARCHIVE_SUFFIX) + RAW_SUMMARY_SUFFIX


def is_summary(name: str) -> bool:
    return name.startswith(ARCHIVE_PREFIX) and name.endswith(SUMMARY_SUFFIX)


def archive_of_summary(summary: str) -> str:
    """``memory_X.summary.json`` → ``memory_X.md``."""
    return summary.replace(SUMMARY_SUFFIX, ARCHIVE_SUFFIX, 1)


def archive_time(name: str) -> float | None:
    """The UTC moment (seconds since the epoch) in ``memory_YYYYMMDD_HHMMSS.md``; None for
    any other name, including a migrated legacy ``_2359NN`` that is not a real time."""
    match = _match(_ARCHIVE_TIME, name)
    if not match:
        return None
    from datetime import UTC, datetime

    try:
        return datetime.strptime("".join(match.groups()), "%Y%m%d%H%M%S").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def archive_date(name: str) -> str | None:
    """The ``YYYY-MM-DD`` an archive or summary name carries, or None."""
    match = _match(_ARCHIVE_DATE, name)
    return "-".join(match.groups()) if match else None


# --- L1 session copies -------------------------------------------------------------------


def short_session(session_id: str) -> str:
    """The first 8 characters of a session id, safe in a file name."""
    import re

    return re.sub(r"[^A-Za-z0-9_-]", "-", session_id[:8]) or "session"


def l1_name(started: datetime, session_id: str) -> str:
    """``<YYYY-MM-DD_HHMMSS of started, UTC>_<session id[:8]>.l1.jsonl``."""
    return time.strftime("%Y-%m-%d_%H%M%S", time.gmtime(int(started.timestamp()))) + (
        f"_{short_session(session_id)}{L1_SUFFIX}"
    )


def is_l1(name: str) -> bool:
    """A plain or compressed L1 file name."""
    return name.endswith(L1_SUFFIXES)


def is_l1_gz(name: str) -> bool:
    return name.endswith(L1_GZ_SUFFIX)


def l1_kind(name: str) -> L1Kind | None:
    """``l1`` for a plain L1 file name, ``l1gz`` for a compressed one, else None."""
    if name.endswith(L1_SUFFIX):
        return "l1"
    return "l1gz" if name.endswith(L1_GZ_SUFFIX) else None


def l1_session(name: str) -> str | None:
    """The session id (prefix) an L1 file name carries, or None."""
    match = _match(_L1_NAME, os.path.basename(name))
    return match["sid"] if match and match["sid"] else None


def l1_started(name: str) -> str | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` of the first entry, from an L1 file name; None if not one."""
    match = _match(_L1_NAME, os.path.basename(name))
    if not match:
        return None
    return f"{match['date']}T{match['hh']}:{match['mm']}:{match['ss'] or '00'}Z"


def l1_date(name: str) -> str | None:
    match = _match(_L1_NAME, os.path.basename(name))
    return match["date"] if match else None


# --- any file of the store ------------------------------------------------------------


def name_date(name: str) -> str | None:
    """The ``YYYY-MM-DD`` an archive, summary or L1 file name carries."""
    return archive_date(name) or l1_date(name)


def tier_of(rel: str, named: Collection[str] = ()) -> Tier | None:
    """The tier of a path relative to the store folder (``sessions/x.l1.jsonl`` for L1);
    ``named`` are the named memory files (``project.md`` …). None: not a memory file."""
    folder, _, name = rel.rpartition("/")
    if name.startswith("."):
        return None
    if folder == SESSIONS_DIR:
        return "l1" if is_l1(name) else None
    if folder:
        return None
    if name == MEMORY_FILE or name in named:
        return "memory"
    if is_summary(name):
        return "l3"
    if is_archive(name):
        return "l2"
    return None
