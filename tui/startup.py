"""Start-up of ``memkeeper-tui``: no cyclic garbage collection until the first frame.

Importing Textual and building the first screen make a few hundred thousand objects that
live as long as the app, and the collector walks them over and over meanwhile (hundreds of
collections, a sixth of the start on a large store). The console script holds collection
from its first line (:func:`hold_gc`); the App releases it once the first frame with the
store is drawn (:func:`release_gc`), freezing what start-up made (``gc.freeze``) so that
later full collections, such as one during a keystroke, do not walk it again either.
Without a hold (an App made by a test), releasing does nothing.
"""

from __future__ import annotations

import gc

_HELD: list[bool] = []
"""One element while collection is held by :func:`hold_gc`."""


def hold_gc() -> None:
    """Stop cyclic garbage collection until :func:`release_gc` (if it is on)."""
    if gc.isenabled() and not _HELD:
        gc.disable()
        _HELD.append(True)


def release_gc() -> None:
    """Turn collection back on, keeping what exists now out of later collections."""
    if _HELD:
        _HELD.clear()
        gc.freeze()
        gc.enable()
