"""capture: Claude Code transcripts into L1 (``sessions/*.l1.jsonl``): parsing, refining, counting,
titles, the live sessions the hooks saw, export, the projects that have a store.

May import: config, store, redaction, basics.
"""
