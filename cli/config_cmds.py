"""``memkeeper config``: list, get, set and unset the settings, each with where its value comes from.

A thin layer over :mod:`memkeeper.core.config.edit`, which the TUI's settings screen uses too.
``set`` and ``unset`` change this project's ``.claude/memory/config.json`` unless ``--global``
says ``~/.claude/memory-keeper/config.json``; a value the schema refuses is one line, exit 2,
and nothing is written.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from .output import EXIT_USAGE, CliError, paths_from
from .parser import Commands

if TYPE_CHECKING:
    from ..core.config.edit import Layer, Setting

ACTIONS = ("list", "get", "set", "unset")


def register(commands: Commands) -> None:
    config = commands.add(
        "config",
        run_config,
        "list, get, set or unset a setting (memory on/off, flushEvery, summarizer, budget, recall)",
        description=(
            "config list | get KEY | set KEY VALUE | unset KEY. Keys are dotted (memory.flushEvery); "
            "set and unset change this project's file unless --global."
        ),
    )
    config.add_argument("action", choices=ACTIONS, help="list, get, set or unset")
    config.add_argument("key", nargs="?", help="a dotted key, e.g. memory.flushEvery")
    config.add_argument("value", nargs="?", help="the new value (set): true/false, a number, a word")
    where = config.add_mutually_exclusive_group()
    where.add_argument(
        "--global",
        dest="layer",
        action="store_const",
        const="global",
        help="change ~/.claude/memory-keeper/config.json (every project)",
    )
    where.add_argument(
        "--local",
        dest="layer",
        action="store_const",
        const="project",
        help="change this project's .claude/memory/config.json (the default)",
    )


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _source_text(item: Setting) -> str:
    return item.source if item.source == "default" else f"{item.source} config"


def run_config(args: argparse.Namespace) -> int:
    from ..core.config import edit as config_edit

    action: str = args.action
    wanted = {"list": (0, 0), "get": (1, 0), "set": (1, 1), "unset": (1, 0)}[action]
    given = (int(args.key is not None), int(args.value is not None))
    if given != wanted:
        usage = {"list": "config list", "get": "config get KEY", "set": "config set KEY VALUE"}
        raise CliError(
            f"usage: memkeeper {usage.get(action, 'config unset KEY')} [--global|--local]", EXIT_USAGE
        )
    paths = paths_from(args)
    if action == "list":
        return _list(config_edit.settings(paths), args.json)
    layer: Layer = args.layer or "project"
    if action == "get":
        item = config_edit.setting(paths, args.key)
        return _print_one(item, args.json)
    if action == "set":
        value = config_edit.parse_value(args.key, args.value)
        config_edit.set_value(paths, args.key, value, layer)
        return _print_one(config_edit.setting(paths, args.key), args.json, f"set in the {layer} config")
    removed = config_edit.unset_value(paths, args.key, layer)
    note = f"unset in the {layer} config" if removed else f"not set in the {layer} config"
    return _print_one(config_edit.setting(paths, args.key), args.json, note)


def _print_one(item: Setting, as_json: bool, note: str = "") -> int:
    if as_json:
        from .output import print_json

        print_json(item.as_dict() | ({"done": note} if note else {}))
        return 0
    from .output import strip_control

    head = f"{note}: " if note else ""
    print(strip_control(f"{head}{item.key} = {_shown(item.value)}  ({_source_text(item)})"))
    return 0


def _list(items: list[Setting], as_json: bool) -> int:
    from .output import console, literal, print_json

    if as_json:
        print_json({"settings": [item.as_dict() for item in items]})
        return 0
    from rich.table import Table

    table = Table(show_edge=False, box=None, padding=(0, 2, 0, 0))
    table.add_column("key", no_wrap=True)
    table.add_column("value", no_wrap=True)
    table.add_column("source", no_wrap=True, style="dim")
    table.add_column("what it does", overflow="fold")
    for item in items:
        source = _source_text(item)
        table.add_row(
            literal(item.key),
            literal(_shown(item.value)),
            source if item.source == "default" else f"[bold]{source}[/bold]",
            literal(item.description),
        )
    console().print(table)
    return 0
