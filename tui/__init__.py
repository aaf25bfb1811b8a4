"""memkeeper-tui: a Textual app over the store's tiers (L2 memory, L3 summaries, L1 sessions)."""
