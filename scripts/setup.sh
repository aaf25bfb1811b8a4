#!/usr/bin/env bash
# Set up .venv (idempotent), always from constraints.txt: a fresh machine gets what the tests ran with.
#   scripts/setup.sh --run    only what running needs (the package and its runtime dependencies)
#   scripts/setup.sh          the package, its runtime dependencies and the dev tools
#   scripts/setup.sh --test   also what the tests drive for real: tmux and the Claude Code CLIs
#                             (pinned 2.1.197 in .e2e/, newest tested 2.1.330 in .e2e-newest/)
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE_PINNED=2.1.197
CLAUDE_NEWEST=2.1.330
mode="${1:-}"
case "$mode" in
  --run) extras="" ;;
  ""|--test) extras="[dev,anthropic]" ;;
  *) echo "usage: scripts/setup.sh [--run|--test]" >&2; exit 2 ;;
esac

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# The editable install is setuptools' "strict" mode: build/__editable__.*/memkeeper/ is a tree of
# links to core/, cli/, plugin/ and tui/, which Python, mypy and import-linter all read the same way.
# A new or removed module needs the install again, so the stamp records the list of package files, the
# bin/memkeeper script (the install copies it) and which extras were installed (a dev install also
# serves --run; a --run install does not serve dev).
stamp=.venv/.memkeeper-installed
want="$(cat pyproject.toml constraints.txt bin/memkeeper; find pkg core cli plugin tui -type f -not -name '*.pyc' | LC_ALL=C sort)"
want="$(printf '%s' "$want" | cksum)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$have" != "$want $extras" ] && ! { [ -z "$extras" ] && [ "$have" = "$want [dev,anthropic]" ]; }; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  rm -rf build/__editable__.*
  .venv/bin/python -m pip install --quiet -c constraints.txt -e ".$extras" --config-settings editable_mode=strict
  printf '%s' "$want $extras" > "$stamp"
fi

if [ "$mode" = "--test" ]; then
  # tmux: the TUI smoke test runs memkeeper-tui in a real terminal.
  if ! command -v tmux >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
    else
      echo "setup: tmux is missing (the tmux smoke test will be skipped)" >&2
    fi
  fi
  # The real Claude Code CLIs, pinned and newest, for the end-to-end plugin and summarizer tests.
  for pair in ".e2e:$CLAUDE_PINNED" ".e2e-newest:$CLAUDE_NEWEST"; do
    folder="${pair%%:*}"
    version="${pair##*:}"
    if [ ! -x "$folder/node_modules/.bin/claude" ]; then
      if command -v npm >/dev/null 2>&1; then
        npm install --silent --no-save --no-audit --no-fund --prefix "$folder" \
          "@anthropic-ai/claude-code@$version" >/dev/null
      else
        echo "setup: npm is missing (the end-to-end tests will be skipped)" >&2
      fi
    fi
  done
fi
