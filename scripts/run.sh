#!/usr/bin/env bash
# Set up .venv (runtime dependencies only) and open memkeeper-tui on this folder's project memory store,
# or on a generated demo store when it has none. Extra arguments go to memkeeper-tui.
# The work is scripts/setup.py's (Windows: scripts\run.ps1, or py scripts\setup.py run).
set -euo pipefail
exec "${PYTHON:-python3}" "$(dirname "$0")/setup.py" run "$@"
