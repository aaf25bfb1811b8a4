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
stamp=.venv/.memkeeper-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[dev,anthropic]'
  touch "$stamp"
fi

if [ "${1:-}" = "--test" ]; then
  # tmux: the TUI smoke test runs memkeeper-tui in a real terminal.
  if ! command -v tmux >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
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
