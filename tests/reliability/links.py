"""Planting a link inside a store, for the tests that show no path of ours ever follows one."""

from __future__ import annotations

import shutil
from pathlib import Path


def link_in_place(root: Path, placement: str, target: Path) -> Path:
    """Replace ``root / placement`` (a file, a folder or nothing) by a symlink to ``target``."""
    link = root / placement
    if link.is_dir() and not link.is_symlink():
        shutil.rmtree(link)
    elif link.exists() or link.is_symlink():
        link.unlink()
    link.symlink_to(target)
    return link
