"""The gate in several dtypes of the JAX driver: does a cell still sample its target in float32 (issue 46)?

:func:`gate_by_dtype` runs the quick gate's cells once per dtype (``run_gate(..., dtype=...)``) and returns one
row per dtype. It runs without baselines: the stored baselines are float64 runs, so a float32 run would be flagged
for moves that are the dtype's; the truth checks alone say whether a cell samples its target. It runs the cells of
the JAX driver only (the NumPy reference's cells run in float64 on the CPU whatever the dtype or device);
``quick`` keeps SGLD's. A float32 failure is a finding, reported in the row, not an error.
"""

from __future__ import annotations

import pandas as pd

from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.gate.runner import run_gate

DTYPES = ("float32", "float64")
QUICK_SAMPLERS = ("sgld",)
SUITE = "quick"


def jax_cells(quick: bool):
    """The cells run: those of the JAX driver, SGLD's alone when ``quick`` (a predicate for ``run_gate``'s ``only``)."""
    if quick:
        return lambda cell: cell.backend == "jax" and cell.sampler in QUICK_SAMPLERS
    return lambda cell: cell.backend == "jax"


def gate_by_dtype(dtypes=DTYPES, quick: bool = False, progress=print, on_row=None) -> pd.DataFrame:
    """One row per dtype: the gate's outcome, its cells, those that failed or were inconclusive, its seconds.

    Args:
        dtypes: the JAX driver's dtypes.
        quick: SGLD's cells alone.
        progress: told one line per cell.
        on_row: called with the table so far after each dtype (the CLI writes it).

    Returns:
        the table.
    """
    rows = []
    for dtype in dtypes:
        progress(f"gate in {dtype}")
        outcome = run_gate(SUITE, use_baseline=False, progress=progress, dtype=dtype, only=jax_cells(quick))
        cells = outcome.cells
        rows.append({"dtype": dtype, "outcome": outcome.outcome.name, "passed": outcome.outcome == Outcome.PASSED,
                     "cells": len(cells), "failed": ", ".join(cells.loc[cells["outcome"] == "FAILED", "cell"]),
                     "inconclusive": ", ".join(cells.loc[cells["outcome"] == "INCONCLUSIVE", "cell"]),
                     "seconds": outcome.seconds})
        if on_row is not None:
            on_row(pd.DataFrame(rows))
    return pd.DataFrame(rows)
