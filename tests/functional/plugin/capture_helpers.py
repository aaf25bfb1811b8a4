"""Helpers shared by the capture/plugin tests (a uniquely named module, imported by name)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memkeeper.core.store import StorePaths

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "capture_plugin"
TRANSCRIPT_43B = (
    REPO / "tests" / "fixtures" / "transcripts" / "cc-2.1.197" / "43b864ff-0cc4-405d-97b6-b0657afa9839.jsonl"
)
SESSION_43B = "43b864ff-0cc4-405d-97b6-b0657afa9839"


def load_hook_inputs() -> list[dict[str, Any]]:
    lines = (FIXTURES / "hook-inputs.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def payload_for(event: str, project: Path, **changes: Any) -> dict[str, Any]:
    """The first real payload of ``event``, pointed at ``project``."""
    for item in load_hook_inputs():
        if item["event"] == event:
            payload = dict(item["stdin"])
            payload["cwd"] = str(project)
            payload.update(changes)
            return payload
    raise KeyError(event)


def write_config(paths: StorePaths, config: dict[str, Any]) -> None:
    paths.root.mkdir(parents=True, exist_ok=True)
    paths.config.write_text(json.dumps(config), "utf-8")


def write_l1(paths: StorePaths, name: str, entries: list[dict[str, Any]]) -> Path:
    """An L1 file with ``entries`` (appended if it exists)."""
    paths.sessions.mkdir(parents=True, exist_ok=True)
    path = paths.sessions / name
    with open(path, "a", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path


#: The real Claude Code CLIs the end-to-end tests run: pinned, and the newest tested.
CLIS = {"pinned": (".e2e", "2.1.197"), "newest": (".e2e-newest", "2.1.330")}
