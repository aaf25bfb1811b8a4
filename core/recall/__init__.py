"""recall: per-prompt recall: the resident lookup that answers a prompt from earlier memory, and
the hook's side that asks it.

May import: search and every floor below it; not context.
"""
