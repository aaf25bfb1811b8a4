"""The console script ``memkeeper-tui [PROJECT_DIR] [--demo [--keep-demo]] [--no-watch]``.

A folder without a store is an error (exit 2) that points to ``--demo``; a demo store is made in
a temporary folder and removed on exit (also when the terminal closes) unless kept.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from ..core.store.paths import StorePaths
from .startup import hold_gc


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="memkeeper-tui", description="Browse a memkeeper store in the terminal."
    )
    parser.add_argument(
        "project", nargs="?", help="project directory (default: $CLAUDE_PROJECT_DIR or the current one)"
    )
    parser.add_argument(
        "--demo", action="store_true", help="open a generated demo store in a temporary folder"
    )
    parser.add_argument(
        "--keep-demo", action="store_true", help="with --demo: keep the demo folder when the TUI exits"
    )
    parser.add_argument("--no-watch", action="store_true", help="do not refresh live when files change")
    return parser.parse_args(argv)


def demo_paths() -> StorePaths:
    """A fresh demo store in a temporary folder."""
    from ..core.demo import create_demo_store

    folder = Path(tempfile.mkdtemp(prefix="memkeeper-demo-")) / "ledgerline"
    folder.mkdir()
    return create_demo_store(folder)


def main(argv: list[str] | None = None) -> int:
    """Console script ``memkeeper-tui``."""
    hold_gc()  # until the first frame (the App releases it)
    from ..core.store.paths import paths_for
    from .app import MemkeeperApp

    args = parse_args(argv)
    if not args.demo:
        from ..core.store.boundary import StoreLinkError
        from ..core.store.paths import StoreRefused

        try:
            paths = paths_for(args.project)
        except (StoreRefused, StoreLinkError) as exc:
            print(f"memkeeper-tui: {exc}", file=sys.stderr)
            return 2
        if not paths.exists():
            print(
                f"memkeeper-tui: no memory store in {paths.project} (no {paths.root});"
                " run `memkeeper-tui --demo` to browse a generated demo store",
                file=sys.stderr,
            )
            return 2
        MemkeeperApp(paths, watch=not args.no_watch).run()
        return 0
    paths = demo_paths()
    if not args.keep_demo:
        _remove_on_hangup(paths.project.parent)
    try:
        note = f"Demo store (generated) in {paths.project}" + (" (kept on exit)" if args.keep_demo else "")
        MemkeeperApp(paths, watch=not args.no_watch, note=note).run()
    finally:
        if not args.keep_demo:
            remove_demo(paths.project.parent)
    return 0


def remove_demo(folder: Path, tries: int = 100) -> None:
    """Remove the demo folder even while a worker thread still writes into it (the index, the
    activity readings). The folder is renamed first, so a file made by its old path fails instead of
    landing in a folder ``rmtree`` has already listed; what was open keeps writing into the renamed
    folder, which is removed again until it is gone (at most ``tries`` times, 10 ms apart)."""
    import os
    import time

    doomed = folder.with_name(f".{folder.name}.removing")
    try:
        os.rename(folder, doomed)
    except OSError:
        doomed = folder
    for _ in range(tries):
        shutil.rmtree(doomed, ignore_errors=True)
        if not os.path.lexists(doomed):
            return
        time.sleep(0.01)


def _remove_on_hangup(folder: Path) -> None:
    """Closing the terminal (SIGHUP) removes the demo folder too, then ends the process as the
    signal would have (no ``finally`` runs for a signal's default action, and the terminal is gone)."""
    import os
    import signal

    from ..core.basics.platform import on_hangup

    def hang_up(signum: int, _frame: object) -> None:
        remove_demo(folder)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    on_hangup(hang_up)  # where there is a SIGHUP (POSIX); elsewhere the window closing ends us


if __name__ == "__main__":
    raise SystemExit(main())
