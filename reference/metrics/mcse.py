r"""Monte Carlo standard errors of the moment estimates :math:`\hat E[x_i]` and
:math:`\hat E[x_i^2]`, the standard errors of the z-tests of moments against a truth:

.. math:: \mathrm{MCSE}(\hat E[f]) = \operatorname{sd}(f) / \sqrt{\mathrm{ESS}_{mean}(f)},

for :math:`f(x) = x_i` and :math:`f(x) = x_i^2`, over all chains together: :math:`\operatorname{sd}`
the (ddof = 1) standard deviation of the draws pooled over chains, :math:`\mathrm{ESS}_{mean}` the
multi-chain split-chain ESS of the untransformed values of Vehtari, Gelman, Simpson, Carpenter &
Buerkner (2021), "Rank-normalization, folding, and localization", Bayesian Analysis 16(2).
Computed by ArviZ (``az.mcse(method="mean")``); NaN for a constant coordinate.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sgbench.reference.metrics import register
from sgbench.reference.metrics._arviz import per_dimension
from sgbench.reference.metrics._chains import chain_draws

MIN_DRAWS = 4


class MomentMCSE(NamedTuple):
    """MCSE of the estimates of E[x] and of E[x^2], each (dim,)."""

    mean: np.ndarray
    second_moment: np.ndarray


@register("moment_mcse")
def moment_mcse(samples) -> MomentMCSE:
    """MCSE of E[x] and E[x^2] for each coordinate of ``samples`` (chains, draws, dim), with at
    least 4 finite draws per chain.

    Args:
        samples: draws, shape (chains, draws, dim), finite, at least 4 draws per chain.

    Returns:
        the MomentMCSE: ``mean`` and ``second_moment``, each float64 of shape (dim,) (NaN for a constant coordinate).

    Raises:
        ValueError: another shape, too few draws, or a non-finite value.
    """
    x = chain_draws(samples, "samples", min_draws=MIN_DRAWS)
    return MomentMCSE(per_dimension("mcse", x, method="mean"), per_dimension("mcse", x**2, method="mean"))
