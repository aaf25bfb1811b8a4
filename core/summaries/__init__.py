"""summaries: L3 ``memory_*.summary.json``: the model of a summary, its lenient fields, pending work
and generation.

May import: log, summarizers, capture, config, store, redaction, basics.
"""
