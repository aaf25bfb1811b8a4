# Sourced (with `.`) by the plugin's launchers, bin/memkeeper-hook and bin/memkeeper (which
# .mcp.json also runs): finds the Python that has memkeeper, the one way for all three.
#
# Claude Code's PATH often lacks the virtualenv memkeeper lives in, so the Python is found
# in this order: $MEMKEEPER_PYTHON; the one `memkeeper install` recorded in
# ../.memkeeper-python (line 1: python, line 2: the folder holding the memkeeper package);
# the development venv beside a source checkout (its link tree holds the package); python3
# if it can import memkeeper. Sets `py` (empty when none is found) and `pkg` (the package
# folder when known, so a launcher may start Python with -S). Every Python runs with -P:
# a project's own json.py or types.py can never shadow a module.
# Uses no subshell and no external program: the hook launcher is the plugin's hottest path.
#
# Expects `root` (the plugin folder) to be set by the caller.

py=
pkg=
if [ -n "${MEMKEEPER_PYTHON:-}" ] && [ -x "$MEMKEEPER_PYTHON" ]; then
    py=$MEMKEEPER_PYTHON
elif [ -r "$root/.memkeeper-python" ]; then
    { read -r py; read -r pkg; } < "$root/.memkeeper-python"
    [ -x "$py" ] || py=
fi
if [ -z "$py" ] && [ -f "$root/../pkg/__init__.py" ] && [ -x "$root/../.venv/bin/python" ]; then
    py=$root/../.venv/bin/python
    for pkg in "$root"/../build/__editable__.memkeeper-*; do :; done
fi
if [ -n "$pkg" ] && [ ! -f "$pkg/memkeeper/__init__.py" ]; then
    pkg=
fi
if [ -z "$py" ] && command -v python3 >/dev/null 2>&1 && python3 -P -c 'import memkeeper' >/dev/null 2>&1; then
    py=python3
fi
