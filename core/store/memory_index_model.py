"""The typed view of ``memory-index.json`` (pydantic), for the CLI, the TUI and jobs.

The file itself is read and written only through :mod:`memkeeper.core.store.memory_index` (stdlib,
locked, atomic, unknown keys kept); this module turns what it returns into models.
Key names and types are the JS plugin's (``rotatedFiles[].file/rotatedAt/tokens/bytes/
summary/summaryGenerated/dateRange``) plus memkeeper's ``summaryError``,
``summaryAttempts``, ``summaryGenerator`` (and ``lastFlushAt``, which an older store kept here: it now
lives in ``.state/last-flush.json``, one machine's state). Unknown keys are kept
(``extra="allow"``). An entry that cannot be used (not an object, wrong types, or a
file name outside the memory folder) is left out and reported in ``refused``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .index_entries import summary_attempts, summary_error, summary_generated, summary_state
from .memory_index import read_index, safe_entries
from .names import summary_name
from .paths import StorePaths

if TYPE_CHECKING:
    from .index_entries import SummaryState


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class DateRange(_Model):
    first: str
    last: str


class RotatedFile(_Model):
    """One archive of ``memory.md`` and the state of its L3 summary."""

    file: str
    rotatedAt: str | None = None
    tokens: int = 0
    bytes: int = 0
    summary: str | None = None
    summaryGenerated: bool = False
    dateRange: DateRange | None = None
    summaryError: str | None = None
    summaryAttempts: int = 0
    summaryGenerator: str | None = None

    @field_validator("summaryGenerated", mode="before")
    @classmethod
    def _generated_only_if_true(cls, value: Any) -> bool:
        return summary_generated({"summaryGenerated": value})  # the one rule, in core.index

    @field_validator("dateRange", mode="before")
    @classmethod
    def _lenient_range(cls, value: Any) -> Any:
        # The JS plugin never writes it; a malformed one is treated as absent.
        if (
            isinstance(value, dict)
            and isinstance(value.get("first"), str)
            and isinstance(value.get("last"), str)
        ):
            return value
        return None

    @property
    def summary_file(self) -> str:
        return self.summary or summary_name(self.file)

    @property
    def state(self) -> SummaryState:
        return summary_state({"summaryGenerated": self.summaryGenerated, "summaryError": self.summaryError})


class IndexStats(_Model):
    totalRotations: int = 0
    lastRotation: str | None = None


class MemoryIndex(_Model):
    version: int = 1
    current: str = "memory.md"
    rotatedFiles: list[RotatedFile] = Field(default_factory=list)
    stats: IndexStats = Field(default_factory=IndexStats)
    counter: int = 0
    lastMemoryUpdateTs: str | None = None
    lastFlushAt: str | None = None
    #: Why entries were left out of ``rotatedFiles`` (not written back: the raw file keeps them).
    refused: list[str] = Field(default_factory=list, exclude=True)

    @field_validator("stats", mode="before")
    @classmethod
    def _lenient_stats(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else {}

    def entry(self, name: str) -> RotatedFile | None:
        return next((e for e in self.rotatedFiles if e.file == name), None)


def index_from_dict(data: dict[str, Any]) -> MemoryIndex:
    """Validate a raw index dict entry by entry, so one bad entry never hides the rest."""
    good, refused = safe_entries(data)
    entries: list[RotatedFile] = []
    for raw in good:
        try:
            entries.append(RotatedFile.model_validate(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(part) for part in first["loc"])
            refused.append(
                f"index entry {raw.get('file')!r:.120} has a bad value for '{key}': {first['msg']}"
            )
    top = {k: v for k, v in data.items() if k != "rotatedFiles"}
    for key, default in (("version", 1), ("counter", 0)):
        if isinstance(top.get(key), bool) or not isinstance(top.get(key), int):
            top[key] = default
    for key in ("lastMemoryUpdateTs", "lastFlushAt"):
        if not isinstance(top.get(key), str):
            top[key] = None
    if not isinstance(top.get("current"), str):
        top["current"] = "memory.md"
    top.pop("refused", None)
    try:
        index = MemoryIndex.model_validate(top)
    except ValidationError:
        index = MemoryIndex()
    index.rotatedFiles = entries
    index.refused = refused
    return index


def load_index(paths: StorePaths) -> MemoryIndex:
    """The index of this store (recovered from disk if missing or corrupt)."""
    return index_from_dict(read_index(paths))


def pending_entries(index: MemoryIndex) -> list[RotatedFile]:
    """Entries whose summary is not generated yet (pending or failed), oldest first."""
    return [e for e in index.rotatedFiles if e.state != "generated"]


#: A background (automatic) run stops retrying an archive after this many failed tries;
#: ``memkeeper regenerate`` always tries.
MAX_AUTO_ATTEMPTS = 9


# --- pending summaries (what the L2 flush job and the L3 summary job both read) ----------------


@dataclass(frozen=True)
class PendingSummary:
    file: str
    state: Literal["pending", "failed", "missing"]  # missing: the archive itself is gone
    error: str | None
    attempts: int


def pending_summaries(paths: StorePaths) -> list[PendingSummary]:
    """Index entries whose summary is not generated yet, with the last error if one failed."""
    entries, _ = safe_entries(read_index(paths))
    out: list[PendingSummary] = []
    for entry in entries:
        state = summary_state(entry)
        if state == "generated":
            continue
        name = str(entry["file"])
        attempts = summary_attempts(entry)
        if not paths.archive(name).exists():
            out.append(PendingSummary(name, "missing", "the archive file is missing", attempts))
        else:
            out.append(PendingSummary(name, state, summary_error(entry), attempts))
    return out


def auto_targets(paths: StorePaths, *, retry_failed: bool = False) -> list[str]:
    """The archives the background summary job would do now: pending ones, and failed ones
    with tries left (all failed ones with ``retry_failed``)."""
    return [
        p.file
        for p in pending_summaries(paths)
        if p.state != "missing" and (retry_failed or p.state == "pending" or p.attempts < MAX_AUTO_ATTEMPTS)
    ]
