"""Never silently off: a plugin that cannot find a usable memkeeper tells the user once, at the start
of the session (a ``systemMessage``, which Claude Code shows to the person), with the one command that
fixes it; every later hook stays quiet and exits 0; the MCP launcher fails with the same sentence."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memkeeper.cli.plugin_cmds import HOOK_EVENTS
from tests.functional.plugin.capture_helpers import REPO, hook_command, payload_for

EVENTS_AFTER_START = HOOK_EVENTS[1:]  # SessionStart comes first


@pytest.fixture
def lone_checkout(tmp_path: Path) -> Path:
    """A clone's plugin folder with no .venv beside it and no record of `memkeeper install`."""
    checkout = tmp_path / "clone"
    for folder, name in (
        ("bin", "memkeeper.cmd"),
        ("bin", "memkeeper"),
        ("lib", "boot"),
        ("hooks", "hooks.json"),
    ):
        (checkout / "plugin" / folder).mkdir(parents=True, exist_ok=True)
        (checkout / "plugin" / folder / name).write_bytes((REPO / "plugin" / folder / name).read_bytes())
    for launcher in (checkout / "plugin" / "bin").iterdir():
        launcher.chmod(0o755)
    (checkout / "__init__.py").write_text('"""memkeeper"""\n')  # a checkout's root is the package
    return checkout


@pytest.fixture
def env_without_memkeeper(tmp_path: Path, bare_python: str) -> dict[str, str]:
    """PATH whose only python3 is a venv's with nothing installed (memkeeper lives in a venv elsewhere)."""
    bin_dir = tmp_path / "path-bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(bare_python)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMKEEPER", "CLAUDE", "PYTHON"))}
    env.update(HOME=str(tmp_path / "home"), PATH=f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    return env


def run(argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd, timeout=60)


def test_the_first_hook_names_the_fix_and_the_later_ones_stay_quiet(
    lone_checkout: Path, env_without_memkeeper: dict[str, str], tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    plugin = lone_checkout / "plugin"
    start = payload_for("SessionStart", project, source="startup")
    done = run(
        hook_command(plugin, "SessionStart"), json.dumps(start).encode(), env_without_memkeeper, project
    )
    assert (done.returncode, done.stderr) == (0, b"")
    message = json.loads(done.stdout)["systemMessage"]
    assert message.startswith("memkeeper: memory is not being kept: ")
    assert "cannot import memkeeper" in message
    found = tmp_path / "path-bin" / "python3"  # the Python the launcher found, named exactly
    assert f"`{found} {lone_checkout / 'scripts' / 'setup.py'} --run`" in message
    for event in EVENTS_AFTER_START:
        payload = payload_for("PostToolUse" if event == "PostToolUseFailure" else event, project)
        later = run(
            hook_command(plugin, event),
            json.dumps(dict(payload, hook_event_name=event)).encode(),
            env_without_memkeeper,
            project,
        )
        assert (event, later.returncode, later.stdout, later.stderr) == (event, 0, b"", b"")
    compacted = payload_for("SessionStart", project, source="compact")
    again = run(
        hook_command(plugin, "SessionStart"), json.dumps(compacted).encode(), env_without_memkeeper, project
    )
    assert (again.returncode, again.stdout, again.stderr) == (0, b"", b"")
    assert list(project.iterdir()) == []  # nothing written to the project

    # The MCP server Claude Code starts (.mcp.json) fails with the same sentence on stderr.
    mcp = json.loads((REPO / "plugin" / ".mcp.json").read_text("utf-8"))["mcpServers"]["memkeeper"]
    argv = [part.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin)) for part in [mcp["command"], *mcp["args"]]]
    server = run(argv, b"", env_without_memkeeper, project)
    assert server.returncode == 1 and server.stdout == b""
    assert server.stderr.decode().strip() == message
    assert list(project.iterdir()) == []


def test_an_installed_copy_whose_python_lost_memkeeper_says_so(
    tmp_path: Path, bare_python: str, env_without_memkeeper: dict[str, str]
) -> None:
    """`memkeeper install` recorded a Python that no longer has memkeeper: the fix is to install again."""
    from memkeeper.plugin import install

    report = install.write_marketplace(tmp_path / "home", python=bare_python)
    (report.plugin_dir / ".memkeeper-python").write_text(f"{bare_python}\n{tmp_path / 'gone'}\n")
    project = tmp_path / "project"
    project.mkdir()
    start = json.dumps(payload_for("SessionStart", project, source="startup")).encode()
    done = run(hook_command(report.plugin_dir, "SessionStart"), start, env_without_memkeeper, project)
    assert done.returncode == 0
    message = json.loads(done.stdout)["systemMessage"]
    assert f"{bare_python} cannot import memkeeper" in message and "run `memkeeper install`" in message
    tool = json.dumps(payload_for("PostToolUse", project)).encode()
    later = run(hook_command(report.plugin_dir, "PostToolUse"), tool, env_without_memkeeper, project)
    assert (later.returncode, later.stdout, later.stderr) == (0, b"", b"")
