"""basics: the stdlib-only pieces every floor of core uses: value records, the hook path's JSON codec,
timestamps, token estimates, and the platform module (every OS branch lives there).

Owns nothing on disk. May import: the standard library only.
"""
