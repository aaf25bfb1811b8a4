"""What SessionStart put into each session's context, so a resume adds only what changed.

Claude Code keeps the earlier ``additionalContext`` of a session when it is resumed
(``--resume`` / ``--continue``: SessionStart with ``source: "resume"``), so injecting the
whole memory again only repeats ~10k characters each time. Each injection is recorded in
``.state/injected.json`` as hashes (one per section, one per ``##`` block of the memory
tail); on a resume only the sections and memory blocks not yet injected in that session
are sent, after a one-line note. A session with no record (started before the plugin, or
its record dropped) gets the whole memory as before. Stdlib only (SessionStart runs it).
"""

from __future__ import annotations

import json
import time
import zlib
from typing import TYPE_CHECKING

from ..store.atomic import atomic_write_json
from ..store.lock import LockTimeout, file_lock

if TYPE_CHECKING:
    from ..store.paths import StorePaths

FILE_NAME = "injected.json"
MAX_SESSIONS = 50
#: The key of the memory tail among the parts: it is compared block by block.
MEMORY = "memory"
Parts = list[tuple[str, str]]


def _digest(text: str) -> str:
    """A short fingerprint of a part (which parts were injected): zlib's checksums and the length.

    Not hashlib: loading OpenSSL costs SessionStart about 3.5 ms, and nothing here needs a
    cryptographic hash (a collision would only leave one changed part out of a resume).
    """
    data = text.strip().encode("utf-8", "replace")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def _blocks(memory: str) -> tuple[str, list[str]]:
    """(title line, ``##`` blocks) of the memory tail section."""
    title, _, body = memory.partition("\n")
    blocks: list[str] = []
    for line in body.split("\n"):
        if line.startswith("## ") or not blocks:
            blocks.append(line)
        else:
            blocks[-1] += "\n" + line
    return title, [b for b in blocks if b.strip()]


def digests(parts: Parts) -> set[str]:
    found: set[str] = set()
    for key, text in parts:
        if key == MEMORY:
            found.update(f"{MEMORY}:{_digest(b)}" for b in _blocks(text)[1])
        else:
            found.add(f"{key}:{_digest(text)}")
    return found


def _read(paths: StorePaths) -> dict[str, dict[str, object]]:
    try:
        data = json.loads((paths.state / FILE_NAME).read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    sessions = data.get("sessions") if isinstance(data, dict) else None
    return {k: v for k, v in sessions.items() if isinstance(v, dict)} if isinstance(sessions, dict) else {}


def injected(paths: StorePaths, session_id: str) -> set[str] | None:
    """The hashes injected into ``session_id`` so far; None when nothing is recorded."""
    entry = _read(paths).get(session_id)
    hashes = entry.get("hashes") if entry else None
    return {h for h in hashes if isinstance(h, str)} if isinstance(hashes, list) else None


def remember(paths: StorePaths, session_id: str, hashes: set[str]) -> None:
    """Record ``hashes`` as what ``session_id``'s context now holds (skipped if the lock stays held)."""
    try:
        with file_lock(paths.state / "injected.lock", timeout=1.0):
            sessions = _read(paths)
            sessions[session_id] = {"at": time.time(), "hashes": sorted(hashes)}
            newest = sorted(sessions, key=lambda k: float(sessions[k].get("at") or 0), reverse=True)  # type: ignore[arg-type]
            atomic_write_json(  # atomic, not fsynced: losing it to a power cut repeats one start context
                paths.state / FILE_NAME,
                {"sessions": {k: sessions[k] for k in newest[:MAX_SESSIONS]}},
                durable=False,
                redact=False,  # checksums and times only: scanning 50 sessions' 1,000 of them cost ~3 ms
            )
    except (LockTimeout, OSError):
        pass  # the next resume of this session injects everything again: harmless


def changed_parts(parts: Parts, seen: set[str]) -> Parts:
    """The parts not injected yet: whole sections, and only the new blocks of the memory tail."""
    out: Parts = []
    for key, text in parts:
        if key == MEMORY:
            title, blocks = _blocks(text)
            fresh = [b for b in blocks if f"{MEMORY}:{_digest(b)}" not in seen]
            if fresh:
                out.append((key, "\n".join([title, *fresh])))
        elif f"{key}:{_digest(text)}" not in seen:
            out.append((key, text))
    return out


def resume_note(parts: Parts, changed: Parts) -> str:
    kept = len(digests(parts)) - len(digests(changed))
    if not changed:
        return f"memkeeper: session resumed; the memory injected earlier in it is unchanged ({kept} part(s) not repeated)."
    return (
        f"memkeeper: session resumed; only what changed since this session's last injection follows "
        f"({kept} unchanged part(s) not repeated)."
    )
