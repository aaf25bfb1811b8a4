"""Values a setting refuses, each with words its one-line refusal holds: one table for the CLI's
``config set`` and the TUI's settings screen, which share the config schema that refuses them."""

from __future__ import annotations

#: (dotted key, value as typed, words of the refusal), for keys both the CLI and the screen type into.
REFUSED_VALUES = [
    ("memory.flushEvery", "0", "must be above 0"),
    ("memory.retentionDays", "soon", "must be a number"),
    ("recall.minConfidence", "1.5", "between 0 and 1"),
    ("budget.dailyCalls", "-5", "at least 0"),
]
