r"""Named suites: fixed lists of sweeps that ``sgbench run --suite NAME`` runs and stores.

An :class:`Entry` is one sampler on one target over a grid of hyperparameters (a step-size
grid), with the :class:`sgbench.bench.running.config.RunConfig` (chains, steps, seed, thinning, burn-in, dtype)
shared by the grid; a sweep runs the whole grid of an entry in one compiled call.

``quick`` (the default of ``sgbench run``): SGLD on the ICG of appendix C of the SMILE paper (dim
10, condition number 10^4, isotropic gradient noise of variance 256), 10 float32 chains of 10^6
steps at 9 step sizes log-spaced from 1e-4 to 1e-2 plus 0.025, beyond SGLD's stability limit
h < 2/100 (largest precision 100), to show a diverged run being reported. The slowest mode
(variance 100) relaxes in about 1/(0.01 h) steps, so the small step sizes are still biased by
the start at the mean after 10^6 steps and the large ones by discretisation: b^2 is U-shaped in
h (its run time: docs/running.md). ``tiny``: the same with 2 chains, 2 step sizes
and 2000 steps, for tests (seconds).

``langevin``: every Langevin-family sampler on the same ICG and noise, 10 float32 chains of 10^6
steps (10^5 of them burn-in) at 5 step sizes each, so the report gives each sampler's b^2 at the
best step size of a small grid. pSGLD's grid is 10x larger: its RMSprop preconditioner
:math:`1/\sqrt{\nu} \approx 1/|g|` shrinks the effective step by about the gradient's scale
(here ~20). cSGLD runs cycles of 10^4 steps with no exploration stage.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sgbench.base.registry import UnknownNameError
from sgbench.bench.running.config import RunConfig


@dataclasses.dataclass(frozen=True)
class Entry:
    """``sampler`` on ``target`` (built with ``target_params``) at every hyperparameter dict of
    ``params_grid``, each run with ``config``."""

    sampler: str
    target: str
    target_params: dict
    params_grid: tuple[dict, ...]
    config: RunConfig

    def __post_init__(self):
        object.__setattr__(self, "params_grid", tuple(dict(p) for p in self.params_grid))
        if not self.params_grid:
            raise ValueError("params_grid must hold at least one parameter setting")
        if not isinstance(self.config, RunConfig):
            raise TypeError(f"config must be a RunConfig, got {type(self.config).__name__}")


def step_size_grid(step_sizes, **other_params) -> tuple[dict, ...]:
    """One params dict per step size, each with ``other_params``."""
    return tuple({"step_size": float(h), **other_params} for h in step_sizes)


# SMILE appendix C: ICG in 10 dimensions with isotropic gradient noise of variance 256.
_ICG_NOISY = {"dim": 10, "noise": "isotropic", "noise_variance": 256.0}

_LANGEVIN_GRID = np.array([1e-4, 3e-4, 1e-3, 3e-3, 1e-2])

_SUITES: dict[str, tuple[Entry, ...]] = {
    "quick": (
        Entry("sgld", "icg", _ICG_NOISY,
              step_size_grid([*np.logspace(-4, -2, 9), 0.025]),
              RunConfig(num_chains=10, num_steps=1_000_000, seed=0, dtype="float32", num_checkpoints=20)),
    ),
    "langevin": tuple(
        Entry(name, "icg", _ICG_NOISY, step_size_grid(grid, **extra),
              RunConfig(num_chains=10, num_steps=1_000_000, num_burnin=100_000, seed=0, dtype="float32",
                        num_checkpoints=20))
        for name, grid, extra in (
            ("sgld", _LANGEVIN_GRID, {}),
            ("psgld", 10 * _LANGEVIN_GRID, {}),
            ("sgld_cv", _LANGEVIN_GRID, {}),
            ("csgld", _LANGEVIN_GRID, {"schedule": {"kind": "cyclical", "cycle_length": 10_000}}),
            ("clipped_sgld", _LANGEVIN_GRID, {}),
            ("sglrw", _LANGEVIN_GRID, {}),
        )
    ),
    "tiny": (
        Entry("sgld", "icg", _ICG_NOISY,
              step_size_grid([1e-3, 1e-2]),
              RunConfig(num_chains=2, num_steps=2000, seed=0, dtype="float32")),
    ),
}


def names() -> list[str]:
    """Names of the suites, sorted."""
    return sorted(_SUITES)


def get(name: str) -> list[Entry]:
    """The entries of suite ``name`` (UnknownNameError, a ValueError, lists the known suites)."""
    if name not in _SUITES:
        raise UnknownNameError(f"unknown suite {name!r}; known suites: {', '.join(names())}")
    return list(_SUITES[name])
