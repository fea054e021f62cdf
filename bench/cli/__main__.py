"""``python -m sgbench.bench.cli``: the same as ``sgbench``."""

from sgbench.bench.cli import console

console()
