r"""Classic (non-split, not rank-normalised) potential scale reduction factor of Gelman & Rubin
(1992), "Inference from iterative simulation using multiple sequences", Statistical Science 7(4),
in the form of Gelman et al., Bayesian Data Analysis (3rd ed., section 11.4), computed from
streamed per-chain moments, so a long run needs no stored draws.

For :math:`M` chains of :math:`n` draws with means :math:`\bar x_c` and unbiased variances
:math:`s_c^2` (per dimension):

.. math:: W = \frac1M\sum_c s_c^2, \quad \frac{B}{n} = \frac{1}{M-1}\sum_c (\bar x_c - \bar x)^2,
          \quad \hat R = \sqrt{\Big(\frac{n-1}{n} W + \frac{B}{n}\Big) \Big/ W}.

It does not split chains, so a trend within chains goes unseen, and it is not robust to heavy
tails; the rank-normalised split version (``split_rhat``) needs the draws.
"""

from __future__ import annotations

import numpy as np

from sgbench.reference.metrics import register
from sgbench.reference.metrics._chains import chain_moments
from sgbench.reference.metrics.moments import Moments


def potential_scale_reduction(chain_means, chain_variances, draws_per_chain: int) -> np.ndarray:
    """R-hat of the formula above from chain means and unbiased variances (chains, ...) of chains
    of ``draws_per_chain`` draws each: (...). inf where every chain is constant but their means
    differ, NaN where all draws are equal.

    Args:
        chain_means: each chain's mean, shape (chains, ...), chains >= 2.
        chain_variances: each chain's unbiased variance, shape (chains, ...).
        draws_per_chain: n, the draws of each chain.

    Returns:
        R-hat, shape (...).
    """
    n = draws_per_chain
    within = np.mean(chain_variances, axis=0)
    between_over_n = np.var(chain_means, axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(((n - 1) / n * within + between_over_n) / within)


@register("gelman_rubin_from_moments")
def gelman_rubin_from_moments(moments: Moments) -> np.ndarray:
    """Classic R-hat (dim,) from per-chain ``moments`` (count (chains,), mean (chains, dim), ...):
    at least 2 chains of equal counts >= 2 (leave diverged chains out first).

    Args:
        moments: per-chain Moments, at least 2 chains, each counting the same number (>= 2) of draws.

    Returns:
        float64 array of shape (dim,).

    Raises:
        TypeError: ``moments`` is not a Moments.
        ValueError: fewer than 2 chains, a count < 2, unequal counts, or a value that is not finite.
    """
    m = chain_moments(moments, "moments", min_chains=2, min_count=2)
    if np.any(m.count != m.count[0]):
        raise ValueError(f"moments must count the same number of draws in every chain, got counts "
                         f"{m.count[:10].tolist()}{' ...' if m.count.size > 10 else ''}")
    n = m.count[0]
    return potential_scale_reduction(m.mean, m.m2 / (n - 1), n)
