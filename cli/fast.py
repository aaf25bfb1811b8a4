"""``memkeeper check``: count one tool use and rotate if due, with stdlib imports only.

This is the JS ``counter.js check`` and runs on the hook path, so it avoids argparse,
Rich and pydantic. A rotation prints ``[MEMORY_KEEPER_ROTATE] file=…`` and starts the
summary job in the background.
"""

from __future__ import annotations

import sys

from memkeeper.core import counters
from memkeeper.core.lock import LockTimeout
from memkeeper.core.settings import hook_settings
from memkeeper.core.store import ensure_store, paths_for
from memkeeper.core.tokens import tokens_for_bytes


def run_check(project: str | None) -> int:
    paths = paths_for(project)
    try:
        ensure_store(paths)
        counters.bump(paths, None, tool_uses=1)
        settings = hook_settings(paths)
        try:
            size = paths.memory.stat().st_size
        except FileNotFoundError:
            size = 0
        # Rotation and jobs are imported only when a rotation is due (rarely).
        if settings.rotation_enabled and tokens_for_bytes(size) >= settings.threshold_tokens:
            from memkeeper.core import rotation
            from memkeeper.core.jobs import start_job

            result = rotation.rotate(paths, settings.threshold_tokens, settings.carryover_tokens)
            if result is not None:
                sys.stdout.write(result.trigger_line + "\n")
                start_job(paths, "summary")
    except LockTimeout:
        sys.stdout.write("[MEMORY_KEEPER] Another rotation in progress, skipping\n")
    except OSError as exc:
        sys.stderr.write(f"memkeeper: error: {exc.strerror or exc}: {exc.filename or ''}\n")
        return 1
    return 0
