#!/usr/bin/env bash
# Set up a development environment in .venv (idempotent).
#   scripts/setup.sh          Python package + dev tools
#   scripts/setup.sh --test   also what the tests drive for real: tmux and the Claude Code CLI
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# The editable install is setuptools' "strict" mode: build/__editable__.*/memkeeper/ is a tree of
# links to core/, cli/, plugin/ and tui/, which Python, mypy and import-linter all read the same way.
# A new or removed module needs the install again, so the stamp records the list of package files.
stamp=.venv/.memkeeper-installed
want="$(cat pyproject.toml; find pkg core cli plugin tui -type f -not -name '*.pyc' | LC_ALL=C sort)"
want="$(printf '%s' "$want" | cksum)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  rm -rf build/__editable__.*
  .venv/bin/python -m pip install --quiet -e '.[dev,anthropic]' --config-settings editable_mode=strict
  printf '%s' "$want" > "$stamp"
fi

if [ "${1:-}" = "--test" ]; then
  # tmux: the TUI smoke test runs memkeeper-tui in a real terminal; ripgrep: the search benchmark's baseline.
  if ! command -v tmux >/dev/null 2>&1 || ! command -v rg >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux ripgrep >/dev/null
    else
      echo "setup: tmux is missing (the tmux smoke test will be skipped)" >&2
    fi
  fi
  # The real Claude Code CLI, pinned, for the end-to-end plugin tests.
  if [ ! -x .e2e/node_modules/.bin/claude ]; then
    if command -v npm >/dev/null 2>&1; then
      npm install --silent --no-save --no-audit --no-fund --prefix .e2e @anthropic-ai/claude-code@2.1.197 >/dev/null
    else
      echo "setup: npm is missing (the end-to-end tests will be skipped)" >&2
    fi
  fi
fi
