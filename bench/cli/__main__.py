"""``python -m sgbench.bench.cli``: the same as ``sgbench``."""

import sys

from sgbench.bench.cli import main

sys.exit(main())
