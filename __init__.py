"""memkeeper: long-term memory for Claude Code.

The installed package is one namespace: ``memkeeper.core`` (the store library),
``memkeeper.cli`` (the ``memkeeper`` command), ``memkeeper.plugin`` (the Claude Code
plugin and its hook entry points) and ``memkeeper.tui`` (``memkeeper-tui``).
Nothing is imported here: the hook path must stay lean.
"""

from __future__ import annotations

__version__ = "0.1.0"
