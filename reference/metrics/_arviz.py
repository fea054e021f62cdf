"""ArviZ's diagnostics (``az.ess``, ``az.rhat``, ``az.mcse``) of every coordinate of draws
(chains, draws, dim); ArviZ reads an array (chain, draw, ...) as one variable named "x"."""

from __future__ import annotations

import arviz as az
import numpy as np


def per_dimension(function, x: np.ndarray, **kwargs) -> np.ndarray:
    """``function(draws, **kwargs)`` for each coordinate of ``x`` (chains, draws, dim): (dim,)."""
    return np.asarray(function(az.convert_to_dataset(x), **kwargs)["x"].values, dtype=np.float64)
