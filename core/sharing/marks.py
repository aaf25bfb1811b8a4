"""Whether a store is shared through git, read from the two files ``memkeeper share`` writes
(:mod:`memkeeper.core.sharing.share`): the marker atop ``.gitattributes`` and the sessions line of
``.gitignore``. Stdlib only: the hooks ask it.
"""

from __future__ import annotations

import os

from ..store.gitignore import GITATTRIBUTES, SESSIONS_LINE, SHARE_MARKER
from ..store.layout import GITIGNORE
from ..store.paths import StorePaths


def sessions_shared(paths: StorePaths) -> bool:
    try:
        with open(os.path.join(paths.root, GITIGNORE), encoding="utf-8") as handle:
            return SESSIONS_LINE in handle.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return False


def is_shared(paths: StorePaths) -> bool:
    try:
        with open(os.path.join(paths.root, GITATTRIBUTES), "rb") as handle:
            return handle.read(len(SHARE_MARKER)) == SHARE_MARKER.encode()
    except OSError:
        return False
