"""ArviZ's diagnostics (``az.ess``, ``az.rhat``, ``az.mcse``) of every coordinate of draws
(chains, draws, dim); ArviZ reads an array (chain, draw, ...) as one variable named "x"."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np


def per_dimension(function, x: np.ndarray, **kwargs) -> np.ndarray:
    """``function(draws, **kwargs)`` for each coordinate of ``x`` (chains, draws, dim): (dim,). ArviZ's
    warning that more chains than draws suggests a transposed array is silenced here, where the layout is
    known.

    Args:
        function: an ArviZ diagnostic taking a dataset, e.g. ``az.ess``, ``az.rhat``, ``az.mcse``.
        x: draws, shape (chains, draws, dim).
        **kwargs: passed on to ``function`` (e.g. ``method="bulk"``).

    Returns:
        float64 array of shape (dim,): the diagnostic of each coordinate.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="More chains", category=UserWarning)
        dataset = az.convert_to_dataset(x)
    return np.asarray(function(dataset, **kwargs)["x"].values, dtype=np.float64)
