"""Full screens of memkeeper-tui: browse, search, pending summaries, trash."""
