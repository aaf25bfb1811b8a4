"""The CLI through a pipe and with mistakes: full lines, did-you-mean, exit codes as docs/usage.md says."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memkeeper.core.store.paths import StorePaths, ensure_store
from tests.memkeeper_cli import run_memkeeper


def memkeeper(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="40")  # a narrow terminal width that a pipe must ignore
    return run_memkeeper(*args, env=env, cwd=cwd)


@pytest.fixture
def store(tmp_path: Path) -> StorePaths:
    paths = StorePaths(tmp_path / "proj")
    paths.project.mkdir()
    ensure_store(paths)
    return paths


def test_a_200_character_file_name_survives_a_pipe(store: StorePaths) -> None:
    name = "2026-11-20_100000_" + "x" * 173 + ".l1.jsonl"
    assert len(name) == 200
    (store.sessions / name).write_text(
        '{"ts":"2026-11-20T10:00:00.000Z","role":"user","text":"hello there, a long title follows"}\n'
    )
    done = memkeeper("--project", str(store.project), "sessions")
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    assert len(rows) == 2  # header and one row: nothing wrapped
    assert rows[1].split()[-1] == name
    assert "\x1b[" not in done.stdout  # no colour codes in a pipe


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["stauts"], "unknown command 'stauts'; did you mean 'status'?"),
        (["--projct", "/tmp", "status"], "unknown option '--projct'; did you mean '--project'?"),
        (["status", "--jsn"], "unknown option '--jsn'; did you mean '--json'?"),
        (["search", "x", "--limt", "3"], "did you mean '--limit'?"),
    ],
)
def test_mistakes_get_the_closest_name_and_exit_2(argv: list[str], words: str, store: StorePaths) -> None:
    done = memkeeper(*argv, cwd=store.project)
    assert done.returncode == 2
    assert words in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_exit_codes_follow_the_docs(store: StorePaths, tmp_path: Path) -> None:
    usage = Path(__file__).resolve().parents[3] / "docs" / "usage.md"
    readme = " ".join(usage.read_text("utf-8").split())
    assert (
        "2 bad usage or config (an unknown command or option, a malformed id such as `show bogus-id`)"
        in readme
    )
    assert "3 nothing to do / no results (a well-formed id that finds nothing, no store here)" in readme
    assert memkeeper("--project", str(store.project), "show", "bogus-id").returncode == 2  # usage
    missing = memkeeper("--project", str(store.project), "show", "l2-3fa2b9c1d0-1234")
    assert missing.returncode == 3, missing.stderr  # a valid id that finds nothing
    assert memkeeper("--project", str(store.project), "status").returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert memkeeper("--project", str(empty), "status").returncode == 3


def test_shared_options_before_or_after_the_command(store: StorePaths) -> None:
    before = memkeeper("--json", "--project", str(store.project), "status")
    after = memkeeper("status", "--project", str(store.project), "--json")
    assert before.returncode == after.returncode == 0
    assert json.loads(before.stdout)["store"] == json.loads(after.stdout)["store"] == str(store.root)


def test_internal_commands_work_but_are_not_listed() -> None:
    listing = memkeeper("--help").stdout
    assert "status" in listing and "search" in listing
    for internal in ("job", "hook", "check"):
        assert f"\n    {internal} " not in listing
    assert memkeeper("job", "--help").returncode == 0


def test_a_store_in_the_folder_above_is_named(store: StorePaths) -> None:
    below = store.project / "src" / "pkg"
    below.mkdir(parents=True)
    done = memkeeper("status", cwd=below)
    assert done.returncode == 3
    assert f"there is one in {store.project.resolve()}" in done.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["sessions"],
        ["rotate"],
        ["reset"],
        ["memory-list"],
        ["memory-get"],
        ["memory-set", "project", "a note on the project"],
        ["save", "we ship on Fridays"],
        ["summaries"],
        ["trash"],
        ["doctor"],
    ],
)
def test_json_everywhere(store: StorePaths, argv: list[str]) -> None:
    done = memkeeper("--project", str(store.project), *argv, "--json")
    assert done.returncode in (0, 3), done.stderr
    json.loads(done.stdout)  # the whole output is one JSON document


@pytest.mark.parametrize("line", [["--json", "statsu"], ["statsu", "--json"], ["search", "--json"]])
def test_json_asked_gets_its_error_as_json_too(line: list[str]) -> None:
    """A mistyped command under --json: the one-line error on stderr, and a JSON answer on stdout."""
    from tests.memkeeper_cli import run_memkeeper

    done = run_memkeeper(*line)
    assert done.returncode == 2
    assert done.stderr.startswith("memkeeper: error: ")
    answer = json.loads(done.stdout)
    assert answer["exitCode"] == 2 and answer["error"] == done.stderr.strip()[len("memkeeper: error: ") :]


def test_ranked_search_says_how_many_are_shown_and_how_to_see_more(tmp_path: Path) -> None:
    from memkeeper.core.demo import create_demo_store
    from tests.memkeeper_cli import run_memkeeper

    demo = create_demo_store(tmp_path / "demo")
    done = run_memkeeper("--project", str(demo.project), "search", "webhooks", "--limit", "3")
    head = done.stdout.splitlines()[0]
    assert head.startswith("[ranked] ") and "matches, 3 shown (--limit N for more), best first" in head
    assert "match(es)" not in done.stdout
