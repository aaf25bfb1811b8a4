#!/usr/bin/env bash
# The unit and functional tests of the CLI, the plugin's hooks, MCP, search and recall (not the TUI,
# not the trials that drive the real Claude Code CLI) in a simulated foreign platform:
# tests/foreign/sitecustomize.py takes away what a Windows Python lacks (fcntl, os.fork, SIGKILL,
# AF_UNIX ...), for this run only. Prints how many tests ran, passed and were skipped (with why).
# Extra arguments go to pytest, e.g. scripts/foreign-tests.sh -n 0 tests/unit/store
set -euo pipefail
cd "$(dirname "$0")/.."
report=$(mktemp -d)/foreign.xml
paths=(tests/unit tests/functional/cli tests/functional/plugin)
for arg in "$@"; do
  if [[ "$arg" == tests/* ]]; then paths=(); break; fi
done
status=0
PYTHONPATH="$PWD/tests/foreign${PYTHONPATH:+:$PYTHONPATH}" \
  .venv/bin/python -m pytest "${paths[@]}" -m "not e2e and not tmux" -p no:cacheprovider -p foreign_gaps -q \
  --junitxml="$report" "$@" || status=$?
.venv/bin/python - "$report" <<'PY'
import collections, sys
import xml.etree.ElementTree as ET

cases = list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
marks = [(c, c.find("skipped")) for c in cases]
gaps = [m.get("message", "") for c, m in marks if m is not None and m.get("type") == "pytest.xfail"]
skipped = [m.get("message", "") for c, m in marks if m is not None and m.get("type") != "pytest.xfail"]
failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
ran = len(cases) - len(skipped)
passed = ran - len(failed) - len(gaps)
print(
    f"foreign platform: {ran} ran, {passed} passed, {len(failed)} failed, "
    f"{len(gaps)} expected gaps (failed as expected), {len(skipped)} skipped"
)
for label, reasons in (("expected gap", gaps), ("skipped", skipped)):
    for reason, count in collections.Counter(reasons).most_common():
        print(f"  {label} x{count}: {reason}")
PY
exit $status
