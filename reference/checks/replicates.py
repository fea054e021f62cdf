r"""Checks on independent replicates: one estimate per replicate (e.g. the time average of each of
``C`` independent chains after their warm-up, or of each of ``C`` independent runs), tested through the
replicates' own spread, so no autocorrelation model is needed.

For replicates :math:`x_1..x_n` (per coordinate) with mean :math:`\bar x`, variance :math:`s^2`
(``ddof = 1``) and third central moment :math:`\hat\mu_3`, the statistic of :math:`H_0: E[x] = \mu_0` is
Student's :math:`t = (\bar x - \mu_0)/(s/\sqrt n)`, or Johnson's (1978, JASA 73:536-544) skewness-corrected

.. math:: t_J = \Big(d + \frac{\hat\mu_3}{6 s^2 n} + \frac{\hat\mu_3 d^2}{3 s^4}\Big) \Big/ (s/\sqrt n),
          \qquad d = \bar x - \mu_0

(:func:`johnson_t`, Student's t beyond its turning point). :func:`mean_check` tests
:math:`|E[x] - \mu_0| \le a` per coordinate as two one-sided tests at the Bonferroni critical value
:math:`t_c = t_{n-1}(1 - \alpha/(2m))` over :math:`m` coordinates (family-wise false-failure rate at most
:math:`\alpha`); it detects a deviation of :math:`a + \delta_{0.9}\,\widehat{se}` with probability 0.9.
:func:`law_check` adds power against named wrong answers, each rejected with probability at least
:math:`1 - \alpha_{sure}` by design.

Derivation and notes: docs/gates_derivations.md, section sgbench.reference.checks.replicates.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special

from sgbench.base.arguments import integer_at_least, one_of
from sgbench.reference.checks._validate import (
    ALTERNATIVES,
    check_alpha,
    decide,
    on_coordinates,
    replicates,
    tail_probability,
    worst,
)
from sgbench.reference.checks.result import POWER, CheckResult, detection_quantile
from sgbench.reference.checks.wrong_answers import law


def standard_error(x, axis: int = 0) -> np.ndarray:
    """Standard error of the mean over the replicates along ``axis``: sd (ddof = 1) / sqrt(n)."""
    x = np.asarray(x, dtype=np.float64)
    return x.std(axis=axis, ddof=1) / math.sqrt(x.shape[axis])


def student_t(x, mu0) -> np.ndarray:
    """Student's t statistic of the mean of replicates ``x`` (replicates, ...) against ``mu0``."""
    x = np.asarray(x, dtype=np.float64)
    return (x.mean(axis=0) - mu0) / standard_error(x)


def johnson_t(x, mu0) -> np.ndarray:
    """Johnson's (1978) skewness-corrected t statistic of the mean of ``x`` (replicates, ...) against ``mu0``."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    mean = x.mean(axis=0)
    centred = x - mean
    square = centred * centred
    s2 = square.sum(axis=0) / (n - 1)
    mu3 = (square * centred).mean(axis=0)
    d = mean - mu0
    corrected = (d + mu3 / (6 * s2 * n) + mu3 * d**2 / (3 * s2**2)) / np.sqrt(s2 / n)
    # Beyond the turning point |d| = 3 s^4 / (2 |mu3|) (on the side where mu3 d < 0) t_J falls back
    # towards 0: a huge deviation would pass. There Student's t, already beyond the turning
    # point's 3 sqrt(n) / (2 |skewness|) standard errors, is used instead.
    with np.errstate(divide="ignore", invalid="ignore"):
        beyond = (mu3 * d < 0) & (np.abs(d) > 1.5 * s2**2 / np.abs(mu3))
    return np.where(beyond, d / np.sqrt(s2 / n), corrected)


def t_critical(num_replicates, comparisons, alpha) -> float:
    """Two-sided Bonferroni critical value t_{n-1}(1 - alpha / (2 comparisons)) for ``num_replicates`` = n."""
    n = integer_at_least("num_replicates", num_replicates, 2)
    m = integer_at_least("comparisons", comparisons, 1)
    return float(-scipy.special.stdtrit(n - 1, check_alpha(alpha) / (2 * m)))


def mean_check(x, expected, *, alpha, allowance=0.0, alternative="two-sided", skewness_correction=True,
               name="mean") -> CheckResult:
    """Is the mean of the replicates ``x`` (replicates, ...coords) within ``allowance`` of
    ``expected`` in every coordinate (module docstring)? Johnson's t (``skewness_correction``) or
    Student's; Bonferroni over the coordinates at family-wise rate ``alpha``. ``alternative``:
    "two-sided" (both sides), "greater" (fails only if the mean lies significantly above
    expected + allowance) or "less". Fails iff ``statistic`` (the largest standardized excess) >
    ``threshold`` (the critical value). ``details``: per-coordinate ``upper``, ``lower`` statistics
    and ``coordinate_passed``, ``df``, ``comparisons``."""
    alpha = check_alpha(alpha)
    one_of("alternative", alternative, set(ALTERNATIVES))
    x = replicates("x", x)
    coords = x.shape[1:]
    expected = on_coordinates("expected", expected, coords)
    allowance = on_coordinates("allowance", allowance, coords, minimum=0.0)
    n, m = x.shape[0], max(1, math.prod(coords))
    statistic = johnson_t if skewness_correction else student_t
    upper, lower = statistic(x, expected + allowance), statistic(x, expected - allowance)
    critical = float(-scipy.special.stdtrit(n - 1, tail_probability(alpha, m, alternative)))
    passed, excess = decide(upper, lower, critical, alternative)
    value, index = worst(excess)
    se = standard_error(x)
    return CheckResult(
        name=name, passed=bool(np.all(passed)), alpha=alpha, statistic=value, threshold=critical,
        estimate=x.mean(axis=0), expected=expected, standard_error=se,
        detectable=allowance + detection_quantile(critical, POWER, n - 1) * se,
        details={"allowance": allowance, "upper": upper, "lower": lower, "coordinate_passed": passed,
                 "num_replicates": n, "df": n - 1, "comparisons": m, "alternative": alternative,
                 "skewness_correction": bool(skewness_correction), "worst": index})


def law_check(x, expected, wrong_answers, *, alpha, sure=None, allowance=0.0, skewness_correction=True,
              name="law") -> CheckResult:
    """:func:`mean_check` of ``x`` against ``expected`` at rate ``alpha``, and power against each
    wrong answer (``wrong_answers``: name -> values on the coordinates): rejected with probability
    >= 1 - ``sure`` (default ``alpha``) by design and rejected by the data (the same mean check
    against it fails). Passes iff all parts pass (``family.all_of``; its alpha counts ``sure`` once
    per wrong answer, the rate at which a correct estimate can leave a wrong answer unrejected)."""
    options = dict(alpha=alpha, allowance=allowance, skewness_correction=skewness_correction)
    null = mean_check(x, expected, name=name, **options)
    return law(null, wrong_answers, lambda wrong, label: mean_check(x, wrong, name=label, **options), sure=sure,
               name=name)
