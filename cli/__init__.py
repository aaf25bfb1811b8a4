"""memkeeper.cli: the ``memkeeper`` command, a thin argparse layer over core.

One module per command group registers its subcommands; handlers import what they
need when they run, so ``memkeeper check`` and ``memkeeper hook`` stay fast.
"""
