"""sharing: team memory through git: ``memkeeper share``, the pre-commit check of what is staged, and
the three-way merge driver of the store's files.

May import: config, store, redaction, basics.
"""
