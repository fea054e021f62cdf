r"""An empirical null: the threshold of a statistic from reseeded runs of a correct sampler, for
targets where the CLT is not trusted (heavy tails: Neal's funnel).

Given null statistics :math:`T_1..T_n` from independent reseeded runs of a sampler known to be
correct, and the statistic :math:`T` of the run under test, exchangeable with them when that run is
correct too, the check fails iff :math:`T` exceeds the :math:`k`-th largest null statistic,
:math:`k = \lfloor\alpha(n + 1)\rfloor`. By exchangeability (and without ties) the rank of :math:`T` among
the :math:`n + 1` values is uniform, so it is among the :math:`k` largest with probability exactly
:math:`k/(n + 1) \le \alpha` (the argument of permutation tests and conformal prediction; e.g. Lehmann
& Romano, "Testing Statistical Hypotheses", section 15.2). With :math:`n + 1 < 1/\alpha` no such
:math:`k \ge 1` exists: more null runs are needed.
"""

from __future__ import annotations

import math

import numpy as np

from sgbench.reference.checks._validate import check_alpha, finite_array
from sgbench.reference.checks.result import CheckResult


class EmpiricalNull:
    """Null statistics ``null_statistics`` (n,) of reseeded runs of a correct sampler (module docstring)."""

    def __init__(self, null_statistics):
        values = finite_array("null_statistics", null_statistics)
        if values.ndim != 1 or values.size < 1:
            raise ValueError(f"null_statistics must be a vector of n >= 1 numbers, got shape {values.shape}")
        self.null_statistics = np.sort(values)

    @property
    def n(self) -> int:
        return int(self.null_statistics.size)

    def rank(self, alpha) -> int:
        """k = floor(alpha (n + 1)), or ValueError naming alpha and n when it is 0 (n + 1 < 1 / alpha)."""
        alpha = check_alpha(alpha)
        k = math.floor(alpha * (self.n + 1) * (1 + 1e-12))  # alpha (n + 1) an integer up to rounding
        if k < 1:
            raise ValueError(f"alpha={alpha:g} needs at least {math.ceil(1 / alpha) - 1} null statistics "
                             f"(n + 1 >= 1 / alpha), got n={self.n}")
        return k

    def threshold(self, alpha) -> float:
        """The k-th largest null statistic, k = floor(alpha (n + 1)): exceeded by an exchangeable
        statistic with probability exactly k / (n + 1) <= ``alpha``."""
        return float(self.null_statistics[-self.rank(alpha)])

    def check(self, statistic, alpha, name="empirical null") -> CheckResult:
        """Fails iff ``statistic`` > :meth:`threshold` (``alpha``); ``details["exact_rate"]`` = k / (n + 1)."""
        value = float(finite_array("statistic", statistic))
        k = self.rank(alpha)
        threshold = float(self.null_statistics[-k])
        return CheckResult(
            name=name, passed=value <= threshold, alpha=float(alpha), statistic=value, threshold=threshold,
            estimate=value, expected=float(np.median(self.null_statistics)),
            details={"num_null": self.n, "rank": k, "exact_rate": k / (self.n + 1),
                     "note": f"(Threshold: the k-th largest of the {self.n} null statistics, k = {k}; expected: "
                             "their median.)"})
