"""The change journal: which store files our own writers changed in place.

Adding, removing or renaming a file changes its folder's modification time, which the
search index checks at no per-file cost. Appending to an existing file does not, so the
writers that append (the L1 refiner) name the file here after writing it: one line per
change, appended to ``.state/changes.log`` with ``O_APPEND``. The index reads the journal
from where it stopped and re-reads only the files named. The index moves a long, fully
read journal aside (``changes.log.1``) and reads what reaches the old one late; a missing
journal makes the index check every file once. Stdlib only (imported by jobs).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..basics.platform import open_no_follow
from .paths import StorePaths

JOURNAL = "changes.log"
OLD_SUFFIX = ".1"


def journal_path(paths: StorePaths) -> Path:
    return paths.state / JOURNAL


def old_journal_path(paths: StorePaths) -> Path:
    return paths.state / (JOURNAL + OLD_SUFFIX)


def record(paths: StorePaths, *files: Path | str) -> None:
    """Note that ``files`` (inside the store) changed; never raises (the index has a full check)."""
    rels: list[str] = []
    for file in files:
        try:
            rel = Path(file).relative_to(paths.root).as_posix() if Path(file).is_absolute() else str(file)
        except ValueError:
            continue
        if rel and "\n" not in rel:
            rels.append(rel)
    if not rels:
        return
    try:
        paths.state.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = open_no_follow(journal_path(paths), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        os.write(fd, "".join(rel + "\n" for rel in rels).encode("utf-8", "surrogateescape"))
    except OSError:
        pass
    finally:
        os.close(fd)


def create(paths: StorePaths) -> None:
    """An empty journal, if there is none."""
    try:
        paths.state.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(open_no_follow(journal_path(paths), os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:
        pass


def read_from(path: Path, inode: int, offset: int) -> tuple[int, int, list[str]] | None:
    """(inode, end offset, file names) of the whole lines after ``offset``; None if the file is missing.

    A journal with another inode than recorded is read from its start; one that is a link is
    not read (taken as missing).
    """
    from .atomic import open_read

    try:
        with open_read(path) as handle:
            st = os.fstat(handle.fileno())
            start = offset if st.st_ino == inode and offset <= st.st_size else 0
            handle.seek(start)
            data = handle.read()
    except OSError:
        return None
    end = data.rfind(b"\n") + 1  # a line still being written is read next time
    names = [line.decode("utf-8", "surrogateescape") for line in data[:end].split(b"\n") if line]
    return st.st_ino, start + end, names
