r"""KSD goodness-of-fit test with a wild bootstrap (Liu, Lee & Jordan 2016, "A kernelized Stein
discrepancy for goodness-of-fit tests", ICML, section 4; Chwialkowski, Strathmann & Gretton 2016,
"A kernel test of goodness of fit", ICML, section 2.2).

For draws :math:`x_1..x_n` with scores :math:`s_i = \nabla\log p(x_i)` of the target and the IMQ
Stein kernel :math:`k_0` of ``sgbench.reference.metrics.ksd`` (matrix :math:`K_{ij} = k_0(x_i, x_j)`), the
statistic is :math:`n\,\widehat{\mathrm{KSD}}^2_V = \frac1n \sum_{i,j} K_{ij}`. Under :math:`H_0`: the draws
come from p, :math:`k_0` is a degenerate kernel (:math:`E_y k_0(x, y) = 0`) and the statistic converges
to an infinite weighted sum of chi-squares; the wild bootstrap reproduces that law with
independent Rademacher weights :math:`W_i = \pm 1`:

.. math:: B = \frac1n \sum_{i,j} W_i W_j K_{ij} = \frac1n W^\top K W,

and the p-value is :math:`(1 + \#\{b: B_b \ge n\widehat{\mathrm{KSD}}^2_V\}) / (1 + \text{num\_bootstrap})`,
so its resolution is :math:`1/(1 + \text{num\_bootstrap})`. Under an alternative the statistic grows like
:math:`n\,\mathrm{KSD}^2` while the bootstrap stays bounded: the test is consistent.

The draws must be (approximately) independent: Chwialkowski et al.'s bootstrap for a Markov
chain needs correlated weights, and with iid weights autocorrelated draws give p-values that are
too small. Thin MCMC output by its integrated autocorrelation time first (e.g. ``thin`` = the
largest over coordinates of n / ESS, ``sgbench.reference.metrics.ess``). Cost: O(n^2 d) for the kernel
matrix, O(num_bootstrap n^2) for the bootstrap (blocks of ``BOOTSTRAP_BLOCK`` weight vectors),
O(n^2) memory (n = 5000: 200 MB).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sgbench.base.arguments import integer_at_least, positive_finite
from sgbench.reference.metrics.ksd import check_beta, stein_kernel_matrix
from sgbench.reference.metrics.scores import check_samples_and_scores

BOOTSTRAP_BLOCK = 256


@dataclasses.dataclass(frozen=True)
class KSDTest:
    """``statistic`` n KSD^2_V, ``ksd_squared`` KSD^2_V, the bootstrap ``p_value`` (resolution
    1 / (1 + ``num_bootstrap``)), and the number of draws ``num_draws`` tested."""

    statistic: float
    ksd_squared: float
    p_value: float
    num_bootstrap: int
    num_draws: int


def ksd_test(samples, scores, *, num_bootstrap=1000, c=1.0, beta=-0.5, thin=1, rng=0) -> KSDTest:
    """Wild-bootstrap KSD test (module docstring) of approximately independent ``samples`` with
    target scores ``scores`` (same shape, (n, d) or (chains, n, d); chains are pooled), after
    keeping every ``thin``-th draw; IMQ kernel (``c`` > 0, ``beta`` in (-1, 0)); weights from
    ``rng`` (a ``np.random.Generator`` or a seed).

    Args:
        samples: draws, shape (n, d) or (chains, n, d).
        scores: the target's scores (the gradient of its log density) at the draws, the shape of ``samples``.
        num_bootstrap: bootstrap draws, >= 1.
        c: the IMQ kernel's scale, > 0.
        beta: its exponent, in (-1, 0).
        thin: keep every ``thin``-th draw first, >= 1.
        rng: a ``np.random.Generator``, or a seed for ``np.random.default_rng``.

    Returns:
        the KSDTest.

    Raises:
        TypeError: ``beta`` is not a real number.
        ValueError: an argument outside its accepted range, a shape mismatch, or a non-finite value.
    """
    integer_at_least("num_bootstrap", num_bootstrap, 1)
    c = positive_finite("c", c)
    beta = check_beta(beta)
    x, s = check_samples_and_scores(samples, scores, thin)
    x, s = x.reshape(-1, x.shape[-1]), s.reshape(-1, s.shape[-1])
    n = x.shape[0]
    kernel = stein_kernel_matrix(x, s, c, beta)
    statistic = float(kernel.sum()) / n
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    exceed = 0
    for start in range(0, num_bootstrap, BOOTSTRAP_BLOCK):
        size = min(BOOTSTRAP_BLOCK, num_bootstrap - start)
        w = 2.0 * generator.integers(0, 2, size=(size, n)) - 1.0
        exceed += int(np.sum(np.einsum("bi,bi->b", w @ kernel, w) / n >= statistic))
    return KSDTest(statistic=statistic, ksd_squared=statistic / n, p_value=(1 + exceed) / (1 + num_bootstrap),
                   num_bootstrap=int(num_bootstrap), num_draws=n)
