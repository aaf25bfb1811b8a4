"""A command line builds the parser of its own command only, and that parser is the full one's."""

from __future__ import annotations

import argparse

from memkeeper.cli.main import _command_names, build_parser


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise AssertionError(f"no command {name}")


def _shape(parser: argparse.ArgumentParser) -> list[tuple[tuple[str, ...], str, object]]:
    return [(tuple(a.option_strings), a.dest, a.default) for a in parser._actions]


def test_only_the_named_command_is_built() -> None:
    assert _command_names(build_parser("search")) == {"search"}
    assert _command_names(build_parser("no-such-command")) == set()
    assert {"search", "show", "reindex", "doctor"} <= _command_names(build_parser())


def test_each_command_alone_parses_as_in_the_whole_line() -> None:
    full = build_parser()
    for name in sorted(_command_names(full)):
        alone = build_parser(name)
        assert _shape(_subparser(alone, name)) == _shape(_subparser(full, name)), name
        assert _shape(alone) == _shape(full)
