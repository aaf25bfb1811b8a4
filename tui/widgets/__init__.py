"""Widgets of memkeeper-tui: the tier tree, the document view, the status line."""
