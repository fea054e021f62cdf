r"""Exact tests that iid draws follow :math:`\mathcal N(\mu_i, v_i)` per coordinate (one-step laws of
samplers whose increment is Gaussian given the state).

For :math:`K` draws with mean :math:`\bar y_i` and variance :math:`s_i^2` (``ddof = 1``), under the law
:math:`z_i = (\bar y_i - \mu_i)/\sqrt{v_i/K}` is standard normal and :math:`c_i = (K-1)s_i^2/v_i` is
:math:`\chi^2_{K-1}`, both exactly. :func:`normal_draws_check` runs the two-sided z-test of every mean
and the two-sided chi-square test of every variance (rejecting below the :math:`a` and above the
:math:`1 - a` quantile), Bonferroni over the :math:`2d` tests, :math:`a = \alpha/(4d)`: family-wise
false-failure rate at most :math:`\alpha`, exact (no CLT). Each chi-square statistic is reported on
the normal scale, :math:`\Phi^{-1}(F_{\chi^2_{K-1}}(c_i))`, so one critical value
:math:`\Phi^{-1}(1 - a)` serves both kinds. The chi-square test detects a relative change of the
variance of about :math:`(z_c + z_{p})\sqrt{2/K}` with probability :math:`p` (normal approximation of
:math:`\chi^2_{K-1}`).
"""

from __future__ import annotations

import numpy as np
import scipy.special

from sgbench.reference.checks._validate import check_alpha, finite_array, on_coordinates, worst
from sgbench.reference.checks.result import POWER, CheckResult, detection_quantile


def _chi2_on_normal_scale(c, dof):
    """Phi^-1 of the chi-square(dof) cdf at ``c``, from the smaller tail (no cancellation)."""
    lower, upper = scipy.special.chdtr(dof, c), scipy.special.chdtrc(dof, c)
    return np.where(upper < 0.5, -scipy.special.ndtri(upper), scipy.special.ndtri(lower))


def normal_draws_check(draws, mean, variance, *, alpha, name="normal draws") -> CheckResult:
    """Do the rows of ``draws`` (K, d) follow N(``mean``, diag ``variance``) (module docstring)?
    Fails iff ``statistic`` (the largest |z| of the 2d tests) > ``threshold``. ``estimate``,
    ``expected``, ``standard_error``, ``detectable``: (2, d) arrays, row 0 the means, row 1 the
    variances. ``details``: ``mean_z``, ``variance_z`` (normal scale), ``mean_rejected``, ``variance_rejected``."""
    alpha = check_alpha(alpha)
    y = finite_array("draws", draws)
    if y.ndim != 2 or y.shape[0] < 2:
        raise ValueError(f"draws must have shape (K, d) with K >= 2, got shape {y.shape}")
    k, d = y.shape
    mean = on_coordinates("mean", mean, (d,))
    variance = on_coordinates("variance", variance, (d,), positive=True)
    critical = float(-scipy.special.ndtri(alpha / (4 * d)))
    mean_z = (y.mean(axis=0) - mean) / np.sqrt(variance / k)
    sample_variance = y.var(axis=0, ddof=1)
    variance_z = _chi2_on_normal_scale((k - 1) * sample_variance / variance, k - 1)
    both = np.abs(np.stack([mean_z, variance_z]))
    value, index = worst(both)
    se = np.stack([np.sqrt(variance / k), variance * np.sqrt(2 / (k - 1))])
    return CheckResult(
        name=name, passed=bool(np.all(both <= critical)), alpha=alpha, statistic=value, threshold=critical,
        estimate=np.stack([y.mean(axis=0), sample_variance]), expected=np.stack([mean, variance]),
        standard_error=se, detectable=detection_quantile(critical, POWER) * se,
        details={"mean_z": mean_z, "variance_z": variance_z, "mean_rejected": np.abs(mean_z) > critical,
                 "variance_rejected": np.abs(variance_z) > critical, "num_draws": k, "worst": index})
