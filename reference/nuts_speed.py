"""Bulk ESS per second of NumPyro and BlackJAX NUTS on one target, side by side (issue 5's figure).

ESS per second = bulk ESS (``sgbench.reference.metrics.ess``, all chains) / wall time of the whole run
(compilation, warmup and sampling), reported as the minimum and the median over coordinates.

    sgbench nuts-speed [--draws N] [--out reports/latest/nuts_ess_per_second.png]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sgbench.base.figures import subplots
from sgbench.reference.build import backends
from sgbench.reference.metrics import ess


def bulk_ess_per_second(target, num_chains=4, num_warmup=1000, num_draws=5000, seed=0) -> dict:
    """Backend name -> {"min", "median", "seconds"}: bulk ESS per second of wall time of each backend."""
    rows = {}
    for name, run in backends().items():
        result = run(target, num_chains=num_chains, num_warmup=num_warmup, num_draws=num_draws, seed=seed)
        values = ess(result.draws, method="bulk") / result.seconds
        rows[name] = {"min": float(np.min(values)), "median": float(np.median(values)), "seconds": result.seconds}
    return rows


def plot(rows: dict, title: str, path: Path) -> Path:
    """A bar chart of the minimum and median bulk ESS per second of each backend, saved to ``path`` (drawn without
    pyplot: :mod:`sgbench.base.figures`).

    Args:
        rows: :func:`bulk_ess_per_second`'s result.
        title: the chart's title.
        path: the image file to write (its folder is created).

    Returns:
        ``path``.
    """
    names = list(rows)
    positions = np.arange(len(names))
    figure, axes = subplots(figsize=(5, 3.5))
    for offset, statistic in ((-0.2, "min"), (0.2, "median")):
        axes.bar(positions + offset, [rows[n][statistic] for n in names], width=0.4,
                 label=f"{statistic} over coordinates")
    axes.set_xticks(positions, names)
    axes.set_ylabel("bulk ESS per second")
    axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    return path
