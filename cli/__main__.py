from __future__ import annotations

from memkeeper.cli.main import run

run()
