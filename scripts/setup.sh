#!/usr/bin/env bash
# Set up .venv (idempotent): scripts/setup.py does the work, on every OS; see its --help.
#   scripts/setup.sh --run | scripts/setup.sh | scripts/setup.sh --test
set -euo pipefail
exec "${PYTHON:-python3}" "$(dirname "$0")/setup.py" "$@"
