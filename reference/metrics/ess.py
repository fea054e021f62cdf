r"""Effective sample size, bulk and tail, of Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021),
"Rank-normalization, folding, and localization: an improved R-hat for assessing convergence of
MCMC", Bayesian Analysis 16(2), as the MILE paper (section 5, appendix
A.3) reports it; computed by ArviZ (``az.ess``).

Per dimension, over all chains together (the chains enter the multi-chain autocorrelation
estimate; the draws are not concatenated). Bulk: ESS of the rank-normalised split chains
(each chain halved), :math:`z = \Phi^{-1}((r - 3/8)/(S + 1/4))` of the pooled ranks :math:`r` of
all :math:`S` draws. Tail: the smaller of the ESS of the indicators :math:`1\{x \le q_{0.05}\}` and
:math:`1\{x \le q_{0.95}\}`. In both, :math:`S/\hat\tau` with Geyer's initial monotone sequence
estimate of the integrated autocorrelation time :math:`\hat\tau`. NaN for a constant coordinate.
"""

from __future__ import annotations

import numpy as np

from sgbench.base.arguments import one_of
from sgbench.reference.metrics import register
from sgbench.reference.metrics._arviz import per_dimension
from sgbench.reference.metrics._chains import chain_draws

METHODS = ("bulk", "tail")
MIN_DRAWS = 4


@register("ess")
def ess(samples, method: str = "bulk") -> np.ndarray:
    """Bulk or tail ESS (``method``) of each coordinate of ``samples`` (chains, draws, dim), which
    must be finite with at least 4 draws per chain: (dim,).

    Args:
        samples: draws, shape (chains, draws, dim), finite, at least 4 draws per chain.
        method: ``"bulk"`` or ``"tail"``.

    Returns:
        float64 array of shape (dim,) (NaN for a constant coordinate).

    Raises:
        ValueError: an unknown ``method``, or invalid draws (a shape, too few draws, a non-finite value).
    """
    one_of("method", method, set(METHODS))
    x = chain_draws(samples, "samples", min_draws=MIN_DRAWS)
    return per_dimension("ess", x, method=method)
