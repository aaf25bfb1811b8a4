"""config: the one configuration reader (stdlib only, the hook path uses it) and the validated
pydantic model over it (project -> global -> defaults).

May import: store, redaction, basics.
"""
