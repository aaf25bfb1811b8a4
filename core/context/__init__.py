"""context: the memory Claude gets at session start, what each session was already given, and
whether memory is being kept at all.

May import: search and every floor below it; not recall.
"""
