"""Shared helpers of the L1 tests: where the transcripts used as test data are."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
#: ``shared/transcripts`` beside the repository, or beside a folder above it (a git worktree).
SHARED = next(
    (
        up / "shared" / "transcripts"
        for up in Path(__file__).resolve().parents[3].parents
        if (up / "shared" / "transcripts").is_dir()
    ),
    Path(__file__).resolve().parents[3] / ".." / "shared" / "transcripts",
)
BIG_TRANSCRIPT = SHARED / "spotter" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"


def all_fixture_transcripts() -> list[Path]:
    """Main-session transcripts among the copied fixtures (subagent files are read with them)."""
    return sorted(p for p in FIXTURES.rglob("*.jsonl") if "subagents" not in p.parts)


def shared_transcripts() -> list[Path]:
    """Every main-session transcript of the shared test data, or [] when it is not beside the repo."""
    if not SHARED.is_dir():
        return []
    return sorted(
        p for p in SHARED.rglob("*.jsonl") if "subagents" not in p.parts and p.name != "hook-inputs.jsonl"
    )
