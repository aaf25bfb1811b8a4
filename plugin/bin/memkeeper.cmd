: << 'CMDBLOCK'
@echo off
rem memkeeper.cmd ARGS: a plugin's launcher where Claude Code needs a command string (the hooks.json
rem and .mcp.json of a checkout, `claude --plugin-dir plugin/`), and `memkeeper` on Windows' PATH. It
rem is both a cmd script (this part) and a POSIX sh script (after CMDBLOCK). It finds a Python and runs
rem   python -E -P -S ../lib/boot ARGS
rem which runs the hook (ARGS = EVENT) or the memkeeper command, and tells the user when memkeeper
rem cannot be imported. The Python, in order: %MEMKEEPER_PYTHON%, the one `memkeeper install`
rem recorded in ../.memkeeper-python, the .venv of the checkout this plugin folder belongs to, then
rem python / py on PATH. An installed plugin's hooks.json runs the recorded Python directly.
setlocal
set "root=%~dp0.."
set "py="
if defined MEMKEEPER_PYTHON if exist "%MEMKEEPER_PYTHON%" set "py=%MEMKEEPER_PYTHON%"
if not defined py if exist "%root%\.memkeeper-python" set /p py=<"%root%\.memkeeper-python"
if defined py if not exist "%py%" set "py="
if not defined py if exist "%root%\..\__init__.py" if exist "%root%\..\.venv\Scripts\python.exe" set "py=%root%\..\.venv\Scripts\python.exe"
if not defined py for %%p in (python.exe py.exe) do if not defined py set "py=%%~$PATH:p"
if defined py "%py%" -E -P -S "%root%\lib\boot" %*
if defined py exit /b %errorlevel%
if "%~1"=="SessionStart" echo {"systemMessage": "memkeeper: memory is not being kept: no Python was found. Fix: install Python 3.11 or newer from python.org, then run `py -m pip install memkeeper` in a new terminal."}
for %%e in (SessionStart UserPromptSubmit PostToolUse PostToolUseFailure Stop PreCompact SessionEnd) do if "%~1"=="%%e" exit /b 0
echo memkeeper: no Python was found: install Python 3.11 or newer from python.org 1>&2
exit /b 1
CMDBLOCK
# The POSIX part (also what Git Bash runs on Windows): the same search, without a subshell or an
# external program, then Python replaces this shell (exec).
case $0 in */*) root=${0%/*}/.. ;; *) root=.. ;; esac
py=
if [ -n "${MEMKEEPER_PYTHON:-}" ] && [ -x "$MEMKEEPER_PYTHON" ]; then
    py=$MEMKEEPER_PYTHON
elif [ -r "$root/.memkeeper-python" ]; then
    read -r py < "$root/.memkeeper-python"
    [ -x "$py" ] || py=
fi
if [ -z "$py" ] && [ -f "$root/../__init__.py" ]; then
    for py in "$root/../.venv/bin/python" "$root/../.venv/Scripts/python.exe" ""; do
        [ -x "$py" ] && break
    done
fi
if [ -z "$py" ]; then
    for py in python3 python ""; do
        command -v "$py" >/dev/null 2>&1 && break
    done
fi
if [ -n "$py" ]; then
    exec "$py" -E -P -S "$root/lib/boot" "$@"
fi
case ${1:-} in
    SessionStart) echo '{"systemMessage": "memkeeper: memory is not being kept: no Python was found. Fix: install Python 3.11 or newer, then run `python3 -m pip install memkeeper`."}' ;;
    [[:upper:]]*) ;;
    *) echo "memkeeper: no Python was found: install Python 3.11 or newer" >&2; exit 1 ;;
esac
exit 0
