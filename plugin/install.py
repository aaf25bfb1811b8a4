"""``memkeeper install`` / ``memkeeper uninstall``: register the plugin with Claude Code.

The plugin folder (this package's directory, minus its Python files) is copied into a
local marketplace, ``~/.claude/memkeeper-marketplace/`` (``.claude-plugin/marketplace.json``
plus ``plugins/memkeeper/``), next to a ``.memkeeper-python`` file naming the Python
that runs memkeeper and the folder holding the package, so the hook launcher finds
them even when Claude Code's PATH lacks the virtualenv; the copy's hooks.json and .mcp.json run that
Python directly (:func:`exec_form`). Then, when ``claude`` is on
PATH, ``claude plugin marketplace add`` and ``claude plugin install memkeeper@…``
register it (user scope by default); otherwise the manual steps are returned.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..core.basics.interpreter import PLUGIN_ROOT, plugin_entry
from ..core.store.records import json_fields

MARKETPLACE_NAME = "memkeeper-local"
PLUGIN_NAME = "memkeeper"
PLUGIN_ID = f"{PLUGIN_NAME}@{MARKETPLACE_NAME}"
PYTHON_RECORD = ".memkeeper-python"
CLAUDE_TIMEOUT = 120.0
#: Files of the package that are not part of the plugin Claude Code loads.
NOT_PLUGIN = ("__pycache__", "*.py", "*.pyc", "*.pyi", PYTHON_RECORD)


@dataclass
class Step:
    argv: list[str]
    returncode: int
    output: str


@dataclass
class InstallReport:
    marketplace: Path
    plugin_dir: Path
    python: str
    claude: str | None = None
    registered: bool = False
    steps: list[Step] = field(default_factory=list)
    manual: list[str] = field(default_factory=list)


def plugin_source() -> Path:
    """The plugin root shipped with this package (the folder of this module)."""
    return Path(__file__).absolute().parent


def marketplace_dir(home: Path | None = None) -> Path:
    return (home or Path.home()) / ".claude" / "memkeeper-marketplace"


def package_parent() -> Path:
    """The folder that holds the ``memkeeper`` package (site-packages, or a source checkout)."""
    return Path(__file__).absolute().parent.parent.parent  # memkeeper/plugin/install.py


def write_marketplace(home: Path | None = None, python: str | None = None) -> InstallReport:
    """Copy the plugin into the local marketplace and record the Python; replaces an older copy."""
    root = marketplace_dir(home)
    target = root / "plugins" / PLUGIN_NAME
    python = python or sys.executable
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{PLUGIN_NAME}.new")
    if staging.exists():
        shutil.rmtree(staging)
    shutil.copytree(plugin_source(), staging, ignore=shutil.ignore_patterns(*NOT_PLUGIN))
    for launcher in (staging / "bin").iterdir():
        launcher.chmod(0o755)
    (staging / PYTHON_RECORD).write_text(f"{python}\n{package_parent()}\n", "utf-8")
    exec_form(staging, python)
    if target.exists():
        shutil.rmtree(target)
    os.replace(staging, target)
    manifest = json.loads((target / ".claude-plugin" / "plugin.json").read_text("utf-8"))
    marketplace = {
        "name": MARKETPLACE_NAME,
        "owner": {"name": "memkeeper"},
        "description": "memkeeper installed from this machine's Python package",
        "plugins": [
            {
                "name": PLUGIN_NAME,
                "source": f"./plugins/{PLUGIN_NAME}",
                "description": manifest.get("description", ""),
                "version": manifest.get("version", __version__),
            }
        ],
    }
    (root / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps(marketplace, indent=2) + "\n", "utf-8"
    )
    return InstallReport(marketplace=root, plugin_dir=target, python=python)


#: How a checkout's hooks.json runs a hook: ``"${CLAUDE_PLUGIN_ROOT}/bin/memkeeper.cmd" EVENT``.
CHECKOUT_HOOK = f'"{PLUGIN_ROOT}/bin/memkeeper.cmd" '


def exec_form(plugin: Path, python: str) -> None:
    """Rewrite the copy's hooks.json and .mcp.json so Claude Code starts ``python`` itself, in exec
    form (``command`` + ``args``, no shell): ``python -E -P -S ${CLAUDE_PLUGIN_ROOT}/lib/boot EVENT``
    for each hook and ``… lib/boot mcp`` for the MCP server. The checkout's copy goes through
    ``bin/memkeeper.cmd``, which looks for a Python first; here the Python is known. Moving or
    deleting that Python needs ``memkeeper install`` again (``memkeeper doctor`` says so).
    """
    hooks_json = plugin / "hooks" / "hooks.json"
    config = json.loads(hooks_json.read_text("utf-8"))
    for groups in config["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                command = handler.get("command")
                if isinstance(command, str) and command.startswith(CHECKOUT_HOOK):
                    handler.update(plugin_entry(python, command.removeprefix(CHECKOUT_HOOK)))
    hooks_json.write_text(json.dumps(config, indent=2) + "\n", "utf-8")
    mcp_json = plugin / ".mcp.json"
    servers = json.loads(mcp_json.read_text("utf-8"))
    servers["mcpServers"][PLUGIN_NAME].update(plugin_entry(python, "mcp"))
    mcp_json.write_text(json.dumps(servers, indent=2) + "\n", "utf-8")


@dataclass
class PluginCheck:
    """Whether the plugin Claude Code will run (the installed copy) finds a memkeeper, and which."""

    installed: bool
    plugin_dir: str
    python: str | None = None
    finds_memkeeper: bool = False
    this_memkeeper: bool = False
    message: str = ""

    def to_dict(self) -> dict[str, object]:
        return json_fields(self, camel_case=True, keys={"plugin_dir": "dir"})


def check_installed(home: Path | None = None, timeout: float = 30.0) -> PluginCheck:
    """Run the installed plugin's launcher the way its hooks.json does (the recorded Python, exec form),
    asking for ``--version`` instead of a hook: it answers only if that Python finds memkeeper."""
    plugin = marketplace_dir(home) / "plugins" / PLUGIN_NAME
    check = PluginCheck(installed=plugin.is_dir(), plugin_dir=str(plugin))
    if not check.installed:
        check.message = (
            "not installed in Claude Code (run `memkeeper install`); a checkout's plugin "
            "(`claude --plugin-dir plugin/`) looks for its Python by itself"
        )
        return check
    try:
        hooks = json.loads((plugin / "hooks" / "hooks.json").read_text("utf-8"))["hooks"]
        handler = hooks["SessionStart"][0]["hooks"][0]
        argv = [
            str(part).replace(PLUGIN_ROOT, str(plugin)) for part in [handler["command"], *handler["args"]]
        ]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        check.message = f"its hooks.json is unreadable ({exc}): run `memkeeper install`"
        return check
    check.python = argv[0]
    probe = _run([*argv[:-1], "--version"], timeout)
    check.finds_memkeeper = probe.returncode == 0 and probe.output.startswith("memkeeper ")
    check.this_memkeeper = check.finds_memkeeper and os.path.abspath(argv[0]) == os.path.abspath(
        sys.executable
    )
    if not check.finds_memkeeper:
        check.message = f"the installed plugin cannot find memkeeper: {probe.output or 'no answer'}"
    elif check.this_memkeeper:
        check.message = f"the installed plugin runs this memkeeper ({argv[0]})"
    else:
        check.message = (
            f"the installed plugin runs memkeeper with another Python ({argv[0]}); "
            "run `memkeeper install` to make it this one"
        )
    return check


def _run(argv: list[str], timeout: float = CLAUDE_TIMEOUT) -> Step:
    try:
        done = subprocess.run(  # noqa: S603 - argv list, no shell
            argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Step(argv, 1, f"{type(exc).__name__}: {exc}")
    return Step(argv, done.returncode, (done.stdout + done.stderr).strip())


def manual_steps(report: InstallReport, scope: str) -> list[str]:
    return [
        f"claude plugin marketplace add {report.marketplace}",
        f"claude plugin install {PLUGIN_ID} --scope {scope}",
    ]


def install(
    home: Path | None = None, claude: str | None = None, scope: str = "user", register: bool = True
) -> InstallReport:
    """Write the marketplace and, if ``claude`` is available, register the plugin with it."""
    report = write_marketplace(home)
    report.claude = claude or shutil.which("claude")
    if not register or not report.claude:
        report.manual = manual_steps(report, scope)
        return report
    add = _run([report.claude, "plugin", "marketplace", "add", str(report.marketplace)])
    report.steps.append(add)
    if add.returncode != 0:
        # Already known from an earlier install: refresh it from the new copy instead.
        update = _run([report.claude, "plugin", "marketplace", "update", MARKETPLACE_NAME])
        report.steps.append(update)
        if update.returncode != 0:
            report.manual = manual_steps(report, scope)
            return report
    done = _run([report.claude, "plugin", "install", PLUGIN_ID, "--scope", scope])
    report.steps.append(done)
    report.registered = done.returncode == 0
    if not report.registered:
        report.manual = manual_steps(report, scope)[1:]
    return report


@dataclass
class UninstallReport:
    marketplace: Path
    removed: bool
    steps: list[Step] = field(default_factory=list)


def uninstall(
    home: Path | None = None, claude: str | None = None, scope: str = "user", keep_files: bool = False
) -> UninstallReport:
    """Unregister the plugin and its marketplace from Claude Code and delete the copy.

    The memory stores in the projects are never touched.
    """
    root = marketplace_dir(home)
    claude = claude or shutil.which("claude")
    steps: list[Step] = []
    if claude:
        steps.append(_run([claude, "plugin", "uninstall", PLUGIN_ID, "--scope", scope]))
        steps.append(_run([claude, "plugin", "marketplace", "remove", MARKETPLACE_NAME]))
    removed = False
    if not keep_files and root.exists():
        shutil.rmtree(root)
        removed = True
    return UninstallReport(marketplace=root, removed=removed, steps=steps)
