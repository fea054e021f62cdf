"""ArviZ's diagnostics (``az.ess``, ``az.rhat``, ``az.mcse``) of every coordinate of draws
(chains, draws, dim); ArviZ reads an array (chain, draw, ...) as one variable named "x".

ArviZ is imported here alone, when a diagnostic is first computed, not when the suite is imported: ArviZ 0.23
prints a FutureWarning about its own coming refactor once a day at import (and stamps the day in the user's cache
directory), a message to ArviZ's users that the suite's users, who never call ArviZ, were shown as the first lines
of a command's output."""

from __future__ import annotations

import warnings

import numpy as np

DIAGNOSTICS = ("ess", "rhat", "mcse")


def arviz():
    """ArviZ, imported with its refactor announcement silenced.

    Returns:
        the ``arviz`` module.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing a major refactor", category=FutureWarning)
        import arviz as az
    return az


def per_dimension(diagnostic: str, x: np.ndarray, **kwargs) -> np.ndarray:
    """ArviZ's ``diagnostic`` of each coordinate of ``x`` (chains, draws, dim): (dim,). ArviZ's
    warning that more chains than draws suggests a transposed array is silenced here, where the layout is
    known.

    Args:
        diagnostic: ``"ess"``, ``"rhat"`` or ``"mcse"`` (``az.ess``, ``az.rhat``, ``az.mcse``).
        x: draws, shape (chains, draws, dim).
        **kwargs: passed on to the diagnostic (e.g. ``method="bulk"``).

    Returns:
        float64 array of shape (dim,): the diagnostic of each coordinate.
    """
    if diagnostic not in DIAGNOSTICS:
        raise ValueError(f"diagnostic must be one of {', '.join(DIAGNOSTICS)}, got {diagnostic!r}")
    az = arviz()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="More chains", category=UserWarning)
        dataset = az.convert_to_dataset(x)
    return np.asarray(getattr(az, diagnostic)(dataset, **kwargs)["x"].values, dtype=np.float64)
