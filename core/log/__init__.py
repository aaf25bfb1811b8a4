"""log: L2 ``memory.md``: the hook counters and activity that decide a flush, the flush itself (L1
entries into bullets), rotation into ``memory_YYYYMMDD_HHMMSS.md`` archives, legacy migration.

May import: summarizers, capture, config, store, redaction, basics.
"""
