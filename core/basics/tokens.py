"""Token estimates and the carryover tail, exactly as the JS plugin computes them.

A token is ``ceil(utf8_bytes / 4)``. The tail walks lines backwards and keeps whole
lines while their running cost (each ``ceil(utf8(line + "\\n") / 4)``) stays within
the target; a trailing newline counts as an empty last line costing one token.
"""

from __future__ import annotations

BYTES_PER_TOKEN = 4
ROTATION_THRESHOLD_TOKENS = 23_750
CARRYOVER_TOKENS = 2_375


def tokens_for_bytes(n_bytes: int) -> int:
    return -(-n_bytes // BYTES_PER_TOKEN)


def estimate_tokens(text: str | bytes) -> int:
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return tokens_for_bytes(len(data))


def extract_tail_by_tokens(content: str, target_tokens: int) -> str:
    """The longest line-aligned tail of ``content`` costing at most ``target_tokens``."""
    data = content.encode("utf-8", "surrogatepass")
    return extract_tail_bytes(data, target_tokens).decode("utf-8", "surrogatepass")


def extract_tail_bytes(content: bytes, target_tokens: int) -> bytes:
    """:func:`extract_tail_by_tokens` on raw bytes, so a non-UTF-8 file rotates losslessly.

    Costs are counted in bytes either way, so for UTF-8 text both give the same tail.
    """
    lines = content.split(b"\n")
    total = 0
    start = len(lines)
    for i in range(len(lines) - 1, -1, -1):
        cost = tokens_for_bytes(len(lines[i]) + 1)
        if total + cost > target_tokens:
            break
        total += cost
        start = i
    return b"\n".join(lines[start:])
