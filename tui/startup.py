"""Start-up of ``memkeeper-tui``: no cyclic garbage collection until the first frame.

Importing Textual and building the first screen make a few hundred thousand objects that
live as long as the app, and the collector walks them over and over meanwhile (hundreds of
collections, a sixth of the start on a large store). The console script holds collection
from its first line (:func:`hold_gc`); the App releases it once the first frame with the
store is drawn (:func:`release_gc`), freezing what start-up made (``gc.freeze``) so that
later full collections, such as one during a keystroke, do not walk it again either; what the
work started after that frame made is frozen once it is done (:func:`settle_gc`).
Without a hold (an App made by a test), releasing does nothing.
"""

from __future__ import annotations

import gc

_HELD: list[bool] = []
"""One element while collection is held by :func:`hold_gc`."""

_UNSETTLED: list[bool] = []
"""One element from :func:`release_gc` releasing a hold until :func:`settle_gc`."""


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
        _UNSETTLED.append(True)


def settle_gc() -> None:
    """Once, when the work started after the first frame is done (the warm-up search, the
    rest of the tree): keep what it made out of later full collections too, so one during a
    keystroke walks only what typing made (tens of thousands of objects cost 10-30 ms a walk).
    Nothing unless :func:`release_gc` released a hold."""
    if _UNSETTLED:
        _UNSETTLED.clear()
        gc.freeze()
