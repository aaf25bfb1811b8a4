"""store: ``<project>/.claude/memory/`` itself: resolving the project, the boundary (no links, never
outside), paths and file names, the lock, atomic private writes, intent records, the change
journal, detached jobs, ``memory-index.json`` and the trash.

May import: redaction, basics.
"""
