r"""A distribution-free check for heavy-tailed replicates: :func:`quantile_check`.

Where per-chain averages are heavy-tailed (a sampler whose chains occasionally make huge
excursions, such as adaptive pSGLD; a funnel), the CLT behind t- and z-tests fails at small
rates. The empirical quantile :math:`\hat q_i` of level ``p`` of the replicates of a correct sampler
(from many reseeded runs: ``reference_count`` replicates) replaces the mean: under the null each
new replicate satisfies :math:`x_{ji} \le \hat q_i` with probability :math:`\pi_i`, and ``k_i``, the
count among ``n`` new replicates, is Binomial(n, :math:`\pi_i`), exactly, whatever the tails.

:math:`\pi_i` is ``p`` only up to the error of :math:`\hat q_i`: over the reference sample,
:math:`\pi_i` has standard deviation :math:`\sqrt{p(1-p)/N}` (``N = reference_count``), so the check
accepts any :math:`\pi \in [p - \delta, p + \delta]` with :math:`\delta = z_{1-\alpha/(4m)}\sqrt{p(1-p)/N}`
(half of the rate to this margin): it fails coordinate ``i`` when ``k_i`` is significantly outside
Binomial(n, :math:`\pi`) for every such :math:`\pi` (two one-sided exact binomial tests at the
ends, each at :math:`\alpha/(4m)`), Bonferroni over ``m`` coordinates. False-failure rate at most
``alpha``. ``detectable``: the shift of :math:`\pi` (probability units) detected with probability
0.9 under the normal approximation.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

from sgbench.reference.checks._validate import check_alpha, on_coordinates, replicates
from sgbench.reference.checks.result import POWER, Z_POWER, CheckResult


def quantile_check(x, quantiles, *, alpha, probability=0.5, reference_count=None, name="quantile") -> CheckResult:
    """Does the fraction of replicates ``x`` (replicates, ...coords) at or below ``quantiles`` (the
    reference's level-``probability`` quantile per coordinate, from ``reference_count`` replicates;
    None: known exactly) agree with ``probability``? Fails iff some coordinate's count is
    outside the binomial acceptance region (module docstring)."""
    alpha = check_alpha(alpha)
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {probability}")
    x = replicates("x", x)
    coords = x.shape[1:]
    quantiles = on_coordinates("quantiles", quantiles, coords)
    n, m = x.shape[0], max(1, math.prod(coords))
    tail = alpha / (4 * m) if reference_count is not None else alpha / (2 * m)
    delta = 0.0
    if reference_count is not None:
        if reference_count < 2:
            raise ValueError(f"reference_count must be an integer >= 2, got {reference_count}")
        delta = scipy.stats.norm.isf(tail) * math.sqrt(probability * (1 - probability) / reference_count)
    low, high = max(probability - delta, 1e-12), min(probability + delta, 1 - 1e-12)
    counts = np.sum(x <= quantiles, axis=0)
    p_above = scipy.stats.binom.sf(counts - 1, n, high)  # P[K >= k] at the largest allowed pi
    p_below = scipy.stats.binom.cdf(counts, n, low)  # P[K <= k] at the smallest allowed pi
    passed = (p_above > tail) & (p_below > tail)
    worst_p = np.minimum(p_above, p_below)
    index = int(np.argmin(worst_p))
    statistic = float(scipy.stats.norm.isf(max(float(worst_p.flat[index]), 1e-300)))
    threshold = float(scipy.stats.norm.isf(tail))
    spread = math.sqrt(probability * (1 - probability) / n)
    return CheckResult(name=name, passed=bool(np.all(passed)), alpha=alpha, statistic=statistic, threshold=threshold,
                       estimate=counts / n, expected=np.full(coords, probability),
                       standard_error=np.full(coords, spread),
                       detectable=np.full(coords, delta + (threshold + Z_POWER) * spread),
                       details={"num_replicates": n, "reference_count": reference_count, "margin": delta,
                                "power": POWER, "worst": index, "comparisons": m})
