# Windows form of `bash scripts/run.sh`: set up .venv and open memkeeper-tui (arguments go to it).
# The work is scripts\setup.py's. Uses the `py` launcher that the python.org installer puts on PATH.
py -3 "$PSScriptRoot\setup.py" run @args
exit $LASTEXITCODE
