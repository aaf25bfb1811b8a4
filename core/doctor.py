"""``memkeeper doctor``: check the store against its invariants and repair what can be repaired.

:func:`diagnose` only reads. :func:`repair` fixes what it safely can, under the store
lock, and never loses data: every file it replaces, rewrites or moves is first copied to
``.backups/doctor-<UTC>/`` (keeping its path inside the store). What it checks:

* the index against the files: a corrupt index, archives it does not list, entries whose
  archive is gone, wrong ``bytes``/``tokens``, duplicate entries, entries naming files
  outside the memory folder, ``summaryGenerated`` disagreeing with the summary on disk;
* a rotation killed between writing the archive and replacing ``memory.md`` (the new
  ``memory.md`` would otherwise archive the same text twice), and archives left by a legacy
  migration killed before it replaced ``memory.md`` (moved aside, so a rerun starts clean);
* an L1 update or a flush killed between its two writes (finished or rolled back as those
  modules do on their next run);
* leftover JS ``.rotation.lock`` files (stale after 60 s, as in the JS plugin), job rerun
  requests that no running job will ever see, temp files left by killed atomic writes;
* summaries and L1 session files that do not parse, a corrupt counters file;
* permissions (files 0600, folders 0700) and a ``memory.md`` that is not UTF-8 (report only).

Stdlib only at import time; the summary model (pydantic) is loaded only to validate
summaries, and the flush module only to finish an interrupted flush.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memkeeper.core.atomic import atomic_write_bytes, atomic_write_json
from memkeeper.core.index import (
    list_archives,
    rebuild_index,
    summary_name,
    update_index,
)
from memkeeper.core.lock import file_lock, is_locked, reentrant_lock
from memkeeper.core.store import DIR_MODE, FILE_MODE, StorePaths, is_safe_basename
from memkeeper.core.tokens import CARRYOVER_TOKENS, extract_tail_bytes, tokens_for_bytes

#: A JS ``.rotation.lock`` older than this is stale (the JS plugin's LOCK_STALE_MS).
JS_LOCK_STALE_SECONDS = 60.0
#: A temp file from an atomic write older than this belongs to a writer that died.
TEMP_STALE_SECONDS = 60.0
JS_ROTATION_LOCK = ".rotation.lock"
#: Folders inside the store that hold copies, not live data: never parsed or repaired.
SKIPPED_DIRS = (".backups", ".trash")

ERROR = "error"
WARNING = "warning"


@dataclass
class Finding:
    """One problem found in the store, and whether :func:`repair` fixed it."""

    severity: str  # "error" (data at risk or wrong) or "warning" (hygiene)
    code: str  # stable identifier, e.g. "index-missing-entry"
    message: str  # one line in plain words
    path: str | None = None
    repaired: bool = False
    fixable: bool = True  # False for report-only findings (repair leaves them)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- helpers


def _rel(paths: StorePaths, path: Path) -> str:
    try:
        return str(path.relative_to(paths.root))
    except ValueError:
        return str(path)


def _is_skipped(paths: StorePaths, path: Path) -> bool:
    try:
        first = path.relative_to(paths.root).parts[0]
    except (ValueError, IndexError):
        return False
    return first in SKIPPED_DIRS


def _now_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%d_%H%M%S_%f")


class _Backup:
    """Copies files into one ``.backups/doctor-<UTC>/`` folder before they are changed."""

    def __init__(self, paths: StorePaths) -> None:
        self.paths = paths
        self.folder = paths.backups / f"doctor-{_now_stamp()}"

    def _target(self, path: Path) -> Path:
        target = self.folder / _rel(self.paths, path)
        n = 1
        while target.exists():
            target = target.with_name(f"{target.name}.{n}")
            n += 1
        self.paths.backups.mkdir(mode=DIR_MODE, exist_ok=True)
        os.chmod(self.paths.backups, DIR_MODE)
        target.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        return target

    def copy(self, path: Path) -> Path:
        target = self._target(path)
        atomic_write_bytes(target, path.read_bytes())
        return target

    def move(self, path: Path) -> Path:
        target = self._target(path)
        os.replace(path, target)
        os.chmod(target, FILE_MODE)
        return target


def _load_json(path: Path) -> Any:
    return json.loads(path.read_bytes().decode("utf-8"))


def _summary_problem(path: Path) -> str | None:
    """Why the L3 summary at ``path`` is unusable, or None if it parses."""
    try:
        data = _load_json(path)
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return f"not valid JSON ({type(exc).__name__})"
    if not isinstance(data, dict):
        return "not a JSON object"
    try:  # the typed model, when the summaries module is installed
        from memkeeper.core.summary import load_summary
    except ImportError:
        return None
    try:
        load_summary(path)
    except Exception as exc:  # any validation error means "does not parse"
        return f"does not match the summary format ({type(exc).__name__})"
    return None


def _raw_index(paths: StorePaths) -> tuple[dict[str, Any] | None, str | None]:
    """(index, problem): the index as it is on disk, without any recovery."""
    try:
        data = _load_json(paths.index)
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return None, f"does not parse ({type(exc).__name__})"
    if not isinstance(data, dict) or not isinstance(data.get("rotatedFiles", []), list):
        return None, "is not an index object"
    return data, None


def _entry_safe(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    name = entry.get("file")
    summary = entry.get("summary", summary_name(name) if isinstance(name, str) else None)
    return (
        isinstance(name, str)
        and is_safe_basename(name)
        and not name.startswith(".")
        and isinstance(summary, str)
        and is_safe_basename(summary)
        and not summary.startswith(".")
    )


def _tokens_off(entry: dict[str, Any], size: int) -> bool:
    """True when ``tokens`` is clearly not the archive's size in tokens.

    Legacy migration records the sum of per-section estimates, a little above
    ``ceil(bytes/4)``; a small tolerance keeps those from being reported.
    """
    tokens = entry.get("tokens")
    if isinstance(tokens, bool) or not isinstance(tokens, int):
        return True
    expected = tokens_for_bytes(size)
    return abs(tokens - expected) > max(16, expected // 50)


# --------------------------------------------------------------------------- checks


def _check_index(paths: StorePaths, out: list[Finding]) -> None:
    index, problem = _raw_index(paths)
    archives = list_archives(paths)
    if problem is not None:
        out.append(
            Finding(
                ERROR,
                "index-corrupt",
                f"the index {problem}; it can be rebuilt from the archives",
                _rel(paths, paths.index),
            )
        )
        return
    if index is None:
        if archives:
            out.append(
                Finding(
                    ERROR,
                    "index-missing",
                    "the index file is missing but archives exist",
                    _rel(paths, paths.index),
                )
            )
        return
    seen: set[str] = set()
    for entry in index.get("rotatedFiles", []):
        if not _entry_safe(entry):
            out.append(
                Finding(
                    ERROR,
                    "index-unsafe-entry",
                    f"an index entry names a file outside the memory folder: {entry!r:.120}",
                    _rel(paths, paths.index),
                )
            )
            continue
        name = entry["file"]
        if name in seen:
            out.append(
                Finding(ERROR, "index-duplicate-entry", f"the index lists {name} more than once", name)
            )
            continue
        seen.add(name)
        archive = paths.root / name
        try:
            size = archive.stat().st_size
        except FileNotFoundError:
            out.append(
                Finding(
                    ERROR, "index-dangling-entry", f"the index lists {name} but the file is missing", name
                )
            )
            continue
        if entry.get("bytes") != size or _tokens_off(entry, size):
            out.append(
                Finding(
                    ERROR,
                    "index-wrong-size",
                    f"the index has the wrong size for {name} "
                    f"(bytes {entry.get('bytes')!r}, tokens {entry.get('tokens')!r}; "
                    f"the file has {size} bytes)",
                    name,
                )
            )
        summary = paths.root / entry.get("summary", summary_name(name))
        generated = entry.get("summaryGenerated") is True
        if generated and not summary.exists():
            out.append(
                Finding(
                    ERROR,
                    "index-summary-missing",
                    f"the index says {name} is summarized but {summary.name} is missing",
                    name,
                )
            )
        elif not generated and summary.exists() and _summary_problem(summary) is None:
            out.append(
                Finding(
                    WARNING,
                    "index-summary-flag",
                    f"{summary.name} exists but the index still lists {name} as pending",
                    name,
                )
            )
    for name in archives:
        if name not in seen:
            out.append(Finding(ERROR, "index-missing-entry", f"the archive {name} is not in the index", name))


def _interrupted_rotation(paths: StorePaths, carryover_tokens: int) -> tuple[str, bytes, bytes] | None:
    """(archive, memory, carryover) when memory.md still holds the whole newest archive.

    A rotation killed after writing the archive but before replacing memory.md leaves
    memory.md beginning with the archive's full text and the archive missing from the
    index (the entry is written last); its carryover is all that should stay. Requiring the
    missing entry keeps memory.md that merely repeats old lines from being touched.
    """
    orphans = set(_migration_orphans(paths))
    archives = [n for n in list_archives(paths) if n not in orphans]
    if not archives:
        return None
    newest = archives[-1]
    index, _problem = _raw_index(paths)
    listed = {e.get("file") for e in (index or {}).get("rotatedFiles", []) if isinstance(e, dict)}
    if newest in listed:
        return None  # rotation writes the index entry last: a listed archive was completed
    try:
        archived = (paths.root / newest).read_bytes()
        memory = paths.memory.read_bytes()
    except OSError:
        return None
    carryover = extract_tail_bytes(archived, carryover_tokens)
    if len(archived) > len(carryover) and memory.startswith(archived):
        return newest, memory, carryover
    return None


def _migration_orphans(paths: StorePaths) -> list[str]:
    """Archives written by a legacy migration that was killed before it replaced memory.md.

    Migration backs up memory.md first, then writes the archives, then memory.md, then the
    index. While memory.md still begins with the newest pre-migration backup, archives the
    index does not list whose text is a slice of that backup are copies of text memory.md
    still holds: running the migration again would archive it twice.
    """
    try:
        backups = sorted(p for p in paths.backups.iterdir() if p.name.startswith("memory.md.pre-migration-"))
    except OSError:
        return []
    if not backups:
        return []
    newest = max(backups, key=lambda p: p.stat().st_mtime)
    try:
        original = newest.read_bytes()
        memory = paths.memory.read_bytes()
    except OSError:
        return []
    if not original or not memory.startswith(original):
        return []
    index, _problem = _raw_index(paths)
    listed = {e.get("file") for e in (index or {}).get("rotatedFiles", []) if isinstance(e, dict)}
    orphans: list[str] = []
    for name in list_archives(paths):
        if name in listed:
            continue
        try:
            data = (paths.root / name).read_bytes()
        except OSError:
            continue
        if data and data in original:
            orphans.append(name)
    return orphans


def _check_migration(paths: StorePaths, out: list[Finding]) -> None:
    for name in _migration_orphans(paths):
        out.append(
            Finding(
                ERROR,
                "migration-interrupted",
                f"{name} was left by an interrupted migration; its text is still in memory.md",
                name,
            )
        )


def _carryover_tokens(paths: StorePaths) -> int:
    try:
        from memkeeper.core.settings import hook_settings

        return hook_settings(paths).carryover_tokens
    except Exception:  # a broken config is reported by status, not here
        return CARRYOVER_TOKENS


def _check_rotation(paths: StorePaths, out: list[Finding]) -> None:
    found = _interrupted_rotation(paths, _carryover_tokens(paths))
    if found:
        out.append(
            Finding(
                ERROR,
                "rotation-interrupted",
                f"a rotation into {found[0]} was interrupted: memory.md still holds the "
                "whole archived text, which would be archived twice",
                "memory.md",
            )
        )


def _age(path: Path, now: float) -> float:
    try:
        return now - path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def _store_files(paths: StorePaths, with_copies: bool = False) -> list[Path]:
    """Every path inside the store (no symlinks followed); the backup and trash copies only
    when ``with_copies`` (their privacy matters, their content is not checked)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(paths.root):
        here = Path(folder)
        if not with_copies:
            dirs[:] = [d for d in dirs if not _is_skipped(paths, here / d)]
        found.extend(here / d for d in dirs)
        found.extend(here / f for f in files)
    return found


