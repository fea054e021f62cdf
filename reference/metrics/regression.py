r"""Predictive metrics of distributional regression (MILE paper, appendix A.4;
SMILE paper, appendix B.3) from per-sample Gaussian predictive densities
:math:`\mathcal N(y \mid \mu_{si}, \sigma_{si}^2)`: ``means`` :math:`\mu` and ``scales`` :math:`\sigma`
(samples, points), targets ``y`` (points,). For the ``bnn`` target, ``means`` and ``scales`` are the
network's location and the exponential of its log-scale output (``predict``), in standardised label
units like ``splits["test"][1]`` (multiply RMSE by ``label_scale`` and subtract ``log(label_scale)``
from the LPPD for the original units).

All metrics pool the samples of all chains (chains x draws flattened into the samples axis): the
posterior predictive is the equal-weight mixture :math:`\frac1S\sum_s \mathcal N(\mu_{si}, \sigma_{si}^2)`.
Pass one chain's draws for a per-chain value.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special

from sgbench.reference.metrics import register
from sgbench.reference.metrics._predictive import credible_levels, finite_array, regression_inputs
from sgbench.reference.metrics.lppd import lppd

MILE_LEVELS = (0.5, 0.75, 0.9, 0.95)  # nominal coverages of MILE's Table 10 and Figure 7


@register("gaussian_lppd")
def gaussian_lppd(y, means, scales) -> float:
    r"""LPPD (SMILE eq. 23, MILE eq. 4; :func:`sgbench.reference.metrics.lppd.lppd`) of Gaussian predictive
    densities, :math:`\log p(y_i \mid \theta_s) = -\tfrac12\log 2\pi - \log\sigma_{si}
    - \tfrac12 ((y_i - \mu_{si})/\sigma_{si})^2`.

    Args:
        y: the targets, shape (points,).
        means: per-sample predictive means, shape (samples, points).
        scales: per-sample predictive standard deviations, shape (samples, points), > 0.

    Returns:
        float: the LPPD.

    Raises:
        ValueError: a shape that does not match, a non-finite entry, or a scale <= 0.
    """
    y, means, scales = regression_inputs(y, means, scales)
    z = (y - means) / scales
    return lppd(-0.5 * math.log(2 * math.pi) - np.log(scales) - 0.5 * z * z)


@register("rmse")
def rmse(y, means) -> float:
    r"""Root mean squared error of the posterior predictive mean (MILE A.4, SMILE B.3):
    :math:`\sqrt{\frac1n \sum_i (y_i - \bar\mu_i)^2}`, :math:`\bar\mu_i = \frac1S \sum_s \mu_{si}`.

    Args:
        y: the targets, shape (points,).
        means: per-sample predictive means, shape (samples, points).

    Returns:
        float: the RMSE, >= 0.

    Raises:
        ValueError: a shape that does not match, or a non-finite entry.
    """
    y, means, _ = regression_inputs(y, means)
    return float(np.sqrt(np.mean((y - means.mean(axis=0)) ** 2)))


@register("credible_interval_coverage")
def credible_interval_coverage(y, means, scales, levels=MILE_LEVELS) -> np.ndarray:
    r"""Empirical coverage :math:`1 - \hat\alpha_l` (MILE eq. 7) of the central credible intervals of
    the posterior predictive mixture at each nominal level :math:`1 - \alpha_l` in ``levels``, one per level.

    The interval :math:`\mathcal C_{1-\alpha}(x_i)` runs from the :math:`\alpha/2` to the :math:`1 - \alpha/2`
    quantile of the mixture, whose CDF :math:`F_i(y) = \frac1S \sum_s \Phi((y - \mu_{si})/\sigma_{si})` is
    continuous and increasing, so :math:`y_i` is covered iff :math:`\alpha/2 \le F_i(y_i) \le 1 - \alpha/2`
    (exact quantiles, no root finding or predictive draws).

    Args:
        y: the targets, shape (points,).
        means: per-sample predictive means, shape (samples, points).
        scales: per-sample predictive standard deviations, shape (samples, points), > 0.
        levels: the nominal coverages, numbers in (0, 1).

    Returns:
        float64 array of shape (L,): the fraction of points covered at each level.

    Raises:
        ValueError: a shape that does not match, a non-finite entry, a scale <= 0, or a level outside (0, 1).
    """
    y, means, scales = regression_inputs(y, means, scales)
    levels = credible_levels(levels)
    cdf = scipy.special.ndtr((y - means) / scales).mean(axis=0)
    tail = (1 - levels[:, None]) / 2
    return np.mean((cdf >= tail) & (cdf <= 1 - tail), axis=1)


def coverage_calibration_error(coverage, levels=MILE_LEVELS, weights=None) -> float:
    r"""Calibration error of credible intervals, MILE Definition 2 (eq. 6, after Kuleshov et al. 2018), from the
    empirical coverages :math:`1 - \hat\alpha_l` (:func:`credible_interval_coverage`) at the nominal ``levels``
    :math:`1 - \alpha_l`:

    .. math:: \mathrm{CalE} = \Big( \sum_{l=1}^{L} w_l (\hat\alpha_l - \alpha_l)^2 \Big)^{1/2},

    with normalised ``weights`` :math:`w_l` (default equal: the root mean squared coverage error); lower is
    better. A caller that reports the coverages too (MILE's Figure 7 beside its Table 10) computes them once and
    passes them here.

    Args:
        coverage: the empirical coverage at each level, shape (L,), numbers in [0, 1].
        levels: the nominal coverages, numbers in (0, 1).
        weights: one weight >= 0 per level with a positive sum (normalised here), or None for equal weights.

    Returns:
        float: CalE, in [0, 1].

    Raises:
        ValueError: invalid ``levels``, a ``coverage`` that is not one number in [0, 1] per level, or invalid
            ``weights``.
    """
    levels = credible_levels(levels)
    coverage = finite_array("coverage", coverage, f"(levels,) = ({levels.size},)", 1)
    if coverage.shape != levels.shape or np.any((coverage < 0) | (coverage > 1)):
        raise ValueError(f"coverage must be {levels.size} numbers in [0, 1] (one per level), got {coverage.tolist()}")
    if weights is None:
        weights = np.ones_like(levels)
    weights = finite_array("weights", weights, f"(levels,) = ({levels.size},)", 1)
    if weights.shape != levels.shape or np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError(f"weights must be {levels.size} numbers >= 0 (one per level) with a positive sum, "
                         f"got {weights.tolist()}")
    return float(np.sqrt(np.sum(weights / weights.sum() * (coverage - levels) ** 2)))


@register("credible_interval_calibration_error")
def credible_interval_calibration_error(y, means, scales, levels=MILE_LEVELS, weights=None) -> float:
    r"""Calibration error of credible intervals, MILE Definition 2: :func:`coverage_calibration_error` of the
    empirical coverages of :func:`credible_interval_coverage` at the nominal ``levels`` (default MILE's 0.5, 0.75,
    0.9, 0.95), with normalised ``weights`` (default equal).

    Args:
        y: the targets, shape (points,).
        means: per-sample predictive means, shape (samples, points).
        scales: per-sample predictive standard deviations, shape (samples, points), > 0.
        levels: the nominal coverages, numbers in (0, 1).
        weights: one weight >= 0 per level with a positive sum (normalised here), or None for equal weights.

    Returns:
        float: CalE, in [0, 1].

    Raises:
        ValueError: invalid inputs as :func:`credible_interval_coverage`, or invalid ``weights``.
    """
    return coverage_calibration_error(credible_interval_coverage(y, means, scales, levels), levels, weights)
