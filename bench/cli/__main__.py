"""``python -m bench.cli``: the same as ``sgbench``."""

import sys

from bench.cli import main

sys.exit(main())