def _check_leftovers(paths: StorePaths, out: list[Finding], stale_seconds: float, now: float) -> None:
    js_lock = paths.root / JS_ROTATION_LOCK
    if js_lock.exists() and _age(js_lock, now) > JS_LOCK_STALE_SECONDS:
        out.append(
            Finding(
                WARNING,
                "stale-js-lock",
                "a rotation lock left by the JS plugin is older than 60 seconds",
                JS_ROTATION_LOCK,
            )
        )
    if paths.state.is_dir():
        for flag in sorted(paths.state.glob("job-*.rerun")):
            kind = flag.name[len("job-") : -len(".rerun")]
            if not is_locked(paths.state / f"job-{kind}.lock") and _age(flag, now) > stale_seconds:
                out.append(
                    Finding(
                        WARNING,
                        "stale-rerun-flag",
                        f"a request to run the {kind} job again was left with no job running",
                        _rel(paths, flag),
                    )
                )
    for path in _store_files(paths):
        if path.name.startswith(".") and path.name.endswith(".tmp") and path.is_file():
            if _age(path, now) > stale_seconds:
                out.append(
                    Finding(
                        WARNING,
                        "leftover-temp",
                        "a temp file left by an interrupted write",
                        _rel(paths, path),
                    )
                )


def _check_summaries(paths: StorePaths, out: list[Finding]) -> None:
    try:
        names = sorted(os.listdir(paths.root))
    except FileNotFoundError:
        return
    for name in names:
        if name.endswith(".summary.json"):
            problem = _summary_problem(paths.root / name)
            if problem is not None:
                out.append(Finding(ERROR, "summary-corrupt", f"the summary {name} is {problem}", name))


