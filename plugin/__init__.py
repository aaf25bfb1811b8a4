"""memkeeper.plugin: the Claude Code plugin (this folder is the plugin root) and its Python side.

The folder holds the plugin files Claude Code reads (``.claude-plugin/plugin.json``,
``hooks/hooks.json``, ``bin/``, ``commands/``, ``skills/``, ``agents/``) next to the
modules that serve them: :mod:`memkeeper.plugin.hook` (``memkeeper hook EVENT``, the
lean hook dispatcher) and :mod:`memkeeper.plugin.install` (``memkeeper install``).
Importing this package imports nothing: the hook path must stay lean.
"""
