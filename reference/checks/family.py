r"""Families of checks: the Bonferroni split, Holm's step-down procedure, and a conjunction.

Bonferroni: testing each of :math:`m` hypotheses at level :math:`\alpha/m` keeps the family-wise
false-failure rate at most :math:`\alpha` (Boole's inequality), whatever their dependence.

Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6:65-70:
with the p-values sorted, :math:`p_{(1)} \le \dots \le p_{(m)}`, reject :math:`H_{(1)}, \dots, H_{(k)}`
where :math:`k` is the largest index with :math:`p_{(j)} \le \alpha/(m - j + 1)` for every
:math:`j \le k`. Family-wise rate at most :math:`\alpha`, never fewer rejections than Bonferroni; the
family is rejected (some hypothesis is) exactly when Bonferroni rejects it, :math:`p_{(1)} \le \alpha/m`.
"""

from __future__ import annotations

import numpy as np

from sgbench.base.arguments import integer_at_least
from sgbench.reference.checks._validate import check_alpha, finite_array
from sgbench.reference.checks.result import CheckResult


def bonferroni(alpha, m) -> float:
    """The level alpha / m of each of ``m`` >= 1 tests of a family with false-failure rate ``alpha``."""
    return check_alpha(alpha) / integer_at_least("m", m, 1)


def holm(p_values, alpha) -> np.ndarray:
    """Which hypotheses Holm's procedure rejects at family-wise rate ``alpha``: a bool array of the
    shape of ``p_values`` (..., m), the procedure applied along the last axis."""
    alpha = check_alpha(alpha)
    p = finite_array("p_values", p_values)
    if p.ndim < 1 or p.shape[-1] < 1 or np.any((p < 0) | (p > 1)):
        raise ValueError(f"p_values must be at least one number in [0, 1] (along the last axis), got shape "
                         f"{p.shape}" + (f" and range [{p.min():.3g}, {p.max():.3g}]" if p.size else ""))
    m = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    below = np.take_along_axis(p, order, axis=-1) <= alpha / (m - np.arange(m))
    rejected_sorted = np.cumprod(below, axis=-1).astype(bool)  # reject up to the first acceptance
    rejected = np.empty_like(rejected_sorted)
    np.put_along_axis(rejected, order, rejected_sorted, axis=-1)
    return rejected


def all_of(results, name: str) -> CheckResult:
    """One check that passes iff every one of ``results`` passes; its alpha is the sum of theirs
    (Boole's inequality). Its statistic, threshold, estimate, expected value, standard error and
    detectable deviation are those of the first failed part (of the first part if none failed);
    ``details["components"]`` holds the parts and ``details["failed"]`` the names of the failed ones."""
    parts = tuple(results)
    if not parts or not all(isinstance(r, CheckResult) for r in parts):
        raise ValueError(f"results must be one or more CheckResult, got {[type(r).__name__ for r in parts]}")
    failed = [r for r in parts if not r.passed]
    shown = failed[0] if failed else parts[0]
    return CheckResult(
        name=name, passed=not failed, alpha=float(sum(r.alpha for r in parts)), statistic=shown.statistic,
        threshold=shown.threshold, estimate=shown.estimate, expected=shown.expected,
        standard_error=shown.standard_error, detectable=shown.detectable,
        details={"components": parts, "failed": [r.name for r in failed], "worst": shown.details.get("worst", 0)})
