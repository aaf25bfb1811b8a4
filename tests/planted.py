"""For the privacy tests: a transcript with planted secrets, and everything the store holds, read back."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any


def write_transcript(
    folder: Path, session: str, records: list[dict[str, Any]], agent: str, agent_record: dict[str, Any]
) -> Path:
    """``folder/SESSION.jsonl`` holding ``records``, with one subagent record in its ``subagents`` folder."""
    path = folder / f"{session}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    sidechain = folder / session / "subagents" / f"agent-{agent}.jsonl"
    sidechain.parent.mkdir(parents=True)
    record = {"type": "user", "sessionId": session, "isSidechain": True, **agent_record}
    sidechain.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def store_files(root: Path) -> dict[Path, bytes]:
    """Every file under ``root`` (a link is not followed), gzip files decompressed."""
    found: dict[Path, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found[path] = gzip.decompress(data) if path.suffix == ".gz" else data
    return found


def store_text(root: Path) -> str:
    """All of ``store_files(root)`` as one text, to search for anything planted."""
    return "\n".join(data.decode("utf-8", "replace") for data in store_files(root).values())
