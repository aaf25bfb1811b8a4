"""A resumed session gets only what changed since its last injection, after a one-line note."""

from __future__ import annotations

from memkeeper.core.context.session_start import build_context
from memkeeper.core.log import flush
from memkeeper.core.store.atomic import append_text, atomic_write_text
from memkeeper.core.store.paths import StorePaths


def seed(store: StorePaths) -> None:
    atomic_write_text(
        store.memory, "".join(flush.section_text([f"- [fact]: old fact number {i}"]) for i in range(30))
    )
    atomic_write_text(store.root / "project.md", "The project builds a memory plugin.\n")


def test_resume_without_changes_is_one_line(store: StorePaths) -> None:
    seed(store)
    first = build_context(store, "startup", session_id="s-1")
    assert "old fact number 29" in first and len(first) > 1000
    again = build_context(store, "resume", session_id="s-1")
    assert again.startswith("memkeeper: session resumed") and "\n" not in again
    assert "old fact number" not in again


def test_resume_injects_only_the_new_memory_block(store: StorePaths) -> None:
    seed(store)
    build_context(store, "startup", session_id="s-1")
    append_text(store.memory, flush.section_text(["- [fact]: a brand new fact"]))
    again = build_context(store, "resume", session_id="s-1")
    assert again.startswith("memkeeper: session resumed; only what changed")
    assert "a brand new fact" in again and "old fact number" not in again
    assert "memory plugin" not in again  # project.md did not change
    assert build_context(store, "resume", session_id="s-1").count("\n") == 0  # now nothing is new


def test_a_session_with_no_record_and_a_compaction_get_everything(store: StorePaths) -> None:
    seed(store)
    unknown = build_context(store, "resume", session_id="never-seen")
    assert "old fact number 29" in unknown and "memory plugin" in unknown
    build_context(store, "startup", session_id="s-2")
    compact = build_context(store, "compact", session_id="s-2")
    assert "old fact number 29" in compact  # a compaction dropped what was injected