def _l1_files(paths: StorePaths) -> list[Path]:
    if not paths.sessions.is_dir():
        return []
    return sorted(
        p
        for p in paths.sessions.iterdir()
        if p.is_file() and (p.name.endswith(".l1.jsonl") or p.name.endswith(".l1.jsonl.gz"))
    )


def _split_l1(data: bytes) -> tuple[list[bytes], list[bytes]]:
    """(good, bad) non-blank lines of an L1 file: good ones are JSON objects."""
    good: list[bytes] = []
    bad: list[bytes] = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            ok = isinstance(json.loads(line.decode("utf-8")), dict)
        except (ValueError, UnicodeDecodeError):
            ok = False
        (good if ok else bad).append(line)
    return good, bad


def _read_l1_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        return gzip.decompress(data)
    return data


def _check_l1(paths: StorePaths, out: list[Finding]) -> None:
    for path in _l1_files(paths):
        try:
            data = _read_l1_bytes(path)
        except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
            out.append(
                Finding(
                    ERROR,
                    "l1-unreadable",
                    f"the compressed session file cannot be read ({exc})",
                    _rel(paths, path),
                    fixable=False,
                )
            )
            continue
        _good, bad = _split_l1(data)
        if bad:
            fixable = not path.name.endswith(".gz")
            out.append(
                Finding(
                    ERROR,
                    "l1-bad-lines",
                    f"{len(bad)} line(s) of a session file do not parse",
                    _rel(paths, path),
                    fixable=fixable,
                )
            )


