r"""z-tests of moment estimates against a truth, with their Monte Carlo standard errors.

For an estimate :math:`\hat m_i` of :math:`E[f_i(x)]` with Monte Carlo standard error
:math:`\mathrm{MCSE}_i` and an expected value :math:`e_i` that may itself be an estimate with standard
error :math:`se^{(e)}_i` (a gold-standard reference; 0 when analytic),

.. math:: z_i = (\hat m_i - e_i) / \sqrt{\mathrm{MCSE}_i^2 + (se^{(e)}_i)^2}

is standard normal up to the CLT for the chain average (Geyer 1992, "Practical Markov chain Monte
Carlo", Statist. Sci. 7:473-483; the MCSE from the effective sample size, below). With an
allowance :math:`a_i \ge 0` (a bias the method has by design) :func:`moment_check` tests
:math:`|E[\hat m_i] - e_i| \le a_i` as two one-sided z-tests per coordinate at the two-sided Bonferroni
critical value :math:`z_c = \Phi^{-1}(1 - \alpha/(2m))` over :math:`m` coordinates: family-wise
false-failure rate at most :math:`\alpha`. Detectable deviation per coordinate:
:math:`a_i + (z_c + z_{0.9})\,se_i`.

:func:`expectation_mcse`: :math:`\mathrm{MCSE}(\hat E[f]) = \operatorname{sd}(f)/\sqrt{\mathrm{ESS}_{mean}(f)}`
per coordinate of the values :math:`f(x)` (chains, draws, dim), over all chains together, with the
multi-chain ESS of Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021), Bayesian Analysis 16(2),
as ``sgbench.reference.metrics.mcse`` computes it for :math:`f(x) = x` and :math:`x^2` (ArviZ).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.special

from sgbench.base.arguments import integer_at_least, one_of
from sgbench.reference.checks._validate import (
    ALTERNATIVES,
    check_alpha,
    decide,
    on_coordinates,
    tail_probability,
    worst,
)
from sgbench.reference.checks.result import POWER, CheckResult, detection_quantile
from sgbench.reference.checks.wrong_answers import law
from sgbench.reference.metrics._arviz import per_dimension
from sgbench.reference.metrics._chains import chain_draws
from sgbench.reference.metrics.mcse import MIN_DRAWS


def z_critical(alpha, comparisons=1, two_sided=True) -> float:
    """Bonferroni critical value of a z statistic: Phi^-1(1 - alpha / (2 m)) (two-sided) or
    Phi^-1(1 - alpha / m) (one-sided) for m = ``comparisons``."""
    m = integer_at_least("comparisons", comparisons, 1)
    return float(-scipy.special.ndtri(check_alpha(alpha) / (2 * m if two_sided else m)))


def moment_check(estimate, mcse, expected, *, alpha, expected_se=0.0, allowance=0.0, alternative="two-sided",
                 name="moment") -> CheckResult:
    """z-test of ``estimate`` (float or array of coordinates) with standard error ``mcse`` (> 0)
    against ``expected`` (with standard error ``expected_se`` >= 0), within ``allowance`` >= 0 per
    coordinate, Bonferroni over the coordinates at rate ``alpha`` (module docstring).
    ``alternative`` as in ``replicates.mean_check``. Fails iff ``statistic`` (the largest
    standardized excess) > ``threshold``. ``details``: per-coordinate ``upper``, ``lower``, ``coordinate_passed``."""
    alpha = check_alpha(alpha)
    one_of("alternative", alternative, set(ALTERNATIVES))
    estimate = np.asarray(on_coordinates("estimate", estimate, np.shape(estimate)))
    shape = estimate.shape
    mcse = on_coordinates("mcse", mcse, shape, positive=True)
    expected = on_coordinates("expected", expected, shape)
    expected_se = on_coordinates("expected_se", expected_se, shape, minimum=0.0)
    allowance = on_coordinates("allowance", allowance, shape, minimum=0.0)
    se = np.sqrt(mcse**2 + expected_se**2)
    m = max(1, math.prod(shape))
    upper, lower = (estimate - expected - allowance) / se, (estimate - expected + allowance) / se
    critical = float(-scipy.special.ndtri(tail_probability(alpha, m, alternative)))
    passed, excess = decide(upper, lower, critical, alternative)
    value, index = worst(excess)
    return CheckResult(
        name=name, passed=bool(np.all(passed)), alpha=alpha, statistic=value, threshold=critical,
        estimate=estimate, expected=expected, standard_error=se,
        detectable=allowance + detection_quantile(critical, POWER) * se,
        details={"allowance": allowance, "upper": upper, "lower": lower, "coordinate_passed": passed,
                 "comparisons": m, "alternative": alternative, "df": None, "worst": index})


def moment_law_check(estimate, mcse, expected, wrong_answers, *, alpha, sure=None, expected_se=0.0,
                     allowance=0.0, name="moments") -> CheckResult:
    """:func:`moment_check` against ``expected`` and power against each wrong answer (name ->
    values), as ``replicates.law_check`` does for replicates."""
    options = dict(alpha=alpha, expected_se=expected_se, allowance=allowance)
    null = moment_check(estimate, mcse, expected, name=name, **options)
    return law(null, wrong_answers, lambda wrong, label: moment_check(estimate, mcse, wrong, name=label, **options),
               sure=sure, name=name)


class ExpectationMCSE(NamedTuple):
    """Per coordinate: the estimate of E[f] (mean over chains and draws), its MCSE, and the ESS."""

    estimate: np.ndarray
    mcse: np.ndarray
    ess: np.ndarray


def expectation_mcse(values) -> ExpectationMCSE:
    """The estimate of E[f(x)], its Monte Carlo standard error sd / sqrt(ESS_mean) and the ESS, per
    coordinate of the values ``values`` = f(x) (chains, draws, dim), at least 4 finite draws per chain
    (module docstring; NaN MCSE and ESS for a constant coordinate)."""
    f = chain_draws(values, "values", min_draws=MIN_DRAWS)
    ess = per_dimension("ess", f, method="mean")
    sd = f.reshape(-1, f.shape[-1]).std(axis=0, ddof=1)
    return ExpectationMCSE(f.mean(axis=(0, 1)), sd / np.sqrt(ess), ess)
