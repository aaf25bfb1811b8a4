"""redaction: private spans and secret shapes removed before anything reaches the store.

Owns the secret rules. May import: basics.
"""
