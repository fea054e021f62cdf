"""Running things: drivers, sweeps, the results store, reports and the ``sgbench`` CLI."""

import importlib

# Imported on first use (PEP 562), so that `sgbench --help` does not load JAX.
_LAZY = {"RunConfig": "bench.running.config", "RunResult": "bench.running.result", "run": "bench.running.run",
         "run_grid": "bench.running.run"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'bench' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)


__all__ = ["RunConfig", "RunResult", "run", "run_grid"]
