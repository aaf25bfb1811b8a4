"""Modal dialogs of memkeeper-tui: confirm, migrate, projects, sections, help."""
