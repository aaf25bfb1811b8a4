"""``memkeeper share`` (on, ``--off``, ``--status``, ``check-staged``) and git's ``merge-driver``.

Team memory through git (core/sharing/share.py): which files of the store are committed, the
merge driver that joins two machines' memory without conflict (core/sharing/merge.py), and the
pre-commit check that refuses a staged secret.
"""

from __future__ import annotations

import argparse
import sys

from .parser import Commands


def register(commands: Commands) -> None:
    share = commands.add(
        "share",
        run_share,
        "share this project's memory through its git repository (opt-in; --off, --status)",
    )
    share.add_argument(
        "action",
        nargs="?",
        choices=("check-staged",),
        help="check-staged: refuse a commit that stages a secret or runtime state of the store (the pre-commit hook)",
    )
    mode = share.add_mutually_exclusive_group()
    mode.add_argument("--off", action="store_true", help="stop sharing: nothing in the store is committed")
    mode.add_argument("--status", action="store_true", help="say what is shared and what is installed")
    share.add_argument(
        "--sessions",
        action="store_true",
        help="also commit the L1 sessions: raw prompts and tool output, a privacy decision for the team",
    )
    driver = commands.add("merge-driver", run_merge_driver, "git's merge driver for the shared memory files")
    for name, about in (
        ("base", "the common ancestor's version (%%O)"),
        ("ours", "our version, replaced by the result (%%A)"),
        ("theirs", "their version (%%B)"),
        ("path", "the file's path in the repository (%%P)"),
    ):
        driver.add_argument(name, help=about)


def run_share(args: argparse.Namespace) -> int:
    from ..core.sharing import share as sharing
    from .output import CliError, paths_from

    try:
        if args.action == "check-staged":
            return _check_staged(args)
        paths = paths_from(args)
        if args.off:
            status = sharing.share_off(paths)
        elif args.status:
            status = sharing.share_status(paths)
        else:
            status = sharing.share_on(paths, sessions=args.sessions)
            if args.sessions:
                status.warnings.append(
                    "the L1 sessions are shared: they hold your prompts and tool output (secrets redacted "
                    "when written), and everyone who can read this repository will read them; "
                    "`memkeeper share` without --sessions stops sharing them"
                )
    except sharing.ShareError as exc:
        raise CliError(str(exc)) from None
    _print_status(args, status)
    return 0


def _print_status(args: argparse.Namespace, status: object) -> None:
    from dataclasses import asdict

    from ..core.sharing.share import ShareStatus
    from .output import console, literal, print_json, warn

    assert isinstance(status, ShareStatus)
    if args.json:
        print_json(asdict(status))
        return
    if status.repository is None:
        console().print("Not in a git repository: the memory is not shared.")
        return
    if not status.shared:
        console().print("Memory is not shared: nothing in .claude/memory/ is committed.")
    else:
        sessions = (
            "L1 sessions too (raw prompts and tool output)"
            if status.sessions
            else "not the L1 sessions (memkeeper share --sessions)"
        )
        console().print(
            literal(
                "Memory is shared through git: memory.md, the archives, their summaries, memory-index.json "
                f"and the project notes; {sessions}. Runtime state is never committed."
            )
        )
    console().print(
        literal(
            f"merge driver: {'registered' if status.driver else 'not registered'}; "
            f"pre-commit check: {'installed' if status.hook else 'not installed'}"
        )
    )
    for line in status.warnings:
        warn(line)


def _check_staged(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..core.sharing.share import check_staged
    from .output import print_json

    findings = check_staged(Path(getattr(args, "project", None) or "."))
    if args.json:
        print_json([{"path": f.path, "kind": f.kind} for f in findings])
    for finding in findings:
        sys.stderr.write(f"memkeeper: commit refused: {finding.path}: {finding.kind}\n")
    if findings:
        sys.stderr.write(
            "memkeeper: the memory store must not carry these into git; unstage them "
            "(git restore --staged FILE), or remove the secret with `memkeeper forget`\n"
        )
    return 1 if findings else 0


def run_merge_driver(args: argparse.Namespace) -> int:
    """Merge one store file for git: the result over OURS; 0 when clean, 1 for a conflict."""
    from ..core.sharing.merge import kind_of, merge_texts

    kind = kind_of(args.path)
    base, ours, theirs = (_read(name) for name in (args.base, args.ours, args.theirs))
    merged = merge_texts(kind, base, ours, theirs, rebasing=_rebasing()) if kind else None
    if merged is None:
        return _merge_file(args)
    with open(args.ours, "wb") as handle:
        handle.write(merged.encode("utf-8", "surrogateescape"))
    return 0


def _read(name: str) -> str:
    with open(name, "rb") as handle:
        return handle.read().decode("utf-8", "surrogateescape")


def _rebasing() -> bool:
    """True while git rebases (the driver's OURS is then the other side, THEIRS the local commit)."""
    import os

    from ..core.sharing.share import git

    for name in ("rebase-merge", "rebase-apply"):
        found = git(".", "rev-parse", "--git-path", name, check=False).stdout.decode("utf-8").strip()
        if found and os.path.isdir(found):
            return True
    return False


def _merge_file(args: argparse.Namespace) -> int:
    """A file no rule of ours merges: git's own line merge (conflict markers where both changed)."""
    from ..core.sharing.share import git

    return 0 if git(".", "merge-file", args.ours, args.base, args.theirs, check=False).returncode == 0 else 1
