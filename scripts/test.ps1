# Windows form of `bash scripts/test.sh`: set up .venv and run the tests (arguments go to pytest).
# The work is scripts\setup.py's. Uses the `py` launcher that the python.org installer puts on PATH.
py -3 "$PSScriptRoot\setup.py" test @args
exit $LASTEXITCODE
