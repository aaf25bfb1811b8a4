#!/usr/bin/env bash
# Set up .venv (runtime dependencies only) and open memkeeper-tui on this project's memory store, or on a
# generated demo store when the project has none. Extra arguments go to memkeeper-tui.
set -euo pipefail
here="$(pwd)"
cd "$(dirname "$0")/.."
bash scripts/setup.sh --run
project="${MEMKEEPER_PROJECT:-$here}"
if [ $# -gt 0 ]; then
  exec .venv/bin/memkeeper-tui "$@"
elif [ -d "$project/.claude/memory" ]; then
  exec .venv/bin/memkeeper-tui "$project"
else
  exec .venv/bin/memkeeper-tui --demo
fi
