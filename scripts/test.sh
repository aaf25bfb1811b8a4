#!/usr/bin/env bash
# Set up .venv (plus tmux and the Claude Code CLIs) and run every test. Extra arguments go to pytest,
# e.g. scripts/test.sh tests/unit/store -x
# The work is scripts/setup.py's (Windows: scripts\test.ps1, or py scripts\setup.py test).
set -euo pipefail
exec "${PYTHON:-python3}" "$(dirname "$0")/setup.py" test "$@"
