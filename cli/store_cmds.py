"""Store commands: status, check, rotate (the foundation helper extends this module)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("rotate", help="rotate memory.md into an archive if due")
    parser.add_argument("--force", action="store_true", help="rotate even below the threshold")
    parser.set_defaults(handler=run_rotate)


def run_rotate(args: argparse.Namespace) -> int:
    from memkeeper.core import rotation
    from memkeeper.core.config import load_config
    from memkeeper.core.store import paths_for

    paths = paths_for(args.project)
    cfg = load_config(paths).config
    result = rotation.rotate(paths, cfg.threshold_tokens, cfg.carryover_tokens, force=args.force)
    if result is None:
        print("[MEMORY_KEEPER] Nothing to rotate")
        return 3
    print(result.trigger_line)
    return 0
