r"""Combining p-values: one check over tests of several dimensions, targets or statistics
(KSD and FSSD goodness-of-fit tests, exact binomial tests, ...).

A p-value :math:`p` of a valid test satisfies :math:`P(p \le u) \le u` under its null. Over :math:`m`
p-values, Holm's step-down procedure (``family.holm``) or Bonferroni keeps the family-wise
false-failure rate at most :math:`\alpha` under any dependence; the family fails iff some hypothesis is
rejected, i.e. iff :math:`\min_k p_k \le \alpha/m` for both (Holm only rejects more individual
hypotheses). The statistic reported is the smallest adjusted p-value :math:`\min(1, m \min_k p_k)`.

:func:`binomial_p_values`: exact binomial tests (``scipy.stats.binomtest``; two-sided by the method of
small p-values: the probability of counts no more likely than the one seen).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

from sgbench.base.arguments import one_of
from sgbench.reference.checks._validate import check_alpha, finite_array
from sgbench.reference.checks.family import holm
from sgbench.reference.checks.result import CheckResult

METHODS = ("holm", "bonferroni")


def p_value_check(p_values, *, alpha, method="holm", detectable=math.nan, name="p-values") -> CheckResult:
    """Fails iff the family of ``p_values`` (any shape, at least one, each in [0, 1]) is rejected at
    family-wise rate ``alpha`` by ``method`` ("holm" or "bonferroni"). ``statistic``: the smallest
    adjusted p-value min(1, m min p); ``threshold``: alpha; fails iff statistic <= threshold.
    ``detectable``: as given (a p-value has no deviation scale). ``details["rejected"]``: which
    hypotheses the method rejects (the shape of ``p_values``)."""
    alpha = check_alpha(alpha)
    one_of("method", method, set(METHODS))
    p = finite_array("p_values", p_values)
    if p.size < 1 or np.any((p < 0) | (p > 1)):
        raise ValueError(f"p_values must be one or more numbers in [0, 1], got shape {p.shape}"
                         + (f" and range [{p.min():.3g}, {p.max():.3g}]" if p.size else ""))
    flat, m = p.ravel(), p.size
    rejected = holm(flat, alpha) if method == "holm" else flat <= alpha / m
    adjusted = min(1.0, m * float(flat.min()))
    return CheckResult(
        name=name, passed=not bool(rejected.any()), alpha=alpha, statistic=adjusted, threshold=alpha,
        estimate=p, detectable=detectable,
        details={"rejected": rejected.reshape(p.shape), "method": method, "num_tests": m,
                 "worst": int(np.argmin(flat)),
                 "note": "(For p-values the statistic is the smallest adjusted p-value; it fails at or below "
                         "the threshold.)"})


def binomial_p_values(successes, trials, probabilities, alternative="two-sided") -> np.ndarray:
    """Exact binomial p-values of counts ``successes`` of ``trials`` against success
    ``probabilities`` (broadcast together); ``alternative``: "two-sided", "greater" (more successes
    than expected) or "less"."""
    one_of("alternative", alternative, {"two-sided", "greater", "less"})
    k, n, q = np.broadcast_arrays(np.asarray(successes), np.asarray(trials), np.asarray(probabilities, float))
    if np.any(k != np.round(k)) or np.any(n != np.round(n)) or np.any((k < 0) | (k > n)):
        raise ValueError("successes and trials must be integers with 0 <= successes <= trials")
    if np.any((q < 0) | (q > 1)):
        raise ValueError("probabilities must lie in [0, 1]")
    return np.array([scipy.stats.binomtest(int(a), int(b), float(c), alternative=alternative).pvalue
                     for a, b, c in zip(k.ravel(), n.ravel(), q.ravel())]).reshape(k.shape)
