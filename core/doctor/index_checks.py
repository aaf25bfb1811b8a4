"""Checks of the index against the files: entries, summaries, duplicate archives."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from ..basics.tokens import tokens_for_bytes
from ..store.atomic import atomic_write_json
from ..store.index_entries import mark_generated, mark_pending, summary_error, summary_file, summary_generated
from ..store.memory_index import archive_entry, list_archives, rebuild_index, update_index
from ..store.names import SUMMARY_SUFFIX, summary_name
from ..store.paths import StorePaths, is_safe_basename
from .base import (
    ERROR,
    NOTE,
    WARNING,
    Check,
    Context,
    Finding,
    listed_archives,
    load_json,
    raw_index,
    rel,
)


def summary_problem(path: Path) -> str | None:
    """Why the L3 summary at ``path`` is unusable, or None if it parses."""
    try:
        data = load_json(path)
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return f"not valid JSON ({type(exc).__name__})"
    if not isinstance(data, dict):
        return "not a JSON object"
    try:  # the typed model, when the summaries module is installed
        from ..summaries.summary import load_summary
    except ImportError:
        return None
    try:
        load_summary(path)
    except Exception as exc:  # any validation error means "does not parse"
        return f"does not match the summary format ({type(exc).__name__})"
    return None


def entry_safe(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    name = entry.get("file")
    summary = entry.get("summary", summary_name(name) if isinstance(name, str) else None)
    return all(
        isinstance(value, str) and is_safe_basename(value) and not value.startswith(".")
        for value in (name, summary)
    )


def tokens_off(entry: dict[str, Any], size: int) -> bool:
    """True when ``tokens`` is clearly not the archive's size in tokens.

    Legacy migration records the sum of per-section estimates, a little above
    ``ceil(bytes/4)``; a small tolerance keeps those from being reported.
    """
    tokens = entry.get("tokens")
    if isinstance(tokens, bool) or not isinstance(tokens, int):
        return True
    expected = tokens_for_bytes(size)
    return abs(tokens - expected) > max(16, expected // 50)


def _summary_flag(paths: StorePaths, entry: dict[str, Any]) -> Finding | None:
    name = entry["file"]
    summary = paths.root / (summary_file(entry) or summary_name(name))
    generated = summary_generated(entry)
    if generated and not summary.exists():
        return Finding(
            ERROR,
            "index-summary-missing",
            f"the index says {name} is summarized but {summary.name} is missing",
            name,
        )
    if not generated and summary.exists() and summary_problem(summary) is None:
        return Finding(
            WARNING,
            "index-summary-flag",
            f"{summary.name} exists but the index still lists {name} as pending",
            name,
        )
    error = None if generated else summary_error(entry)
    if error is not None:  # not damage (the store is healthy), but what `status` lists as failed
        return Finding(
            NOTE,
            "summary-failed",
            f"the summary of {name} failed ({error[:200]}); it is retried while tries are left, "
            "and `memkeeper regenerate` tries again now",
            name,
            fixable=False,
        )
    return None


def _entry_finding(paths: StorePaths, entry: Any, seen: set[str]) -> Finding | None:
    """What is wrong with one index entry (None if nothing); records its name in ``seen``."""
    if not entry_safe(entry):
        return Finding(
            ERROR,
            "index-unsafe-entry",
            f"an index entry names a file outside the memory folder: {entry!r:.120}",
            rel(paths, paths.index),
        )
    name = entry["file"]
    if name in seen:
        return Finding(ERROR, "index-duplicate-entry", f"the index lists {name} more than once", name)
    seen.add(name)
    try:
        size = (paths.root / name).stat().st_size
    except FileNotFoundError:
        return Finding(ERROR, "index-dangling-entry", f"the index lists {name} but the file is missing", name)
    if entry.get("bytes") != size or tokens_off(entry, size):
        return Finding(
            ERROR,
            "index-wrong-size",
            f"the index has the wrong size for {name} (bytes {entry.get('bytes')!r}, "
            f"tokens {entry.get('tokens')!r}; the file has {size} bytes)",
            name,
        )
    return _summary_flag(paths, entry)


def _fixed_entry(paths: StorePaths, entry: dict[str, Any]) -> dict[str, Any]:
    size = (paths.root / entry["file"]).stat().st_size
    if entry.get("bytes") != size or tokens_off(entry, size):
        entry["bytes"] = size
        entry["tokens"] = tokens_for_bytes(size)
    summary = paths.root / (summary_file(entry) or summary_name(entry["file"]))
    ok = summary.exists() and summary_problem(summary) is None
    if summary_generated(entry) and not ok:
        mark_pending(entry)  # the job will regenerate it
    elif not summary_generated(entry) and ok:
        mark_generated(entry)
    return entry


class IndexCheck(Check):
    """``memory-index.json`` parses and lists every archive once, with its true size and summary state."""

    codes = (
        "index-corrupt",
        "index-missing",
        "index-unsafe-entry",
        "index-duplicate-entry",
        "index-dangling-entry",
        "index-wrong-size",
        "index-summary-missing",
        "index-summary-flag",
        "index-missing-entry",
        "summary-failed",
    )

    def diagnose(self, ctx: Context) -> list[Finding]:
        paths = ctx.paths
        index, problem = raw_index(paths)
        where = rel(paths, paths.index)
        if problem is not None:
            return [
                Finding(
                    ERROR, "index-corrupt", f"the index {problem}; it can be rebuilt from the archives", where
                )
            ]
        archives = list_archives(paths)
        if index is None:
            if archives:
                return [
                    Finding(ERROR, "index-missing", "the index file is missing but archives exist", where)
                ]
            return []
        seen: set[str] = set()
        out = [f for e in index.get("rotatedFiles", []) if (f := _entry_finding(paths, e, seen)) is not None]
        out += [
            Finding(ERROR, "index-missing-entry", f"the archive {name} is not in the index", name)
            for name in archives
            if name not in seen
        ]
        return out

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        paths, backup = ctx.paths, ctx.backed_up()
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
        if paths.index.exists():
            backup.copy(paths.index)

        def fix(index: dict[str, Any]) -> None:
            kept: list[dict[str, Any]] = []
            seen: set[str] = set()
            for entry in index.get("rotatedFiles", []):
                # unsafe, repeated or dangling entries are dropped (the backup copy keeps them)
                if entry_safe(entry) and entry["file"] not in seen and (paths.root / entry["file"]).exists():
                    seen.add(entry["file"])
                    kept.append(_fixed_entry(paths, entry))
            kept += [archive_entry(paths, name) for name in list_archives(paths) if name not in seen]
            index["rotatedFiles"] = kept

        update_index(paths, fix)


class SummariesCheck(Check):
    """Every ``*.summary.json`` parses as a summary (a corrupt one is set aside, to be regenerated)."""

    codes = ("summary-corrupt",)

    def diagnose(self, ctx: Context) -> list[Finding]:
        try:
            names = sorted(os.listdir(ctx.paths.root))
        except FileNotFoundError:
            return []
        out: list[Finding] = []
        for name in names:
            if name.endswith(SUMMARY_SUFFIX):
                problem = summary_problem(ctx.paths.root / name)
                if problem is not None:
                    out.append(Finding(ERROR, "summary-corrupt", f"the summary {name} is {problem}", name))
        return out

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        for finding in findings:
            path = ctx.paths.root / str(finding.path)
            if path.exists():
                ctx.backed_up().move(path)  # the index check then marks the entry pending


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def duplicate_archives(paths: StorePaths) -> list[tuple[str, str]]:
    """(kept, duplicate) pairs of archives with byte-identical text (the older name is kept)."""
    by_size: dict[int, list[str]] = {}
    for name in list_archives(paths):
        try:
            size = paths.archive(name).stat().st_size
        except OSError:
            continue
        if size:
            by_size.setdefault(size, []).append(name)
    pairs: list[tuple[str, str]] = []
    for names in by_size.values():
        if len(names) < 2:
            continue
        first: dict[str, str] = {}
        for name in sorted(names):
            digest = _digest(paths.archive(name))
            if digest in first:
                pairs.append((first[digest], name))
            else:
                first[digest] = name
    return sorted(pairs)


class DuplicateArchivesCheck(Check):
    """No two archives hold the same text (a rotation repeated after a crash archives it twice)."""

    codes = ("archive-duplicate",)

    def diagnose(self, ctx: Context) -> list[Finding]:
        return [
            Finding(ERROR, "archive-duplicate", f"{dup} is a byte-identical copy of {kept}", dup)
            for kept, dup in duplicate_archives(ctx.paths)
        ]

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        paths = ctx.paths
        listed = listed_archives(paths)
        for kept, dup in duplicate_archives(paths):
            if dup in listed and kept not in listed:
                kept, dup = dup, kept  # keep the one the index knows (its summary state goes with it)
            prefix = summary_name(dup).removesuffix(".json")
            companions = [paths.root / n for n in os.listdir(paths.root) if n.startswith(prefix + ".")]
            for path in [paths.archive(dup), *companions]:
                ctx.backed_up().move(path)  # the index check drops the entry afterwards
