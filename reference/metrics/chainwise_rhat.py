r"""Chainwise split :math:`\widehat{cR}` with split factor 4, the local-mixing diagnostic of MILE
(MILE paper, section 5 "Diagnostics" and appendix A.3: "the chainwise
split metric :math:`\widehat{cR}` with a split factor of 4"), which takes its definition from
Sommer et al. (2024), "Connecting the dots: is mode-connectedness the key to feasible sample-based
inference in Bayesian neural networks?", ICML, and their published code.

For **each chain separately** and each dimension: keep the first :math:`Kn` of its :math:`N`
draws, :math:`n = \lfloor N/K \rfloor` (the last :math:`N - Kn` are dropped), rank-normalise
them within the chain, :math:`z = \Phi^{-1}((r - 3/8)/(Kn + 1/4))` with :math:`r` the average
ranks (Vehtari et al. 2021), cut them into :math:`K` consecutive sub-chains of :math:`n` draws
and apply the R-hat formula (``classic_rhat.potential_scale_reduction``) to the sub-chains:

.. math:: \widehat{cR}_c = \sqrt{\Big(\frac{n-1}{n} W_c + \frac{B_c}{n}\Big) \Big/ W_c},

:math:`W_c` the mean of the sub-chains' unbiased variances and :math:`B_c/n` the unbiased variance
of their means. MILE reports averages over chains; this returns every chain's value.
"""

from __future__ import annotations

import numpy as np
import scipy.stats

from sgbench.base.arguments import integer_at_least
from sgbench.reference.metrics import register
from sgbench.reference.metrics._chains import chain_draws
from sgbench.reference.metrics.classic_rhat import potential_scale_reduction


@register("chainwise_split_rhat")
def chainwise_split_rhat(samples, split_factor: int = 4, rank_normalize: bool = True) -> np.ndarray:
    """cR-hat (chains, dim) of ``samples`` (chains, draws, dim), each chain cut into ``split_factor``
    sub-chains of at least 2 draws; ``rank_normalize=False`` skips the rank normalisation.

    Args:
        samples: draws, shape (chains, draws, dim), all finite, at least 2 * ``split_factor`` draws per chain.
        split_factor: K, the number of sub-chains per chain, >= 2.
        rank_normalize: whether to rank-normalise each chain's draws first.

    Returns:
        float64 array of shape (chains, dim).

    Raises:
        ValueError: ``split_factor`` < 2, too few draws, or as :func:`~sgbench.reference.metrics._chains.chain_draws`.
    """
    k = integer_at_least("split_factor", split_factor, 2)
    x = chain_draws(samples, "samples")
    if x.shape[1] < 2 * k:
        raise ValueError(f"samples must hold at least 2 * split_factor = {2 * k} draws per chain (sub-chains "
                         f"of >= 2 draws), got {x.shape[1]}")
    n = x.shape[1] // k
    x = x[:, : k * n]
    if rank_normalize:
        ranks = scipy.stats.rankdata(x, method="average", axis=1)
        x = scipy.stats.norm.ppf((ranks - 0.375) / (k * n + 0.25))
    sub = x.reshape(x.shape[0], k, n, x.shape[2])
    means, variances = sub.mean(axis=2), sub.var(axis=2, ddof=1)
    return potential_scale_reduction(means.swapaxes(0, 1), variances.swapaxes(0, 1), n)
