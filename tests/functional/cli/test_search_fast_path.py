"""A plain ``memkeeper search`` line is read without argparse, to the same namespace argparse gives;
any other line is left to argparse, which answers it as always."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memkeeper.cli.main import ALIASES, parse_line, run
from memkeeper.cli.main import main as cli_main
from memkeeper.cli.search_cmds import fast_args
from memkeeper.core.store.paths import StorePaths
from tests.memkeeper_cli import run_memkeeper

PLAIN: list[list[str]] = [
    ["search", "rotation"],
    ["search", "how", "is", "the", "lock", "taken", "--deep"],
    ["search-memory", "stale lock", "--deep"],
    ["--project", "P", "search", "x", "--limit", "3"],
    ["--project=P", "search", "x"],
    ["--json", "search", "x"],
    ["search", "x", "--json"],
    ["search", "--exact", "--deep", "a", "b"],
    ["search", "--tier", "l2", "--tier", "l3,l1", "x"],
    ["search", "x", "--type=decision", "--since", "2024-01-01", "--until=2025-01-01"],
    ["search", "x", "--project", "A", "--project=B"],
    ["--project", "A", "search", "x", "--project", "B"],
    ["--json", "--project", "A", "search", "검색", "--limit=07"],
    ["search", '"stale lock files"', "--exact"],
    ["search", "x", "--project", ""],
]

LEFT_TO_ARGPARSE: list[list[str]] = [
    ["search"],
    ["search", "-h"],
    ["search", "--help"],
    ["search", "x", "--deep", "y"],  # words split by an option: argparse says "unrecognized"
    ["search", "x", "--lim", "3"],  # an abbreviation
    ["search", "x", "--limt", "3"],  # a mistake: argparse names the closest option
    ["search", "x", "--limit", "abc"],
    ["search", "x", "--limit", "-3"],
    ["search", "x", "--limit", "+3"],
    ["search", "x", "--limit"],
    ["search", "x", "--tier"],
    ["search", "--", "-x"],
    ["search", "-5"],
    ["search", "-"],
    ["--deep", "search", "x"],  # a command's option before the command
    ["search", "x", "--deep=1"],
    ["--version"],
    ["status"],
    ["show", "search"],
]


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_a_plain_line_reads_as_argparse_reads_it(argv: list[str]) -> None:
    fast = fast_args(argv, ALIASES)
    assert fast is not None
    _parser, slow = parse_line(argv)
    assert vars(fast) == vars(slow)


@pytest.mark.parametrize("argv", LEFT_TO_ARGPARSE, ids=" ".join)
def test_any_other_line_is_left_to_argparse(argv: list[str]) -> None:
    assert fast_args(argv, ALIASES) is None


def _filled(store: StorePaths) -> StorePaths:
    store.memory.write_text("## 2026-05-01\n- [decision]: the rotation lock is taken with flock\n")
    return store


def test_the_command_answers_and_exits_as_before(store: StorePaths) -> None:
    project = str(_filled(store).project)
    found = run_memkeeper("--project", project, "search", "rotation", "lock")
    assert found.returncode == 0 and "rotation lock is taken" in found.stdout, found
    none = run_memkeeper("--project", project, "search", "zzqx-nothing")
    assert none.returncode == 3 and 'No results for "zzqx-nothing"' in none.stdout, none
    bad = run_memkeeper("--project", project, "search", "x", "--since", "yesterday")
    assert bad.returncode == 2 and bad.stderr.startswith("memkeeper: error:"), bad
    split = run_memkeeper("--project", project, "search", "x", "--deep", "y")
    assert split.returncode == 2 and "unrecognized arguments: y" in split.stderr, split


def test_the_installed_script_flushes_its_answer_before_it_leaves(store: StorePaths, tmp_path: Path) -> None:
    """The memkeeper console script leaves a search without the interpreter's teardown: nothing written is
    lost."""
    project = str(_filled(store).project)
    script = Path(sys.executable).with_name("memkeeper")
    out = tmp_path / "out.txt"
    with out.open("w") as handle:  # a file: block-buffered, the flush at exit is all that writes it
        done = subprocess.run(
            [str(script), "--project", project, "search", "rotation", "--json"],
            stdout=handle,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    answer = json.loads(out.read_text())
    assert answer["total"] >= 1 and answer["mode"] == "ranked", answer


def test_a_later_command_in_the_same_process_leaves_as_usual(
    store: StorePaths, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a search answered on the fast path leaves without teardown, not a command after it."""
    project = str(_filled(store).project)
    assert cli_main(["--project", project, "search", "rotation"]) == 0
    monkeypatch.setattr(sys, "argv", ["memkeeper", "--project", project, "status"])

    def no_teardown_skip(code: int) -> None:
        raise AssertionError(f"os._exit({code}) after a command that was not a fast search")

    monkeypatch.setattr(os, "_exit", no_teardown_skip)
    with pytest.raises(SystemExit) as left:
        run()
    assert left.value.code == 0
    capsys.readouterr()


def test_the_collector_is_back_on_after_a_fast_search(
    store: StorePaths, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fast search runs without the cyclic collector; a caller in the same process (a test
    worker) gets it back on, whether the search answered or failed."""
    import gc

    project = str(_filled(store).project)
    assert gc.isenabled()
    assert cli_main(["--project", project, "search", "rotation"]) == 0
    assert gc.isenabled()
    assert cli_main(["--project", project, "search", "x", "--since", "yesterday"]) == 2
    assert gc.isenabled()
    capsys.readouterr()
