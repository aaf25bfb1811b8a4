"""Where an entry of a shared store came from: read-only from git, the files unchanged.

In a store shared through git (:func:`~memkeeper.core.sharing.marks.is_shared`), the author of a
``## `` section of memory.md or an archive is the author of the commit that added its header
line (``git blame``), and the author of an L1 session is the author of the commit that added
the file. An author who is not this machine's git user (``user.email``, else ``user.name``)
is someone else's: :func:`entry_from` names them. Lines not committed yet are this machine's.

Cheap when the store is not shared: no git process at all. Within a process, each file's
answer is cached by its (mtime, size), the repository and its user by project.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from ..store.names import is_archive, is_l1
from ..store.paths import StorePaths
from .marks import is_shared
from .share import ShareError, git

#: git's bound per call (blame of a big archive stays well under it).
GIT_TIMEOUT = 20.0
_UNCOMMITTED = "0" * 40
_T = TypeVar("_T")
#: {1-based line: (what it is: "header" (``## ``), "blank" or "text"; who committed it)}
Blame = dict[int, tuple[str, "Author | None"]]


@dataclass(frozen=True)
class Author:
    """Who committed an entry first: name, email, the commit (abbreviated) and its date (UTC)."""

    name: str
    email: str
    commit: str
    date: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    def label(self) -> str:
        return f"from {self.name or self.email}"


@dataclass(frozen=True)
class _Repo:
    root: Path
    email: str
    name: str


_repos: dict[Path, _Repo | None] = {}
_files: dict[tuple[str, Path], tuple[int, int, object]] = {}


def _run(cwd: Path, *args: str) -> str | None:
    try:
        done = git(cwd, *args, check=False, timeout=GIT_TIMEOUT)
    except (ShareError, OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def _repo(paths: StorePaths) -> _Repo | None:
    """The repository of a shared store and this machine's git user; None when not shared."""
    if not is_shared(paths):
        return None
    key = Path(paths.project)
    if key not in _repos:
        top = _run(key, "rev-parse", "--show-toplevel")
        if top is None or not top.strip():
            _repos[key] = None
        else:
            root = Path(top.strip())
            email = (_run(root, "config", "user.email") or "").strip()
            name = (_run(root, "config", "user.name") or "").strip()
            _repos[key] = _Repo(root, email, name)
    return _repos[key]


def _cached(what: str, path: Path, compute: Callable[[], _T], empty: _T) -> _T:
    """``compute()`` for ``path``, kept while its (mtime, size) stay the same."""
    try:
        stat = path.stat()
    except OSError:
        return empty
    held = _files.get((what, path))
    if held is not None and held[:2] == (stat.st_mtime_ns, stat.st_size):
        return held[2]  # type: ignore[return-value]
    value = compute()
    _files[what, path] = (stat.st_mtime_ns, stat.st_size, value)
    return value


def _utc(epoch: str) -> str:
    try:
        moment = datetime.fromtimestamp(int(epoch), tz=UTC)
    except (ValueError, OverflowError, OSError):
        return ""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _mine(repo: _Repo, name: str, email: str) -> bool:
    if repo.email and email:
        return email.lower() == repo.email.lower()
    return bool(repo.name) and name == repo.name


def parse_blame(porcelain: str) -> Blame:
    """``git blame --line-porcelain`` as {1-based line: (header, blank or text, its author)};
    the author is None for a line not committed yet."""
    lines: Blame = {}
    fields: dict[str, str] = {}
    commit, final = "", 0
    for row in porcelain.split("\n"):
        if row.startswith("\t"):
            author = None
            if commit != _UNCOMMITTED:
                email = fields.get("author-mail", "").strip("<>")
                author = Author(
                    fields.get("author", ""), email, commit[:7], _utc(fields.get("author-time", ""))
                )
            content = row[1:]
            kind = "header" if content.startswith("## ") else "text" if content.strip() else "blank"
            lines[final] = (kind, author)
            fields, commit = {}, ""
        elif not commit:
            parts = row.split(" ")
            if len(parts) >= 3 and len(parts[0]) >= 40 and parts[2].isdigit():
                commit, final = parts[0], int(parts[2])
        else:
            key, _, value = row.partition(" ")
            fields[key] = value
    return lines


def _in_repo(repo: _Repo, path: Path) -> str:
    """``path`` relative to the repository (git prints its top folder resolved)."""
    return os.path.relpath(os.path.realpath(path), repo.root)


def _blame(repo: _Repo, path: Path) -> Blame:
    out = _run(repo.root, "blame", "--line-porcelain", "--", _in_repo(repo, path))
    return parse_blame(out) if out else {}


def _blamed(repo: _Repo, path: Path) -> Blame:
    """The file's blame, cached by (mtime, size)."""
    empty: Blame = {}
    return _cached("blame", path, lambda: _blame(repo, path), empty)


def _added_by(repo: _Repo, path: Path) -> Author | None:
    out = _run(
        repo.root,
        "log",
        "--diff-filter=A",
        "--format=%H%x00%an%x00%ae%x00%at",
        "--",
        _in_repo(repo, path),
    )
    rows = [row for row in (out or "").split("\n") if row.count("\x00") == 3]
    if not rows:
        return None
    commit, name, email, epoch = rows[-1].split("\x00")  # the first commit that added it
    return Author(name, email, commit[:7], _utc(epoch))


def _foreign(repo: _Repo, author: Author | None) -> Author | None:
    return None if author is None or _mine(repo, author.name, author.email) else author


def section_authors(paths: StorePaths, rel: str) -> dict[int, Author]:
    """The ``## `` sections of a memory file (relative to the store) that came from someone
    else: {header line (1-based): author}. Empty when the store is not shared."""
    repo = _repo(paths)
    if repo is None or not (rel == "memory.md" or is_archive(rel)):
        return {}
    path = paths.root / rel
    blamed = _blamed(repo, path)
    found: dict[int, Author] = {}
    for line, (kind, author) in blamed.items():
        other = _foreign(repo, author) if kind == "header" else None
        if other is not None:
            found[line] = other
    return found


def session_author(paths: StorePaths, rel: str) -> Author | None:
    """Who added an L1 session file (relative to the store) when it was someone else."""
    repo = _repo(paths)
    name = rel.rpartition("/")[2]
    if repo is None or not is_l1(name):
        return None
    path = paths.root / rel
    return _foreign(repo, _cached("added", path, lambda: _added_by(repo, path), None))


def entry_from(paths: StorePaths, rel: str, line: int | None) -> Author | None:
    """Who an entry came from (a section of memory.md or an archive at ``line``, or an L1
    session), or None when it is this machine's, not committed or the store is not shared."""
    if rel.startswith("sessions/"):
        return session_author(paths, rel)
    repo = _repo(paths)
    if line is None or repo is None or not (rel == "memory.md" or is_archive(rel)):
        return None
    path = paths.root / rel
    header = _header_of(_blamed(repo, path), line)
    return None if header is None else section_authors(paths, rel).get(header)


def _header_of(blamed: Blame, line: int) -> int | None:
    """The ``## `` header line of the section that holds ``line`` (or opens after blank lines)."""
    number = line
    while blamed.get(number, ("", None))[0] == "blank":
        number += 1
    if blamed.get(number, ("", None))[0] == "header":
        return number
    for number in range(line, 0, -1):
        if blamed.get(number, ("", None))[0] == "header":
            return number
    return None
