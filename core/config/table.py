"""Every configuration key for the hook path, generated from :mod:`memkeeper.core.config.model`.

Do not edit: ``python -m memkeeper.core.config.model`` writes this file from the pydantic models,
and a test fails when it is out of date. ``FIELDS`` maps a dotted key to (kind, default,
bounds): kind is "bool", "int", "float", "str", "argv" (a list of strings, or null) or a
tuple of the allowed strings; bounds are ("gt" | "ge" | "le", number) pairs. Stdlib only.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[object, object, tuple[tuple[str, float], ...]]] = {
    "saveInterval": ("int", 25, (("gt", 0),)),
    "keepRaw": ("bool", False, ()),
    "quietStop": ("bool", True, ()),
    "rulesInjectionFrequency": ("int", 1, (("gt", 0),)),
    "memoryRotation.enabled": ("bool", True, ()),
    "memoryRotation.thresholdTokens": ("int", None, (("gt", 0),)),
    "memoryRotation.carryoverTokens": ("int", None, (("gt", 0),)),
    "memory.enabled": ("bool", True, ()),
    "memory.flushEvery": ("int", 10, (("gt", 0),)),
    "memory.retentionDays": ("int", 30, (("gt", 0),)),
    "summarizer.backend": (("auto", "claude", "anthropic", "command", "extractive"), "auto", ()),
    "summarizer.model": ("str", "haiku", ()),
    "summarizer.command": ("argv", None, ()),
    "summarizer.timeoutSeconds": ("float", 120.0, (("gt", 0),)),
    "summarizer.minCallChars": ("int", 1500, (("ge", 0),)),
    "summarizer.apiKeyEnv": ("str", "ANTHROPIC_API_KEY", ()),
    "budget.dailyCalls": ("int", 50, (("ge", 0),)),
    "budget.dailyTokens": ("int", 500000, (("ge", 0),)),
    "recall.enabled": ("bool", True, ()),
    "recall.minConfidence": ("float", 0.6, (("ge", 0), ("le", 1))),
}
