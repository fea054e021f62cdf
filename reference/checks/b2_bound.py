r"""A bound on the squared relative error :math:`b^2` of second moments (a chi-square bound).

Per coordinate :math:`i = 1..d`, :math:`r_i` is an estimated error of a second moment (e.g. the relative
error :math:`(m_i - E[x_i^2]) / E[x_i^2]` of the estimate :math:`m_i`), with standard error :math:`\tau_i`,
and :math:`\hat b^2 = \frac1d \sum_i r_i^2`. For a bias within the floor :math:`f`
(:math:`\frac1d\sum_i \delta_i^2 \le f`), :func:`b2_check` passes iff

.. math:: \sqrt{\hat b^2} \le \sqrt f + \tau_{max}\sqrt{q/d}, \qquad q = \chi^2_d(1 - \alpha),

so it fails with probability at most :math:`\alpha` (:math:`q = d\,F_{d, df}(1 - \alpha)` when the
:math:`\tau_i` are estimated from ``df`` + 1 replicates). A squared bias

.. math:: \lVert\delta\rVert^2 \ge \big(\sqrt f + \tau_{max}\sqrt{q/d} + \tau_{max}\sqrt{q_{0.9}/d}\big)^2

fails the check with probability at least 0.9: that is ``detectable``, in :math:`b^2` units.

Derivation: docs/gates_derivations.md, section sgbench.reference.checks.b2_bound.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special

from sgbench.base.arguments import integer_at_least
from sgbench.reference.checks._validate import check_alpha, finite_array, on_coordinates
from sgbench.reference.checks.result import POWER, CheckResult


def _quantile(probability: float, d: int, df: int | None) -> float:
    """The ``probability`` quantile of chi-square(d) (df None) or of d F(d, df)."""
    if df is None:
        return float(scipy.special.chdtri(d, 1 - probability))
    return float(d * scipy.special.fdtri(d, df, probability))


def b2_noise_bound(standard_errors, *, alpha, df=None) -> float:
    """tau_max sqrt(q / d): the 1 - ``alpha`` bound on the Monte Carlo part of sqrt(b^2_hat) for
    per-coordinate ``standard_errors`` tau (d,) (``df``: as in :func:`b2_check`)."""
    alpha = check_alpha(alpha)
    tau = finite_array("standard_errors", standard_errors)
    if tau.ndim != 1 or tau.size < 1 or np.any(tau <= 0):
        raise ValueError(f"standard_errors must be a vector of d >= 1 numbers > 0, got shape {tau.shape}")
    df = None if df is None else integer_at_least("df", df, 1)
    return float(tau.max() * math.sqrt(_quantile(1 - alpha, tau.size, df) / tau.size))


def b2_check(relative_errors, standard_errors, *, alpha, floor=0.0, df=None, name="b2") -> CheckResult:
    """Is the squared error b^2_hat = mean_i r_i^2 of ``relative_errors`` r (d,), with standard errors
    ``standard_errors`` tau (d,), consistent with a squared bias at most ``floor`` (module docstring)?
    ``df``: the degrees of freedom of estimated tau (None: tau known). False-failure rate at most
    ``alpha``. ``statistic`` sqrt(b^2_hat), ``threshold`` sqrt(floor) + tau_max sqrt(q/d): fails iff
    statistic > threshold. ``estimate`` b^2_hat, ``expected`` the floor, ``standard_error`` tau_max,
    ``detectable`` the squared bias detected with probability 0.9 (b^2 units)."""
    alpha = check_alpha(alpha)
    r = finite_array("relative_errors", relative_errors)
    if r.ndim != 1 or r.size < 1:
        raise ValueError(f"relative_errors must be a vector of d >= 1 numbers, got shape {r.shape}")
    tau = on_coordinates("standard_errors", standard_errors, r.shape, positive=True)
    floor = float(on_coordinates("floor", floor, (), minimum=0.0))
    noise = b2_noise_bound(tau, alpha=alpha, df=df)
    d = r.size
    estimate = float(np.mean(r**2))
    threshold = math.sqrt(floor) + noise
    reverse = tau.max() * math.sqrt(_quantile(POWER, d, None if df is None else int(df)) / d)
    return CheckResult(
        name=name, passed=bool(math.sqrt(estimate) <= threshold), alpha=alpha, statistic=math.sqrt(estimate),
        threshold=threshold, estimate=estimate, expected=floor, standard_error=float(tau.max()),
        detectable=(threshold + reverse) ** 2,
        details={"floor": floor, "noise_bound": noise, "dim": d, "df": df, "relative_errors": r,
                 "standard_errors": tau, "worst": int(np.argmax(r**2)),
                 "note": "(Estimate: b^2 = mean_i r_i^2; expected: the floor; standard error: tau_max of the r_i; "
                         "statistic: sqrt(b^2) against sqrt(floor) + tau_max sqrt(q/d); detectable: a squared bias.)"})
