"""Running things: drivers, sweeps, the results store, reports and the ``sgbench`` CLI."""

from bench.running.config import RunConfig
from bench.running.result import RunResult
from bench.running.run import run, run_grid

__all__ = ["RunConfig", "RunResult", "run", "run_grid"]
