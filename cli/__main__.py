from __future__ import annotations

import sys

from memkeeper.cli.main import main

sys.exit(main())
