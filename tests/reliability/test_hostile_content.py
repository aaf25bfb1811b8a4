"""Hostile memory text (Rich markup, ANSI escapes, NUL bytes, huge lines) shown by the CLI and TUI.

Nothing may take effect: no escape or control byte reaches the terminal, markup is shown
as the literal text it is, and every command still works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memkeeper.core.store.paths import StorePaths
from tests.reliability import reliability_kit as kit

MARKUP = "[bold red]BOOMMARKUP[/bold red] [link=file:///etc/passwd]clickme[/link]"
ANSI = "\x1b[31mANSIRED\x1b[0m \x1b]0;hijacked title\x07 \x1b[2J\x1b[H"
CONTROL = "NUL\x00BYTE bell\x07 back\x08space cr\rreturn del\x7f"
HUGE = "HUGELINE " + "y" * 60_000
FORBIDDEN = ["\x1b", "\x00", "\x07", "\x08", "\x7f", "\r"]


def hostile_store(tmp_path: Path) -> StorePaths:
    from memkeeper.core.log import rotation
    from memkeeper.core.store.atomic import append_text, atomic_write_json, atomic_write_text

    paths = kit.new_project(tmp_path, "project")
    body = f"## 2026-04-01_1000\n- [hostile]: {MARKUP}\n- [hostile]: {ANSI}\n- [hostile]: {CONTROL}\n{HUGE}\n"
    append_text(paths.memory, body * 2)
    result = rotation.rotate(paths, 100, 50, force=True)
    assert result is not None
    append_text(paths.memory, body)
    atomic_write_json(
        paths.root / result.archive.replace(".md", ".summary.json"),
        {
            "themes": [{"name": MARKUP, "summary": ANSI + CONTROL}],
            "keyDecisions": [{"decision": MARKUP, "reason": ANSI}],
            "issues": [{"issue": CONTROL, "status": "open"}],
            "overallSummary": f"{MARKUP} {ANSI} {CONTROL}",
        },
    )
    from memkeeper.core.store.memory_index import update_index

    update_index(paths, lambda i: i["rotatedFiles"][0].__setitem__("summaryGenerated", True))
    atomic_write_text(paths.named("project"), f"# Project\n{MARKUP}\n{ANSI}\n{CONTROL}\n")
    l1 = paths.sessions / "2026-04-01_100000_abcdef12.l1.jsonl"
    entries = [
        {
            "ts": "2026-04-01T10:00:00.000Z",
            "role": "user",
            "text": f"{MARKUP} {ANSI} {CONTROL}",
            "session": "abcdef12-0000",
        },
        {
            "ts": "2026-04-01T10:00:01.000Z",
            "role": "tool",
            "name": ANSI,
            "cmd": MARKUP,
            "session": "abcdef12-0000",
        },
    ]
    atomic_write_text(l1, "".join(json.dumps(e) + "\n" for e in entries))
    return paths


COMMANDS = [
    ["status"],
    ["search", "BOOMMARKUP"],
    ["search", "ANSIRED", "--deep"],
    ["search", "HUGELINE"],
    ["memory-get", "project"],
    ["memory-get"],
    ["memory-list"],
    ["sessions"],
    ["summaries"],
    ["doctor"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_cli_shows_hostile_text_without_effect(command: list[str], tmp_path: Path) -> None:
    paths = hostile_store(tmp_path)
    env = kit.child_env(tmp_path / "home")
    env.update({"COLUMNS": "120", "TERM": "xterm-256color"})
    env.pop("FORCE_COLOR", None)
    env.pop("NO_COLOR", None)
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(paths.project), *command],
        capture_output=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode in (0, 1, 3), proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    for byte in FORBIDDEN:
        assert byte not in out, (command, repr(byte))
    if command[0] in ("search", "memory-get") and "HUGELINE" not in command and "ANSIRED" not in command:
        assert "[bold red]BOOMMARKUP" in out  # markup shown as the text it is


@pytest.mark.parametrize(
    "command",
    [["search", "BOOMMARKUP", "--json"], ["status", "--json"], ["doctor", "--json"]],
    ids=lambda c: " ".join(c),
)
def test_json_output_stays_valid(command: list[str], tmp_path: Path) -> None:
    paths = hostile_store(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "memkeeper.cli.main", "--project", str(paths.project), *command],
        capture_output=True,
        timeout=120,
        env=kit.child_env(tmp_path / "home"),
    )
    assert proc.returncode in (0, 1, 3), proc.stderr.decode()
    json.loads(proc.stdout)  # control characters are escaped, never raw
    assert b"\x1b" not in proc.stdout and b"\x00" not in proc.stdout


def _tui_available() -> bool:
    try:
        import memkeeper.tui.app
        import memkeeper.tui.widgets.docview  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _tui_available(), reason="the TUI is not installed in this build")
async def test_tui_shows_hostile_text_without_effect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memkeeper.tui.app import MemkeeperApp
    from memkeeper.tui.model import Target
    from memkeeper.tui.widgets.docview import DocView
    from memkeeper.tui.widgets.tier_tree import TierTree

    paths = hostile_store(tmp_path)
    app = MemkeeperApp(paths, watch=False)

    async def settle(pilot: object) -> None:
        for _ in range(4):
            await app.workers.wait_for_complete()
            await pilot.pause()  # type: ignore[attr-defined]

    seen: list[str] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        snapshot = app.snapshot
        assert snapshot is not None
        tree = app.screen.query_one(TierTree)
        targets = [None, Target("summary", snapshot.archives[0].name)]
        targets += [Target("l1", s.name) for s in snapshot.sessions]
        for target in targets:
            if target is not None:
                assert tree.select_target(target)
                await settle(pilot)
            doc = app.screen.query_one(DocView)
            plain = doc.rendered_text()
            seen.append(plain)
            for byte in FORBIDDEN:
                assert byte not in plain, (target, repr(byte))
        screen = app.export_screenshot()
    everything = "\n".join(seen)
    assert "[bold red]BOOMMARKUP" in everything
    assert "\x1b" not in screen.replace("&#27;", "")
    assert os.path.exists(paths.memory)