def _l1_states(paths: StorePaths) -> list[tuple[Path, dict[str, Any]]]:
    folder = paths.state / "l1"
    found: list[tuple[Path, dict[str, Any]]] = []
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        try:
            data = _load_json(path)
        except (OSError, ValueError, UnicodeDecodeError):
            continue  # the L1 update backs an unreadable state up and reconciles by content
        if isinstance(data, dict):
            found.append((path, data))
    return found


def _check_interrupted_writers(
    paths: StorePaths, out: list[Finding], stale_seconds: float, now: float, holding_lock: bool
) -> None:
    for path, state in _l1_states(paths):
        if isinstance(state.get("pending"), dict) and not is_locked(path.with_suffix(".lock")):
            out.append(
                Finding(
                    WARNING,
                    "l1-interrupted",
                    "an update of a session file was interrupted; its unconfirmed lines are "
                    "set aside and read again from the transcript",
                    _rel(paths, path),
                )
            )
    journal = paths.state / "flush-journal.json"
    # A flush writes its journal under the store lock: held by someone else, it is live.
    if (
        journal.exists()
        and _age(journal, now) > stale_seconds
        and (holding_lock or not is_locked(paths.lock))
    ):
        out.append(
            Finding(
                WARNING,
                "flush-interrupted",
                "a flush into memory.md was interrupted; it can be finished",
                _rel(paths, journal),
            )
        )


