"""``memkeeper check``: count one tool use and rotate if due, as lean as Python allows.

This is the JS ``counter.js check`` and runs on the hook path, so it avoids argparse,
Rich and pydantic: it is :func:`memkeeper.core.log.activity.record` (the one "count, then
rotate if due", shared with the hooks) plus the JS plugin's output lines.
"""

from __future__ import annotations

import sys

from ..core.log.activity import record
from ..core.store.layout import project_dir


def run_check(project: str | None) -> int:
    from ..core.store.boundary import refused_project

    folder = project_dir(project)
    reason = refused_project(folder)
    if reason:
        sys.stderr.write(f"memkeeper: no memory store is kept in {folder}: it is {reason}\n")
        return 0  # run from hooks: never fail the session
    from ..core.store.boundary import StoreLinkError
    from ..core.store.layout import store_root
    from ..core.store.lock import LockTimeout
    from ..core.store.state_stamp import adopt

    try:
        adopt(store_root(folder))  # runtime state made elsewhere (a clone's .state): set aside first
        done = record(folder, None, tool_uses=1)
    except StoreLinkError as exc:
        sys.stderr.write(f"memkeeper: {exc}\n")
        return 0  # (as above)
    except LockTimeout:
        sys.stderr.write("memkeeper: another process is setting up this store; not counted\n")
        return 0  # (as above)
    except OSError as exc:
        sys.stderr.write(f"memkeeper: error: {exc.strerror or exc}: {exc.filename or ''}\n")
        return 1
    if done.rotation is not None:
        sys.stdout.write(done.rotation.trigger_line + "\n")
    elif done.busy:
        sys.stdout.write("[MEMORY_KEEPER] Another rotation in progress, skipping\n")
    return 0
