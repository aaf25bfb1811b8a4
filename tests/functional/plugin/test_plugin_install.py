"""``memkeeper install`` / ``uninstall`` with a fake ``claude``, and the installed launcher."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memkeeper.core.basics import interpreter
from memkeeper.core.log import progress
from memkeeper.core.store.paths import StorePaths
from memkeeper.plugin import install
from tests.functional.plugin.capture_helpers import hook_command, payload_for
from tests.memkeeper_cli import run_memkeeper


def fake_claude(tmp_path: Path, fail_add: bool = False) -> tuple[Path, Path]:
    """A `claude` that records its arguments (one JSON list per line) and succeeds."""
    record = tmp_path / "claude-calls.jsonl"
    script = tmp_path / "bin" / "claude"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"open({str(record)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"sys.exit(1 if {fail_add!r} and sys.argv[1:4] == ['plugin', 'marketplace', 'add'] else 0)\n"
    )
    script.chmod(0o755)
    return script, record


def calls(record: Path) -> list[list[str]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def test_marketplace_copy(home: Path) -> None:
    report = install.write_marketplace(home)
    root = home / ".claude" / "memkeeper-marketplace"
    assert report.marketplace == root
    manifest = json.loads((root / ".claude-plugin" / "marketplace.json").read_text())
    assert manifest["name"] == "memkeeper-local"
    assert manifest["plugins"][0] == {
        "name": "memkeeper",
        "source": "./plugins/memkeeper",
        "description": manifest["plugins"][0]["description"],
        "version": "0.1.0",
    }
    plugin = root / "plugins" / "memkeeper"
    assert (plugin / ".claude-plugin" / "plugin.json").is_file()
    assert (plugin / "hooks" / "hooks.json").is_file()
    assert sorted(p.name for p in (plugin / "commands").iterdir()) == [
        "forget.md",
        "regenerate.md",
        "save.md",
        "search.md",
        "status.md",
    ]
    assert not list(plugin.rglob("*.py")) and not list(plugin.rglob("__pycache__"))
    for launcher in (plugin / "bin").iterdir():
        assert os.access(launcher, os.X_OK)
    python, package_dir = (plugin / ".memkeeper-python").read_text().splitlines()
    assert python == sys.executable
    assert (Path(package_dir) / "memkeeper" / "__init__.py").is_file()
    # A second copy replaces the first.
    (plugin / "stale.md").write_text("old")
    install.write_marketplace(home)
    assert not (plugin / "stale.md").exists()


def test_install_registers_through_claude(home: Path, tmp_path: Path) -> None:
    claude, record = fake_claude(tmp_path)
    report = install.install(home, claude=str(claude))
    assert report.registered
    assert calls(record) == [
        ["plugin", "marketplace", "add", str(report.marketplace)],
        ["plugin", "install", "memkeeper@memkeeper-local", "--scope", "user"],
    ]


def test_install_updates_a_known_marketplace(home: Path, tmp_path: Path) -> None:
    claude, record = fake_claude(tmp_path, fail_add=True)
    report = install.install(home, claude=str(claude), scope="project")
    assert report.registered
    assert [c[:3] for c in calls(record)] == [
        ["plugin", "marketplace", "add"],
        ["plugin", "marketplace", "update"],
        ["plugin", "install", "memkeeper@memkeeper-local"],
    ]
    assert calls(record)[-1][-2:] == ["--scope", "project"]


def memkeeper_with_path(home: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``memkeeper ARGS`` with ``path`` as PATH (where ``claude`` is, or is not) and ``home`` as HOME."""
    env = dict(os.environ, PATH=path, HOME=str(home))
    return subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_install_without_claude_prints_the_steps(home: Path) -> None:
    done = memkeeper_with_path(home, "/nonexistent", "install")
    assert done.returncode == 0, done.stderr
    assert "claude plugin marketplace add" in done.stdout
    assert "claude plugin install memkeeper@memkeeper-local --scope user" in done.stdout
    # Then what a newcomer does next, where to look, and what it costs (and how to make it free).
    assert "1. Start `claude` in a project" in done.stdout
    assert "`memkeeper status` in the project" in done.stdout and "`memkeeper-tui`" in done.stdout
    assert "capped at 50 calls and 500,000 tokens a day" in done.stdout
    assert '{"summarizer": {"backend": "extractive"}}' in done.stdout


def test_uninstall(home: Path, tmp_path: Path) -> None:
    claude, record = fake_claude(tmp_path)
    install.install(home, claude=str(claude))
    report = install.uninstall(home, claude=str(claude))
    assert report.removed and not report.marketplace.exists()
    assert calls(record)[-2:] == [
        ["plugin", "uninstall", "memkeeper@memkeeper-local", "--scope", "user"],
        ["plugin", "marketplace", "remove", "memkeeper-local"],
    ]


