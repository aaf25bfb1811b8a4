"""Make ``screenshots/*.svg`` and ``*.png`` of every screen, from the Pilot scenes the tests use.

Usage: ``python screenshots/make_screenshots.py [--size 100x30] [--only NAME ...]``.
Any ``python`` will do: without memkeeper importable, the script runs itself again with
the project's ``.venv/bin/python`` (made by ``scripts/setup.sh``). The output depends on
nothing but the scenes: the clock of the trash is fixed and times are shown in UTC.
PNGs are converted with resvg-py (``pip install resvg-py``, in the dev extra; it needs a
"DejaVu Sans Mono" font), else ``rsvg-convert`` (Debian package ``librsvg2-bin``);
without either only the SVGs are written.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FROZEN_NOW = "2026-11-21T12:00:00.000Z"


def _reexec_in_venv() -> None:
    """Run again with the project's virtualenv when this Python cannot import memkeeper."""
    try:
        import memkeeper.tui.app  # noqa: F401
    except ImportError:
        venv = ROOT / ".venv" / "bin" / "python"
        if not venv.exists() or Path(sys.executable) == venv:
            raise SystemExit("memkeeper is not installed here: run `bash scripts/setup.sh` first") from None
        os.execv(str(venv), [str(venv), "-P", str(Path(__file__).resolve()), *sys.argv[1:]])


if __name__ == "__main__":
    _reexec_in_venv()
    os.environ["TZ"] = "UTC"  # times are shown in local time: the same on every machine
    time.tzset()
    os.environ["MEMKEEPER_NO_JOBS"] = "1"
    os.environ.pop("XDG_CONFIG_HOME", None)  # preferences go to the temporary HOME below

if str(ROOT) not in sys.path:  # the checkout, so its tests package imports (as bench/_checkout.py does)
    sys.path.insert(0, str(ROOT))

from tests.functional.tui.scenes import SCENES, build_store  # noqa: E402


def fake_claude_home(home: Path, project: Path) -> None:
    """A ``~/.claude/projects`` with one transcript naming ``project``, for the projects screen."""
    folder = home / ".claude" / "projects" / ("-" + str(project).strip("/").replace("/", "-"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "session.jsonl").write_text(json.dumps({"type": "user", "cwd": str(project)}) + "\n", "utf-8")


async def shoot(name: str, size: tuple[int, int], out: Path, home: Path) -> Path:
    import memkeeper.core.store.trash
    from memkeeper.tui.app import MemkeeperApp

    memkeeper.core.store.trash.iso_now = lambda: FROZEN_NOW  # the trash shows when things were forgotten

    work = home / "work"  # the same path for every scene: the projects screen shows ~/work/ledgerline
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(home / ".claude", ignore_errors=True)
    paths = build_store(work)
    fake_claude_home(home, paths.project)
    app = MemkeeperApp(paths, watch=False)
    _, scene = SCENES[name]
    async with app.run_test(size=size) as pilot:
        await scene(pilot)
        return Path(app.save_screenshot(filename=f"{name}.svg", path=str(out)))


def to_png(svg: Path) -> Path | None:
    """SVG → PNG with resvg-py (pip, best result), else rsvg-convert, else None."""
    png = svg.with_suffix(".png")
    try:
        import resvg_py
    except ImportError:
        converter = shutil.which("rsvg-convert")
        if converter is None:
            return None
        subprocess.run([converter, "-b", "#121212", str(svg), "-o", str(png)], check=True)  # noqa: S603 - argv list
        return png
    data = resvg_py.svg_to_bytes(svg_path=str(svg), monospace_family="DejaVu Sans Mono")
    png.write_bytes(bytes(data))
    return png


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", default="100x30", help="terminal size COLSxROWS (default 100x30)")
    parser.add_argument("--only", nargs="*", help="scene names (default: all)")
    parser.add_argument("--out", default=str(HERE), help="output folder")
    args = parser.parse_args()
    cols, rows = (int(v) for v in args.size.split("x"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        os.environ["HOME"] = str(home)
        for name in args.only or list(SCENES):
            svg = asyncio.run(shoot(name, (cols, rows), out, home))
            png = to_png(svg)
            print(f"{name}: {svg.name}" + (f", {png.name}" if png else " (no PNG converter: SVG only)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
