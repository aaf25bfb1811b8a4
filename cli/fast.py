"""``memkeeper check``: count one tool use and rotate if due, as lean as Python allows.

This is the JS ``counter.js check`` and runs on the hook path, so it avoids argparse,
Rich and pydantic, and even pathlib (it works on the string layout of
:mod:`memkeeper.core.layout`): the common case is one lock, one small JSON file
rewritten and one ``stat``. Only a due rotation imports the rotation machinery; it
prints ``[MEMORY_KEEPER_ROTATE] file=…`` and starts the summary job in the background.
"""

from __future__ import annotations

import os
import sys

from memkeeper.core import counters
from memkeeper.core.layout import CONFIG_FILE, MEMORY_FILE, STATE_DIR, ensure_dirs, project_dir, store_root
from memkeeper.core.lock import LockTimeout
from memkeeper.core.settings import hook_settings_at
from memkeeper.core.tokens import tokens_for_bytes

#: How long ``check`` waits for a store held by another process before skipping the rotation.
CHECK_LOCK_TIMEOUT = 2.0


def run_check(project: str | None) -> int:
    from memkeeper.core.boundary import refused_project

    folder = project_dir(project)
    reason = refused_project(folder)
    if reason:
        sys.stderr.write(f"memkeeper: no memory store is kept in {folder}: it is {reason}\n")
        return 0  # run from hooks: never fail the session
    root = store_root(folder)
    try:
        ensure_dirs(root)
        counters.bump_at(os.path.join(root, STATE_DIR), None, tool_uses=1)
        settings = hook_settings_at(os.path.join(root, CONFIG_FILE))
        try:
            size = os.stat(os.path.join(root, MEMORY_FILE)).st_size
        except FileNotFoundError:
            size = 0
        if settings.rotation_enabled and tokens_for_bytes(size) >= settings.threshold_tokens:
            from memkeeper.core import rotation
            from memkeeper.core.jobs import start_job
            from memkeeper.core.store import paths_for

            paths = paths_for(project)
            result = rotation.rotate(
                paths, settings.threshold_tokens, settings.carryover_tokens, lock_timeout=CHECK_LOCK_TIMEOUT
            )
            if result is not None:
                sys.stdout.write(result.trigger_line + "\n")
                start_job(paths, "summary")
    except LockTimeout:
        sys.stdout.write("[MEMORY_KEEPER] Another rotation in progress, skipping\n")
    except OSError as exc:
        sys.stderr.write(f"memkeeper: error: {exc.strerror or exc}: {exc.filename or ''}\n")
        return 1
    return 0
