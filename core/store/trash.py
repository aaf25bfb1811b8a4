"""Forgetting into the store's trash, and restoring from it.

Forgetting an L1 session or an archive never deletes anything: the files move into
``<store>/.trash/<trash id>/`` beside a ``manifest.json`` that records where each one
came from (and, for an archive, its index entry), so :func:`restore` can put everything
back. Each operation holds the store lock; the index is changed through
:func:`memkeeper.core.store.memory_index.update_index`. Stdlib only.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..basics.timestamps import file_stamp, iso_now
from . import intents
from .atomic import atomic_write_json, atomic_write_text
from .index_entries import find_entry, mark_pending
from .lock import reentrant_lock
from .memory_index import archive_entry, update_index
from .names import L1_SUFFIX, is_archive, is_l1, summary_name
from .paths import DIR_MODE, StorePaths, is_safe_basename

MANIFEST = "manifest.json"


class ForgetError(ValueError):
    """The request names nothing that can be forgotten or restored (message is one line)."""


@dataclass(frozen=True)
class TrashItem:
    """One forgotten thing in the trash."""

    id: str
    kind: str  # "l1" | "archive" | "excerpt" (lines of memory.md or an archive)
    name: str  # the session file or archive basename
    deleted_at: str  # ISO-8601 UTC
    files: tuple[str, ...]  # paths relative to the store root, as they were


def _trash_id(paths: StorePaths, kind: str, name: str) -> str:
    stamp = file_stamp()
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80]
    candidate = f"{stamp}_{kind}_{stem}"
    n = 1
    while (paths.trash / candidate).exists():
        n += 1
        candidate = f"{stamp}_{kind}_{stem}_{n}"
    return candidate


def move_into_trash(
    paths: StorePaths, kind: str, name: str, files: list[Path], extra: dict[str, Any]
) -> TrashItem:
    """Move ``files`` (inside the store) into a new trash folder with its manifest."""
    paths.trash.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    trash_id = _trash_id(paths, kind, name)
    folder = paths.trash / trash_id
    folder.mkdir(mode=DIR_MODE)
    relative = [str(f.relative_to(paths.root)) for f in files]
    manifest: dict[str, Any] = {
        "id": trash_id,
        "kind": kind,
        "name": name,
        "deletedAt": iso_now(),
        "files": [{"original": rel, "stored": f"{i}_{Path(rel).name}"} for i, rel in enumerate(relative)],
        **extra,
    }
    # The manifest goes first: if we are killed halfway, restore still knows every file.
    atomic_write_json(folder / MANIFEST, manifest)
    for source, item in zip(files, manifest["files"], strict=True):
        os.replace(source, folder / item["stored"])
    return TrashItem(trash_id, kind, name, manifest["deletedAt"], tuple(relative))


def forget_l1(paths: StorePaths, name: str) -> TrashItem:
    """Move the L1 session file ``name`` (and its ``.raw.jsonl`` sibling) into the trash."""
    if not is_safe_basename(name) or not is_l1(name):
        raise ForgetError(f"not an L1 session file name: {name!r}")
    with reentrant_lock(paths.lock):
        intents.recover_pending(paths)
        path = paths.sessions / name
        if not path.is_file():
            raise ForgetError(f"no such L1 session: {name}")
        stem = name.split(L1_SUFFIX, 1)[0]
        files = [path] + [p for p in (paths.sessions / f"{stem}.raw.jsonl",) if p.is_file()]
        return move_into_trash(paths, "l1", name, files, {})


def forget_archive(paths: StorePaths, name: str) -> TrashItem:
    """Move the archive ``name`` with its summary (and raw output) into the trash; drop its index entry."""
    if not is_safe_basename(name) or not is_archive(name):
        raise ForgetError(f"not an archive name: {name!r}")
    with reentrant_lock(paths.lock):
        intents.recover_pending(paths)
        path = paths.archive(name)
        if not path.is_file():
            raise ForgetError(f"no such archive: {name}")
        summary_prefix = summary_name(name).removesuffix(".json")  # memory_X.summary
        companions = sorted(
            paths.root / n for n in os.listdir(paths.root) if n.startswith(summary_prefix + ".") and n != name
        )
        removed: list[dict[str, Any]] = []

        def drop(index: dict[str, Any]) -> None:
            keep = []
            for entry in index.get("rotatedFiles", []):
                if isinstance(entry, dict) and entry.get("file") == name:
                    removed.append(entry)
                else:
                    keep.append(entry)
            index["rotatedFiles"] = keep

        item = move_into_trash(paths, "archive", name, [path, *companions], {})
        update_index(paths, drop)
        if removed:
            manifest_path = paths.trash / item.id / MANIFEST
            manifest = json.loads(manifest_path.read_text("utf-8"))
            manifest["indexEntry"] = removed[0]
            atomic_write_json(manifest_path, manifest)
        return item


def forget_lines(paths: StorePaths, name: str, start: int, end: int, expected: str) -> TrashItem:
    """Move lines ``start``…``end`` (1-based) of memory.md or an archive into the trash.

    ``expected`` is the text the caller showed for those lines (their Markdown markers may
    differ): refused when the lines no longer hold it (the file changed). An archive's
    summary is marked pending (stale) so the summary job rebuilds it without the lines.
    """
    if not is_safe_basename(name) or not name.startswith("memory") or not name.endswith(".md"):
        raise ForgetError(f"not memory.md or an archive: {name!r}")
    with reentrant_lock(paths.lock):
        path = paths.memory if name == "memory.md" else paths.archive(name)
        if not path.is_file() or path.is_symlink():
            raise ForgetError(f"no such file: {name}")
        lines = path.read_bytes().decode("utf-8").split("\n")
        if not 1 <= start <= end <= len(lines):
            raise ForgetError(f"{name} has no lines {start}-{end}")
        removed = lines[start - 1 : end]
        if any(word not in "\n".join(removed) for word in expected.split()):
            raise ForgetError(f"{name} changed since it was shown; reload and try again")
        extra = {"file": name, "line": start, "text": removed}
        item = move_into_trash(paths, "excerpt", f"{name} lines {start}-{end}", [], extra)
        atomic_write_text(path, "\n".join(lines[: start - 1] + lines[end:]))
        if name != "memory.md":
            update_index(paths, lambda index: _mark_stale(index, name))
        return item


def _mark_stale(index: dict[str, Any], name: str) -> None:
    entry = find_entry(index, name)
    if entry is not None:
        mark_pending(entry)


def _restore_excerpt(paths: StorePaths, folder: Path, manifest: dict[str, Any]) -> None:
    """Put removed lines back where they were (or at the end, if the file is shorter now).

    The digest of the file as restored is saved in the manifest first, so completing a
    restore that was killed after writing does not insert the lines a second time.
    """
    import hashlib

    name = str(manifest.get("file", ""))
    text = manifest.get("text")
    if not is_safe_basename(name) or not isinstance(text, list):
        raise ForgetError("trash manifest of an excerpt is unusable")
    path = paths.memory if name == "memory.md" else paths.archive(name)
    current = path.read_bytes() if path.is_file() else b""
    if manifest.get("restoredDigest") == hashlib.sha256(current).hexdigest():
        return  # already written back by the restore being completed
    lines = current.decode("utf-8").split("\n")
    at = min(max(1, int(manifest.get("line") or 1)), len(lines)) - 1
    restored = "\n".join(lines[:at] + [str(t) for t in text] + lines[at:])
    manifest["restoredDigest"] = hashlib.sha256(restored.encode("utf-8")).hexdigest()
    atomic_write_json(folder / MANIFEST, manifest)
    atomic_write_text(path, restored)
    if name != "memory.md":
        update_index(paths, lambda index: _mark_stale(index, name))


def _read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def list_trash(paths: StorePaths) -> list[TrashItem]:
    """Everything in the trash, newest first (folders without a readable manifest are skipped)."""
    try:
        folders = [p for p in paths.trash.iterdir() if p.is_dir()]
    except FileNotFoundError:
        return []
    items: list[TrashItem] = []
    for folder in folders:
        manifest = _read_manifest(folder)
        if manifest is None:
            continue
        files = tuple(str(f.get("original", "")) for f in manifest.get("files", []) if isinstance(f, dict))
        items.append(
            TrashItem(
                id=folder.name,
                kind=str(manifest.get("kind", "?")),
                name=str(manifest.get("name", folder.name)),
                deleted_at=str(manifest.get("deletedAt", "")),
                files=files,
            )
        )
    return sorted(items, key=lambda item: (item.deleted_at, item.id), reverse=True)


def _moves(paths: StorePaths, trash_id: str, manifest: dict[str, Any]) -> list[tuple[Path, Path]]:
    """(stored, original) for every file of a trash item; ForgetError if one points outside."""
    folder = paths.trash / trash_id
    moves: list[tuple[Path, Path]] = []
    for item in manifest.get("files", []):
        original = Path(str(item.get("original", "")))
        stored = str(item.get("stored", ""))
        if original.is_absolute() or ".." in original.parts or not is_safe_basename(stored):
            raise ForgetError(f"trash manifest {trash_id} names a path outside the store")
        moves.append((folder / stored, paths.root / original))
    return moves


def restore(paths: StorePaths, trash_id: str) -> TrashItem:
    """Put a trashed item back where it was (refusing to overwrite), and its index entry.

    An intent is recorded before the first file moves, so a restore killed half way is
    completed by the next store operation rather than leaving a phantom trash entry.
    """
    if not is_safe_basename(trash_id):
        raise ForgetError(f"not a trash id: {trash_id!r}")
    with reentrant_lock(paths.lock):
        intents.recover_pending(paths)
        manifest = _read_manifest(paths.trash / trash_id)
        if manifest is None:
            raise ForgetError(f"nothing in the trash with id {trash_id}")
        for _source, target in _moves(paths, trash_id, manifest):
            if target.exists():
                raise ForgetError(
                    f"{target.relative_to(paths.root)} exists again; move it away before restoring"
                )
        intents.record(paths, "restore", {"trashId": trash_id})
        intents.crash_point("restore:intent")
        _finish_restore(paths, trash_id, manifest)
        intents.clear(paths, "restore")
        files = tuple(str(f.get("original", "")) for f in manifest.get("files", []))
        return TrashItem(
            trash_id,
            str(manifest.get("kind", "?")),
            str(manifest.get("name", "")),
            str(manifest.get("deletedAt", "")),
            files,
        )


def _finish_restore(paths: StorePaths, trash_id: str, manifest: dict[str, Any]) -> None:
    """Move back what is still in the trash, put the index entry back, drop the trash folder.

    Idempotent: a file already back (gone from the trash) is skipped, so a second run
    after a kill completes the first.
    """
    folder = paths.trash / trash_id
    for source, target in _moves(paths, trash_id, manifest):
        if source.exists() and not target.exists():
            target.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            os.replace(source, target)
            intents.crash_point("restore:file")
    name = str(manifest.get("name", ""))
    if manifest.get("kind") == "archive":
        saved = manifest.get("indexEntry")

        def put_back(index: dict[str, Any]) -> None:
            entries = [
                e
                for e in index.get("rotatedFiles", [])
                if not (isinstance(e, dict) and e.get("file") == name)
            ]
            entry = saved if isinstance(saved, dict) else archive_entry(paths, name)
            entries.append(entry)
            entries.sort(key=lambda e: str(e.get("file", "")) if isinstance(e, dict) else "")
            index["rotatedFiles"] = entries

        update_index(paths, put_back)
        intents.crash_point("restore:index")
    elif manifest.get("kind") == "excerpt":
        _restore_excerpt(paths, folder, manifest)
    (folder / MANIFEST).unlink(missing_ok=True)
    try:
        folder.rmdir()
    except OSError:
        pass  # something unexpected was left in it; keep it rather than delete it


def finish_interrupted(paths: StorePaths, intent: dict[str, Any]) -> None:
    """Complete a restore a kill interrupted (the store lock is held)."""
    trash_id = intent.get("trashId")
    if not (isinstance(trash_id, str) and is_safe_basename(trash_id)):
        return
    manifest = _read_manifest(paths.trash / trash_id)
    if manifest is not None:
        _finish_restore(paths, trash_id, manifest)
