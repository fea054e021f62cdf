r"""Rank-normalised split :math:`\hat R` of Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021),
"Rank-normalization, folding, and localization: an improved R-hat for assessing convergence of
MCMC", Bayesian Analysis 16(2), computed by ArviZ (``az.rhat(method="rank")``).

Per dimension, across chains: each of the :math:`M` chains is halved (2M chains of
:math:`n = \lfloor N/2 \rfloor` draws), the draws are rank-normalised over all chains, and
:math:`\hat R = \sqrt{\big(\tfrac{n-1}{n}W + B/n\big)/W}` with :math:`W` the mean within-chain
variance and :math:`B/n` the variance of the chain means; the result is the larger of this
"bulk" :math:`\hat R` and the same for the folded draws :math:`|x - \operatorname{median}(x)|`
("tail"). NaN for a constant coordinate. For the within-chain version of MILE see
``chainwise_split_rhat``; for streamed moments ``gelman_rubin_from_moments``.
"""

from __future__ import annotations

import numpy as np

from sgbench.reference.metrics import register
from sgbench.reference.metrics._arviz import per_dimension
from sgbench.reference.metrics._chains import chain_draws

MIN_CHAINS = 2
MIN_DRAWS = 4


@register("split_rhat")
def split_rhat(samples) -> np.ndarray:
    """Rank-normalised split R-hat (max of bulk and folded) of each coordinate of ``samples``
    (chains, draws, dim), with at least 2 chains of at least 4 finite draws: (dim,).

    Args:
        samples: draws, shape (chains, draws, dim), finite, at least 2 chains of at least 4 draws.

    Returns:
        float64 array of shape (dim,) (NaN for a constant coordinate).

    Raises:
        ValueError: another shape, too few chains or draws, or a non-finite value.
    """
    x = chain_draws(samples, "samples", min_chains=MIN_CHAINS, min_draws=MIN_DRAWS)
    return per_dimension("rhat", x, method="rank")
