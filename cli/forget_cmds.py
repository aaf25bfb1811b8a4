"""``memkeeper forget`` / ``trash`` / ``restore``: forgetting into the store's trash.

Nothing is deleted: an L1 session, or an archive with its summary, moves into
``.claude/memory/.trash/`` and can be restored; the search index follows on its next refresh.
"""

from __future__ import annotations

import argparse

from .parser import Commands


def register(commands: Commands) -> None:
    forget = commands.add(
        "forget", run_forget, "move an L1 session or an archive (with its summary) into the trash"
    )
    forget.add_argument("kind", choices=("session", "archive"), help="what to forget")
    forget.add_argument("name", help="file name, e.g. 2026-11-20_101500_1a2b3c4d.l1.jsonl or memory_….md")
    commands.add("trash", run_trash, "list what was forgotten and can be restored")
    restore = commands.add("restore", run_restore, "put a forgotten session or archive back")
    restore.add_argument("trash_id", help="the id shown by `memkeeper trash`")


def _item_json(item: object) -> dict[str, object]:
    from dataclasses import asdict, is_dataclass

    return asdict(item) if is_dataclass(item) and not isinstance(item, type) else {}


def run_forget(args: argparse.Namespace) -> int:
    from ..core.store import trash as forget
    from .output import EXIT_USAGE, CliError, console, literal, paths_from, print_json

    paths = paths_from(args)
    try:
        if args.kind == "session":
            item = forget.forget_l1(paths, args.name)
        else:
            item = forget.forget_archive(paths, args.name)
    except forget.ForgetError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if args.json:
        print_json(_item_json(item))
    else:
        console().print(
            literal(f"Moved {item.name} to the trash (restore with: memkeeper restore {item.id})")
        )
    return 0


def run_trash(args: argparse.Namespace) -> int:
    from ..core.store import trash as forget
    from .output import console, literal, paths_from, print_json

    items = forget.list_trash(paths_from(args))
    if args.json:
        print_json([_item_json(item) for item in items])
        return 0
    if not items:
        console().print("The trash is empty.")
        return 0
    for item in items:
        console().print(literal(f"{item.id}  {item.kind:<8} {item.name}  (forgotten {item.deleted_at})"))
    return 0


def run_restore(args: argparse.Namespace) -> int:
    from ..core.store import trash as forget
    from .output import EXIT_USAGE, CliError, console, literal, paths_from

    try:
        item = forget.restore(paths_from(args), args.trash_id)
    except forget.ForgetError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    console().print(literal(f"Restored {item.name}"))
    return 0