def _check_counters(paths: StorePaths, out: list[Finding]) -> None:
    try:
        data = _load_json(paths.counters)
    except FileNotFoundError:
        return
    except (OSError, ValueError, UnicodeDecodeError):
        data = None
    if not (isinstance(data, dict) and isinstance(data.get("sessions"), dict)):
        out.append(
            Finding(
                WARNING,
                "counters-corrupt",
                "the hook counters file does not parse",
                _rel(paths, paths.counters),
            )
        )


def _check_permissions(paths: StorePaths, out: list[Finding]) -> None:
    for path in [paths.root, *_store_files(paths, with_copies=True)]:
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            continue
        want = DIR_MODE if stat.S_ISDIR(info.st_mode) else FILE_MODE
        have = stat.S_IMODE(info.st_mode)
        if have != want:
            kind = "folder" if want == DIR_MODE else "file"
            out.append(
                Finding(
                    WARNING,
                    "permissions",
                    f"the {kind} has mode {have:04o} instead of {want:04o}",
                    _rel(paths, path),
                )
            )


def _check_encoding(paths: StorePaths, out: list[Finding]) -> None:
    try:
        paths.memory.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return
    except UnicodeDecodeError as exc:
        out.append(
            Finding(
                WARNING,
                "memory-not-utf8",
                f"memory.md is not valid UTF-8 (at byte {exc.start}); it is kept as it is, "
                "fix it in an editor",
                "memory.md",
                fixable=False,
            )
        )


def diagnose(paths: StorePaths, *, stale_seconds: float = TEMP_STALE_SECONDS) -> list[Finding]:
    """Every problem in the store, without changing anything. Empty means healthy.

    ``stale_seconds`` is how old a temp file or rerun flag must be to count as left over.
    """
    return _diagnose(paths, stale_seconds, holding_lock=False)


def _store_link_findings(paths: StorePaths) -> list[Finding]:
    """Links inside the store: report-only, and every other check waits until they are gone
    (each would read through them)."""
    from memkeeper.core.boundary import store_links

    return [
        Finding(
            ERROR, "store-link", f"a symbolic link inside the store (remove it): {link}", link, fixable=False
        )
        for link in store_links(paths.root)
    ]


def _diagnose(paths: StorePaths, stale_seconds: float, holding_lock: bool) -> list[Finding]:
    if not paths.root.is_dir():
        return []
    links = _store_link_findings(paths)
    if links:
        return links
    out: list[Finding] = []
    now = time.time()
    _check_index(paths, out)
    _check_migration(paths, out)
    _check_rotation(paths, out)
    _check_leftovers(paths, out, stale_seconds, now)
    _check_summaries(paths, out)
    _check_interrupted_writers(paths, out, stale_seconds, now, holding_lock)
    _check_l1(paths, out)
    _check_counters(paths, out)
    _check_encoding(paths, out)
    _check_permissions(paths, out)
    return out


# --------------------------------------------------------------------------- repairs


def _repair_index(paths: StorePaths, backup: _Backup, findings: list[Finding]) -> None:
    codes = {f.code for f in findings}
    if "index-corrupt" in codes:
        salvage = paths.index.read_bytes().decode("utf-8", "replace")
        backup.move(paths.index)
        rebuilt = rebuild_index(paths, salvage)
        rebuilt["recoveredFrom"] = "doctor"
        atomic_write_json(paths.index, rebuilt)
        return
    if "index-missing" in codes:
        atomic_write_json(paths.index, rebuild_index(paths))
        return
    if not codes & {
        "index-unsafe-entry",
        "index-duplicate-entry",
        "index-dangling-entry",
        "index-wrong-size",
        "index-missing-entry",
        "index-summary-flag",
        "index-summary-missing",
        "summary-corrupt",
    }:
        return
    if paths.index.exists():
        backup.copy(paths.index)
    removed: list[dict[str, Any]] = []

    def fix(index: dict[str, Any]) -> None:
        kept: list[dict[str, Any]] = []
        seen: set[str] = set()
        for entry in index.get("rotatedFiles", []):
            if not _entry_safe(entry) or entry["file"] in seen or not (paths.root / entry["file"]).exists():
                removed.append(entry)  # the backup copy of the index keeps it
                continue
            seen.add(entry["file"])
            size = (paths.root / entry["file"]).stat().st_size
            if entry.get("bytes") != size or _tokens_off(entry, size):
                entry["bytes"] = size
                entry["tokens"] = tokens_for_bytes(size)
            summary = paths.root / entry.get("summary", summary_name(entry["file"]))
            ok = summary.exists() and _summary_problem(summary) is None
            if entry.get("summaryGenerated") is True and not ok:
                entry["summaryGenerated"] = False  # pending again: the job will regenerate it
            elif entry.get("summaryGenerated") is not True and ok:
                entry["summaryGenerated"] = True
                entry.pop("summaryError", None)
            kept.append(entry)
        from memkeeper.core.index import archive_entry

        for name in list_archives(paths):
            if name not in seen:
                kept.append(archive_entry(paths, name))
        index["rotatedFiles"] = kept

    update_index(paths, fix)


