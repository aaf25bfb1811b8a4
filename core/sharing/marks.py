"""Whether a store is shared through git, read from the two files ``memkeeper share`` writes
(:mod:`memkeeper.core.sharing.share`): the marker atop ``.gitattributes`` and the sessions line of
``.gitignore``. Stdlib only: the hooks ask it.
"""

from __future__ import annotations

import os

from ..store.paths import StorePaths

#: The first line ``memkeeper share`` writes in the store's ``.gitattributes``.
SHARE_MARKER = "# memkeeper share:"


#: The line of the store's ``.gitignore`` that shares the L1 sessions (``memkeeper share --sessions``).
SESSIONS_LINE = "!/sessions/*.l1.jsonl"


def sessions_shared(paths: StorePaths) -> bool:
    try:
        with open(os.path.join(paths.root, ".gitignore"), encoding="utf-8") as handle:
            return SESSIONS_LINE in handle.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return False


def is_shared(paths: StorePaths) -> bool:
    try:
        with open(os.path.join(paths.root, ".gitattributes"), "rb") as handle:
            return handle.read(len(SHARE_MARKER)) == SHARE_MARKER.encode()
    except OSError:
        return False
