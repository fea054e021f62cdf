"""Running things: drivers, sweeps, the results store, reports and the ``sgbench`` CLI."""

from bench.config import RunConfig
from bench.result import RunResult
from bench.run import run, run_grid

__all__ = ["RunConfig", "RunResult", "run", "run_grid"]