def _repair_rotation(paths: StorePaths, backup: _Backup) -> None:
    found = _interrupted_rotation(paths, _carryover_tokens(paths))
    if not found:
        return
    _archive, memory, carryover = found
    backup.copy(paths.memory)
    archived_len = len((paths.root / found[0]).read_bytes())
    atomic_write_bytes(paths.memory, carryover + memory[archived_len:])


def _repair_leftovers(paths: StorePaths, backup: _Backup, findings: list[Finding]) -> set[str]:
    done: set[str] = set()
    for finding in findings:
        if finding.path is None:
            continue
        path = paths.root / finding.path
        if finding.code == "stale-js-lock":
            path.unlink(missing_ok=True)  # holds only a pid, as the JS plugin's own cleanup
            done.add(finding.path)
        elif finding.code == "stale-rerun-flag":
            kind = path.name[len("job-") : -len(".rerun")]
            path.unlink(missing_ok=True)
            from memkeeper.core.jobs import start_job

            start_job(paths, kind)  # the request that was left behind is honoured now
            done.add(finding.path)
        elif finding.code == "leftover-temp" and path.exists():
            backup.move(path)
            done.add(finding.path)
    return done


def _repair_summaries(paths: StorePaths, backup: _Backup, findings: list[Finding]) -> set[str]:
    done: set[str] = set()
    for finding in findings:
        if finding.code == "summary-corrupt" and finding.path:
            path = paths.root / finding.path
            if path.exists():
                backup.move(path)  # the entry becomes pending in _repair_index
            done.add(finding.path)
    return done


def _repair_l1(paths: StorePaths, backup: _Backup, findings: list[Finding]) -> set[str]:
    done: set[str] = set()
    for finding in findings:
        if finding.code != "l1-bad-lines" or not finding.fixable or not finding.path:
            continue
        path = paths.root / finding.path
        data = path.read_bytes()
        good, bad = _split_l1(data)
        if not bad:
            done.add(finding.path)
            continue
        backup.copy(path)
        sidecar = path.with_name(path.name + ".bad")
        from memkeeper.core.atomic import append_bytes

        append_bytes(sidecar, b"".join(line + b"\n" for line in bad))
        tail = b"\n" if data.endswith(b"\n") else b""
        atomic_write_bytes(path, b"\n".join(good) + tail if good else b"")
        done.add(finding.path)
    return done


def _repair_l1_pending(paths: StorePaths, backup: _Backup) -> None:
    """Roll back an L1 append whose offsets were never recorded, as the L1 update itself would.

    The rolled-back lines are kept in the backup; the next update reads them again from the
    transcript (its offset still points before them).
    """
    for path, _state in _l1_states(paths):
        with file_lock(path.with_suffix(".lock"), timeout=5.0):
            try:
                state = _load_json(path)
            except (OSError, ValueError, UnicodeDecodeError):
                continue
            pending = state.get("pending") if isinstance(state, dict) else None
            if not isinstance(pending, dict):
                continue
            name = state.get("l1")
            if isinstance(name, str) and is_safe_basename(name):
                l1 = paths.sessions / name
                keep = int(pending.get("l1_size", 0))
                if l1.exists() and l1.stat().st_size > keep:
                    backup.copy(l1)
                    os.truncate(l1, keep)
            state["entries"] = int(pending.get("entries", state.get("entries", 0)))
            state["pending"] = None
            atomic_write_json(path, state)


