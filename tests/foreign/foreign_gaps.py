"""The known gaps of the simulated foreign run, named (``scripts/foreign-tests.sh`` loads this
pytest plugin with ``-p foreign_gaps``): each test listed is marked as an expected failure there,
with its reason, and counted apart. Delete an entry once its gap is closed."""

from __future__ import annotations

import pytest

#: Tests whose resident lookup is a detached job the real hook starts: the job runs with ``-E`` (so
#: without this run's PYTHONPATH, outside the simulation) and listens on a Unix socket, which the
#: simulated test process, without AF_UNIX, cannot reach. On a real foreign system every process has
#: the same family (the loopback port), as the in-process tests of the channel show.
RESIDENT_LOOKUP = frozenset(
    {
        "test_the_real_hook_starts_a_detached_recall_job_that_answers",
        "test_while_it_runs_the_server_answers_the_hooks_recall",
    }
)
RESIDENT_REASON = (
    "a detached job started outside the simulation listens on AF_UNIX, which the simulated test lacks"
)
#: Test modules that drive the Textual app: the simulation keeps ``os.name == "posix"``, so Textual
#: picks its POSIX driver, which needs ``termios`` (the TUI's tests are left out of this run).
TUI_MODULES = frozenset({"test_settings_honoured.py"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in TUI_MODULES:
            item.add_marker(
                pytest.mark.skip(reason="drives the Textual app (its POSIX driver needs termios)")
            )
        name = getattr(item, "originalname", item.name)
        if name in RESIDENT_LOOKUP:
            item.add_marker(pytest.mark.xfail(reason=RESIDENT_REASON, strict=False))
