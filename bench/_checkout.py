"""Puts this checkout on ``sys.path``, so a bench script run as ``python bench/NAME.py`` can import the
helpers it shares with the tests (``tests.*``). Import it before them: ``import _checkout``."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