def _repair_counters(paths: StorePaths, backup: _Backup) -> None:
    with file_lock(paths.state / "counters.lock"):
        try:
            data = _load_json(paths.counters)
            if isinstance(data, dict) and isinstance(data.get("sessions"), dict):
                return
        except (OSError, ValueError, UnicodeDecodeError):
            pass
        if paths.counters.exists():
            backup.move(paths.counters)
        atomic_write_json(paths.counters, {"toolUses": 0, "sessions": {}})


def _repair_permissions(paths: StorePaths, findings: list[Finding]) -> set[str]:
    done: set[str] = set()
    for finding in findings:
        if finding.code != "permissions" or finding.path is None:
            continue
        path = paths.root if finding.path in ("", ".") else paths.root / finding.path
        try:
            os.chmod(path, DIR_MODE if path.is_dir() else FILE_MODE)
            done.add(finding.path)
        except OSError:
            pass
    return done


def repair(paths: StorePaths, *, stale_seconds: float = TEMP_STALE_SECONDS) -> list[Finding]:
    """Fix what :func:`diagnose` finds, backing up first; returns the findings marked repaired.

    A finding left with ``repaired=False`` is still there (report-only, or the fix failed);
    the list reflects a fresh :func:`diagnose` after the repairs.
    """
    if not paths.root.is_dir():
        return []
    links = _store_link_findings(paths)
    if links:
        return links  # nothing is repaired, moved or backed up through a link
    backup = _Backup(paths)
    failures: list[str] = []

    def attempt(step: Callable[[], object]) -> None:
        """One repair step; a failure (read-only disk, permissions) leaves its findings standing."""
        try:
            step()
        except (OSError, ValueError) as exc:
            failures.append(f"{type(exc).__name__}: {exc}")

    with reentrant_lock(paths.lock):
        before = _diagnose(paths, stale_seconds, holding_lock=True)
        codes = {f.code for f in before}
        orphans = [paths.root / f.path for f in before if f.code == "migration-interrupted" and f.path]
        # copies of text memory.md still holds: moved aside so a rerun of the migration starts clean
        attempt(lambda: [backup.move(orphan) for orphan in orphans])
        if "rotation-interrupted" in codes:
            attempt(lambda: _repair_rotation(paths, backup))
        attempt(lambda: _repair_summaries(paths, backup, before))
        attempt(lambda: _repair_index(paths, backup, before))
        attempt(lambda: _repair_leftovers(paths, backup, before))
        if "l1-interrupted" in codes:
            attempt(lambda: _repair_l1_pending(paths, backup))
        if "flush-interrupted" in codes:
            attempt(lambda: _repair_flush(paths, backup))
        attempt(lambda: _repair_l1(paths, backup, before))
        if "counters-corrupt" in codes:
            attempt(lambda: _repair_counters(paths, backup))
        attempt(lambda: _secure_backups(backup))
        after_fixes = _diagnose(paths, stale_seconds, holding_lock=True)
        attempt(lambda: _repair_permissions(paths, [f for f in after_fixes if f.code == "permissions"]))
        after = _diagnose(paths, stale_seconds, holding_lock=True)
    remaining = {(f.code, f.path) for f in after}
    result: list[Finding] = []
    for finding in before:
        finding.repaired = (finding.code, finding.path) not in remaining
        result.append(finding)
    # Problems that appeared only after the first pass (say, a new file's mode) stay visible.
    seen = {(f.code, f.path) for f in before}
    result.extend(f for f in after if (f.code, f.path) not in seen)
    for failure in dict.fromkeys(failures):
        result.append(
            Finding(ERROR, "repair-failed", f"a repair could not be done: {failure}", fixable=False)
        )
    return result


def _repair_flush(paths: StorePaths, backup: _Backup) -> None:
    from memkeeper.core.flush import recover_journal

    backup.copy(paths.state / "flush-journal.json")
    recover_journal(paths)


def _secure_backups(backup: _Backup) -> None:
    """New backup folders get the same care as the rest of the store."""
    if backup.folder.exists():
        for folder, _dirs, files in os.walk(backup.folder):
            os.chmod(folder, DIR_MODE)
            for name in files:
                os.chmod(Path(folder) / name, FILE_MODE)


def problems_left(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if not f.repaired]
