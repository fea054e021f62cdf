"""What one NUTS run hands back, whichever library ran it (``sgbench.reference.nuts``,
``sgbench.reference.blackjax_nuts``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class NutsResult(NamedTuple):
    """Post-warmup draws (chains, draws, dim), divergence flags and Hamiltonian energies
    (chains, draws), sampling wall time in seconds (warmup and compilation included), the backend's
    name and its library version."""

    draws: np.ndarray
    divergent: np.ndarray
    energy: np.ndarray
    seconds: float
    backend: str
    version: str


def initial_positions(target, num_chains: int, seed: int, jitter: float = 0.1) -> np.ndarray:
    """``target.initial_position()`` plus independent N(0, jitter^2) noise per chain: (num_chains, dim),
    so that R-hat compares chains started apart; for a target whose ``reference_start`` is
    ``"deep_ensemble"`` (``bnn``), the members of a deep ensemble fitted with ``seed``
    (``sgbench.samplers._deep_ensemble``), one per chain."""
    if getattr(target, "reference_start", None) == "deep_ensemble":
        from sgbench.samplers._deep_ensemble import deep_ensemble

        return np.asarray(deep_ensemble(target, num_chains, seed).positions, dtype=np.float64)
    rng = np.random.default_rng([seed, 1])
    start = np.asarray(target.initial_position(), dtype=np.float64)
    return start + jitter * rng.standard_normal((num_chains, start.shape[0]))