def _counts_a_tool_use(
    plugin_dir: Path, store: StorePaths, session: str, env: dict[str, str], cwd: Path | None = None
) -> None:
    """The installed copy's PostToolUse hook, run as hooks.json says, answers nothing and counts the tool use."""
    tool = json.dumps(payload_for("PostToolUse", store.project, session_id=session)).encode()
    done = subprocess.run(
        hook_command(plugin_dir, "PostToolUse"), input=tool, capture_output=True, env=env, cwd=cwd, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert progress.read_counters(store)["sessions"][session]["toolUses"] == 1


def test_installed_launcher_finds_the_recorded_python(home: Path, store: StorePaths) -> None:
    report = install.write_marketplace(home)
    env = dict(os.environ, HOME=str(home), PATH="/usr/bin:/bin", MEMKEEPER_NO_JOBS="1")
    env.pop("MEMKEEPER_PYTHON", None)
    env.pop("CLAUDE_PROJECT_DIR", None)
    _counts_a_tool_use(report.plugin_dir, store, "inst-1", env)
    cli = subprocess.run(
        [
            str(report.plugin_dir / "bin" / "memkeeper"),
            "--project",
            str(store.project),
            "save",
            "a note from the launcher",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    assert "- [note]: a note from the launcher" in store.memory.read_text()


def test_installed_hooks_start_python_with_no_shell(home: Path, store: StorePaths) -> None:
    report = install.write_marketplace(home)
    source = json.loads((install.plugin_source() / "hooks" / "hooks.json").read_text("utf-8"))
    config = json.loads((report.plugin_dir / "hooks" / "hooks.json").read_text("utf-8"))
    assert config["hooks"].keys() == source["hooks"].keys()
    for event, groups in config["hooks"].items():
        handler = groups[0]["hooks"][0]
        # exec form: Claude Code starts the recorded Python itself, no shell, no Python source inline
        assert handler["command"] == report.python
        assert handler["args"] == [*interpreter.LAUNCHER_FLAGS, "${CLAUDE_PLUGIN_ROOT}/lib/boot", event]
        assert handler["timeout"] == source["hooks"][event][0]["hooks"][0]["timeout"]
        assert len(" ".join([handler["command"], *handler["args"]])) <= 200
    server = json.loads((report.plugin_dir / ".mcp.json").read_text("utf-8"))["mcpServers"]["memkeeper"]
    assert server == {
        "command": report.python,
        "args": [*interpreter.LAUNCHER_FLAGS, "${CLAUDE_PLUGIN_ROOT}/lib/boot", "mcp"],
    }
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "MEMKEEPER_NO_JOBS": "1"}
    _counts_a_tool_use(report.plugin_dir, store, "inst-2", env, cwd=store.project)


def test_the_checkout_launcher_starts_python_as_the_interpreter_module_says() -> None:
    """bin/memkeeper.cmd (sh and cmd parts) runs lib/boot with interpreter.LAUNCHER_FLAGS, as an installed copy does."""
    text = (install.plugin_source() / "bin" / "memkeeper.cmd").read_text("utf-8")
    flags = " ".join(interpreter.LAUNCHER_FLAGS)
    assert f'exec "$py" {flags} "$root/lib/boot" "$@"' in text
    assert f'"%py%" {flags} "%root%\\lib\\boot" %*' in text
    for name in (
        "hooks/hooks.json",
        ".mcp.json",
    ):  # no shell named, in the checkout's copy as in the installed one
        assert "/bin/sh" not in (install.plugin_source() / name).read_text("utf-8")
    hooks = json.loads((install.plugin_source() / "hooks" / "hooks.json").read_text("utf-8"))["hooks"]
    for event, groups in hooks.items():
        assert groups[0]["hooks"][0]["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/bin/memkeeper.cmd" {event}'


def test_doctor_and_status_say_whether_the_installed_plugin_finds_memkeeper(
    home: Path, store: StorePaths, bare_python: str
) -> None:
    assert not install.check_installed(home).installed
    install.write_marketplace(home)
    check = install.check_installed(home)
    assert (check.finds_memkeeper, check.this_memkeeper) == (True, True), check.message
    # the recorded Python lost memkeeper, and the recorded package folder is gone: the check runs the
    # launcher as Claude Code does
    report = install.write_marketplace(home, python=bare_python)
    (report.plugin_dir / ".memkeeper-python").write_text(f"{bare_python}\n{home / 'gone'}\n")
    check = install.check_installed(home)
    assert (check.installed, check.finds_memkeeper) == (True, False)
    assert (
        f"{bare_python} cannot import memkeeper" in check.message and "`memkeeper install`" in check.message
    )
    env = dict(os.environ, HOME=str(home))
    for command in ("status", "doctor"):
        done = run_memkeeper("--project", str(store.project), command, "--json", env=env)
        assert json.loads(done.stdout)["plugin"]["findsMemkeeper"] is False, done.stdout + done.stderr


def test_a_second_uninstall_says_nothing_is_installed(home: Path, tmp_path: Path) -> None:
    """Claude Code refuses to remove what it does not know: one plain sentence, exit 3, not two failures."""
    script = tmp_path / "bin" / "claude"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"#!{sys.executable}\nimport sys\nprint('Plugin not found')\nsys.exit(1)\n")
    script.chmod(0o755)
    done = memkeeper_with_path(home, f"{script.parent}:/usr/bin:/bin", "uninstall")
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith("memkeeper is not installed in Claude Code: nothing to remove.")
    assert "failed" not in done.stdout
