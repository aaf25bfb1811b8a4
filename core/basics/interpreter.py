"""How memkeeper starts Python: the interpreter and its flags, one place for every process we start.

Every Python process of memkeeper starts as ``[python, *FLAGS, ...]``, the plugin's launcher as
``[python, *LAUNCHER_FLAGS, .../lib/boot, ...]`` (FLAGS and -S):

- the hooks and the MCP server of an installed plugin (``memkeeper install`` writes hooks.json and
  .mcp.json in exec form from :func:`plugin_entry`: the recorded Python runs the plugin's
  ``lib/boot``);
- the plugin of a checkout (``claude --plugin-dir plugin/``), whose ``bin/memkeeper.cmd`` finds a
  Python and runs the same ``lib/boot`` with the same flags (a test holds it to
  :data:`LAUNCHER_FLAGS`: the launcher's are FLAGS and -S);
- the detached jobs and any memkeeper command we run ourselves (:func:`memkeeper_command`).

A ``multiprocessing`` child (the search's process pool) is started by the standard library with the
flags of the process that made it. The ``memkeeper`` and ``memkeeper-tui`` commands are the console
scripts of the installed package.
"""

from __future__ import annotations

import sys

#: -E: no PYTHON* variable of the user's shell (PYTHONPATH, PYTHONHOME...) changes what loads;
#: -P: the folder we start in (a project's, where a json.py or types.py may lie) is never on sys.path.
#: The user's site folder stays on (-I would drop it): `pip install --user memkeeper` must work.
FLAGS = ("-E", "-P")
#: The plugin's launcher (``lib/boot``: a hook, the MCP server, ``memkeeper`` through the plugin)
#: starts with these: FLAGS and -S, no site step. A hook needs only the standard library and
#: memkeeper, which ``lib/boot`` finds in the folder ``memkeeper install`` recorded (a checkout's
#: launcher, with no record, runs the site step then); the site step (``.pth`` files, about 3 ms
#: of a hook's CPU) runs in ``lib/boot`` before anything that needs the site packages (the
#: command, the MCP server) and in a hook's recall before it imports ``platformdirs``.
LAUNCHER_FLAGS = (*FLAGS, "-S")
#: The plugin's launcher script, relative to the plugin's root.
BOOT = "lib/boot"
#: How Claude Code names the plugin's root in hooks.json and .mcp.json.
PLUGIN_ROOT = "${CLAUDE_PLUGIN_ROOT}"


def python_command(*args: str, python: str | None = None) -> list[str]:
    """``[python, *FLAGS, *args]``; ``python`` defaults to the one running now."""
    return [python or sys.executable, *FLAGS, *args]


def memkeeper_command(*args: str, python: str | None = None) -> list[str]:
    """The ``memkeeper ARGS`` command line, run as a module of this (or ``python``'s) install."""
    return python_command("-m", "memkeeper.cli.main", *args, python=python)


def plugin_entry(python: str, *args: str) -> dict[str, object]:
    """A hooks.json handler's or a .mcp.json server's ``command`` and ``args`` (exec form: no shell)
    running the plugin's launcher with ``args`` (a hook's EVENT, or ``mcp``)."""
    return {"command": python, "args": [*LAUNCHER_FLAGS, f"{PLUGIN_ROOT}/{BOOT}", *args]}
