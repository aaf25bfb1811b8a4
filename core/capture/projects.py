"""Which projects on this machine have a memory store.

Claude Code keeps one folder of transcripts per project under ``~/.claude/projects``;
every transcript line carries the ``cwd`` it ran in. We read only the first lines of
the newest transcript in each folder to learn that ``cwd`` and keep the projects whose
``.claude/memory`` exists. Stdlib only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..store.paths import StorePaths
from .transcript import claude_projects_root

#: How many lines of a transcript we look at for a ``cwd`` before giving up on it.
HEAD_LINES = 20
#: Longest first line we read (a transcript can open with a huge pasted prompt).
HEAD_BYTES = 256 * 1024


@dataclass(frozen=True)
class ProjectInfo:
    """A project with a store, and when Claude Code last wrote a transcript for it."""

    project: Path
    last_active: float  # mtime of its newest transcript, seconds since the epoch

    @property
    def paths(self) -> StorePaths:
        return StorePaths(self.project)


def transcript_cwd(path: Path) -> str | None:
    """The ``cwd`` named in the first lines of a transcript, None if there is none."""
    try:
        with path.open("rb") as handle:
            for _ in range(HEAD_LINES):
                line = handle.readline(HEAD_BYTES)
                if not line:
                    return None
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                cwd = record.get("cwd") if isinstance(record, dict) else None
                if isinstance(cwd, str) and cwd:
                    return cwd
    except OSError:
        return None
    return None


def find_projects(projects_dir: Path | None = None) -> list[ProjectInfo]:
    """Projects that have a ``.claude/memory`` store, most recently active first."""
    root = projects_dir or claude_projects_root()  # honours CLAUDE_CONFIG_DIR, as Claude Code does
    try:
        folders = [p for p in root.iterdir() if p.is_dir()]
    except OSError:
        return []
    found: dict[Path, float] = {}
    for folder in folders:
        transcripts: list[tuple[float, Path]] = []
        try:
            for entry in os.scandir(folder):
                if entry.name.endswith(".jsonl") and entry.is_file():
                    transcripts.append((entry.stat().st_mtime, Path(entry.path)))
        except OSError:
            continue
        for mtime, transcript in sorted(transcripts, reverse=True):
            cwd = transcript_cwd(transcript)
            if cwd is None:
                continue
            project = Path(cwd)
            if StorePaths(project).root.is_dir():
                found[project] = max(found.get(project, 0.0), mtime)
            break
    return sorted(
        (ProjectInfo(p, t) for p, t in found.items()), key=lambda info: (-info.last_active, str(info.project))
    )
