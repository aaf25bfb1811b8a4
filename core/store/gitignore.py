"""The store's ``.gitignore``: its one text and its one writer, for a private store and a shared one.

The file is a whitelist: it ignores everything (``/*``) and lets through only the memory —
``memory.md``, the archives, their L3 summaries, ``memory-index.json``, the project notes and the
store's own ``.gitignore`` / ``.gitattributes`` (:data:`COMMITTED`); the L1 sessions (raw prompts
and tool output) only when the team shares them. Runtime state — ``.state/``, ``logs/``, the search
index, the trash, the backups, a summarizer's raw answer, the JS plugin's ``delta_temp.txt``, and
whatever a later version adds — is never committed. Three texts, by :data:`Mode`:

- ``private``: a new store's, written by :func:`memkeeper.core.store.state_stamp.mark_made_here`
  when it has none: the memory is yours to commit;
- ``shared``: written by ``memkeeper share`` (:mod:`memkeeper.core.sharing.share`): the same
  files, the L1 sessions too with ``--sessions``;
- ``off``: written by ``memkeeper share --off``: nothing in the store is committed.

Stdlib ``os`` only: the hooks reach it through :mod:`memkeeper.core.store.state_stamp`.
"""

from __future__ import annotations

import os
from typing import Literal

from .layout import GITIGNORE, INDEX_FILE, MEMORY_FILE, NAMED_MEMORY_FILES, SESSIONS_DIR
from .names import is_archive, is_l1, is_summary

GITATTRIBUTES = ".gitattributes"
#: The first line of every file ``memkeeper share`` writes (``.gitignore``, ``.gitattributes``).
SHARE_MARKER = "# memkeeper share:"
#: The line of the ``.gitignore`` that lets the L1 sessions through (``memkeeper share --sessions``).
SESSIONS_LINE = f"!/{SESSIONS_DIR}/*.l1.jsonl"
#: What the ``.gitignore`` lets through at the top of the store (git patterns).
COMMITTED = (
    GITIGNORE,
    GITATTRIBUTES,
    MEMORY_FILE,
    "memory_*.md",
    "memory_*.summary.json",
    INDEX_FILE,
    *NAMED_MEMORY_FILES.values(),
)

Mode = Literal["private", "shared", "off"]

#: The first line of the private text memkeeper wrote before this one, a list of runtime names that
#: let a summarizer's raw answer and the JS plugin's delta through (``doctor --repair`` replaces it).
EARLIER_PRIVATE_HEADER = (
    "# memkeeper: the runtime state of one machine, never committed (the memory files are yours to commit;"
)

_HEADERS: dict[Mode, str] = {
    "private": (
        "# memkeeper: only the memory below is committable (yours to commit); runtime state never is.\n"
        "# `memkeeper share` turns on team memory and rewrites this file."
    ),
    "shared": f"{SHARE_MARKER} on. Only the memory below is committed; runtime state never is.",
}


def gitignore_text(mode: Mode, sessions: bool = False) -> str:
    """The store's ``.gitignore`` in ``mode``; ``sessions`` (shared only) lets the L1 sessions through."""
    if mode == "off":
        return (
            f"{SHARE_MARKER} off. Nothing in the memory store is committed (turn on: memkeeper share).\n*\n"
        )
    lines = [_HEADERS[mode], "/*", *(f"!/{name}" for name in COMMITTED)]
    if sessions and mode == "shared":
        lines += [
            "# L1 sessions (raw prompts and tool output) are shared: memkeeper share --sessions",
            f"!/{SESSIONS_DIR}/",
            f"/{SESSIONS_DIR}/*",
            SESSIONS_LINE,
            f"{SESSIONS_LINE}.gz",
        ]
    return "\n".join(lines) + "\n"


def write_gitignore(root: str | os.PathLike[str], mode: Mode, sessions: bool = False) -> None:
    """The one writer of the store's ``.gitignore`` (in the store folder ``root``)."""
    from .atomic import atomic_write_text

    atomic_write_text(os.path.join(root, GITIGNORE), gitignore_text(mode, sessions), redact=False)


def is_committed(rel: str, sessions: bool) -> bool:
    """True for a path (relative to the store folder, ``/``-separated) the ``.gitignore`` lets
    through (``sessions``: the L1 sessions are shared)."""
    folder, _, name = rel.rpartition("/")
    if folder == SESSIONS_DIR:
        return sessions and is_l1(name)
    if folder:
        return False
    return (
        name in (GITIGNORE, GITATTRIBUTES, MEMORY_FILE, INDEX_FILE)
        or name in NAMED_MEMORY_FILES.values()
        or is_archive(name)
        or is_summary(name)
    )
