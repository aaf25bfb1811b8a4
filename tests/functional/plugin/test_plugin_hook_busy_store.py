"""A hook that finds the store taken by another process waits a bounded time, then skips the rotation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.core.store.memory_index import list_archives
from memkeeper.core.store.paths import StorePaths
from tests.functional.plugin.capture_helpers import payload_for
from tests.lock_holder import held


def test_post_tool_use_skips_rotation_while_the_store_is_locked_then_rotates(
    store: StorePaths,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_hook: Callable[[str, dict[str, Any] | bytes], tuple[int, str]],
) -> None:
    from memkeeper.plugin import hook

    content = b"".join(b"- [note]: line %05d of a memory that is due to rotate\n" % i for i in range(2000))
    store.memory.write_bytes(content)
    monkeypatch.setattr(hook, "HOOK_LOCK_TIMEOUT", 0.2)
    with held(store.lock):
        code, out = run_hook("PostToolUse", payload_for("PostToolUse", project))
        assert code == 0 and out == ""
        assert list_archives(store) == [] and store.memory.read_bytes() == content

    code, _ = run_hook("PostToolUse", payload_for("PostToolUse", project))
    [archive] = list_archives(store)
    assert code == 0 and (store.root / archive).read_bytes() == content
    assert (store.root / "logs" / "memkeeper.log").exists() is False  # skipping is not an error
