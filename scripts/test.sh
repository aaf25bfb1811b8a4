#!/usr/bin/env bash
# Set up .venv (plus tmux and the Claude Code CLI) and run every test.
# Extra arguments go to pytest, e.g. scripts/test.sh tests/unit/store -x
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
exec .venv/bin/python -m pytest "$@"
