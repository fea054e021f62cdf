r"""``sgbench.reference.checks``: each check's false-failure rate by simulation under its null, its power at
the deviation it reports as detectable, its decisions against the formulas, results, bad input.

**Rates.** Every check runs at ``ALPHA`` = 1e-2 on ``SIMULATIONS`` = 20 000 simulated nulls (about
200 failures expected). The failures are counted vectorised, from the public functions each check
calls (``johnson_t`` / ``student_t`` with ``t_critical``, ``z_critical``, ``b2_noise_bound``, ``holm``,
``EmpiricalNull.rank``); that the check itself decides the same is asserted on ``AGREE`` data sets
(the first 200 and up to 100 that fail). Exact checks: an exact two-sided binomial test that the
failure rate equals the check's exact rate (``1 - (1 - alpha/m)^m`` for m independent coordinates
where Bonferroni is exact, ``k/(n + 1)`` for the empirical null); approximate ones (Johnson's t on
skewed replicates) are held to the same test; conservative ones (``b2_check`` with a floor or with
estimated standard errors) to a one-sided test that the rate is at most alpha. **Power.** At the
deviation a check reports as ``detectable``, the rejection rate must be at least 0.9: a one-sided
exact binomial test. Every binomial test here has false-failure rate ``RATE_ALPHA`` = 1e-6 (the 18
of them together below 2e-5; the seeds are fixed, so a run is reproducible). With 20 000
simulations a rate off by 34 % (0.0066 or 0.0134 for 0.01) is rejected with probability about 1/2,
one off by 43 % with probability 0.9; with 10 000 simulations a power of 0.88 instead of 0.9 is
rejected with probability 0.96.

Runtime about 2-4 s on 2 shared cores.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.special
import scipy.stats

from sgbench.reference.checks import (
    POWER,
    Z_POWER,
    CheckResult,
    EmpiricalNull,
    all_of,
    b2_check,
    b2_noise_bound,
    binomial_p_values,
    bonferroni,
    detection_quantile,
    expectation_mcse,
    holm,
    johnson_t,
    law_check,
    mean_check,
    moment_check,
    moment_law_check,
    normal_draws_check,
    p_value_check,
    standard_error,
    student_t,
    t_critical,
    wrong_answer_check,
    z_critical,
)
from sgbench.reference.metrics import moment_mcse

ALPHA = 1e-2
SIMULATIONS = 20_000
POWER_SIMULATIONS = 10_000
RATE_ALPHA = 1e-6


def assert_rate(failures, trials, rate, alternative="two-sided"):
    """Exact binomial test at RATE_ALPHA: the failure rate equals ``rate`` (two-sided), or is at most
    it ("greater": too many failures reject), or at least it ("less": too few reject)."""
    count = int(np.sum(failures))
    p = binomial_p_values(count, trials, rate, alternative)
    check = p_value_check(p, alpha=RATE_ALPHA, name=f"{count} of {trials} against rate {rate:.5g} ({alternative})")
    check.assert_passed()


def agreement_indices(fails, first=200, extra=100):
    """The first ``first`` simulated data sets and up to ``extra`` of the failing ones."""
    return np.concatenate([np.arange(first), np.flatnonzero(fails)[:extra]])


def family_rate(level, m):
    """The exact family-wise rate of m independent tests each at ``level``."""
    return 1 - (1 - level) ** m


# ---------------------------------------------------------------------------------------------
# replicates.mean_check


def mean_check_fails(x, expected, allowance, alternative, skewness_correction, alpha=ALPHA):
    """Per simulated data set (axis 1 of x (n, N, d)): does mean_check fail? From the formulas."""
    n, d = x.shape[0], x.shape[-1]
    statistic = johnson_t if skewness_correction else student_t
    critical = t_critical(n, d, alpha if alternative == "two-sided" else 2 * alpha)
    upper, lower = statistic(x, expected + allowance), statistic(x, expected - allowance)
    fails = np.zeros(upper.shape, bool)
    if alternative != "less":
        fails |= upper > critical
    if alternative != "greater":
        fails |= lower < -critical
    return fails.any(axis=-1)


MEAN_NULLS = {  # law, replicates n, coordinates d, allowance (in sd), alternative, skewness correction
    "gaussian-student": ("gaussian", 20, 3, 0.0, "two-sided", False),
    "gaussian-johnson": ("gaussian", 50, 3, 0.0, "two-sided", True),
    "exponential-johnson": ("exponential", 50, 3, 0.0, "two-sided", True),
    "gaussian-student-allowance-boundary": ("gaussian", 20, 3, 0.5, "two-sided", False),
    "gaussian-student-greater": ("gaussian", 20, 3, 0.0, "greater", False),
}


@pytest.mark.parametrize("case", list(MEAN_NULLS))
def test_mean_check_false_failure_rate(case):
    """Student's t on Gaussian replicates is exact: rate 1 - (1 - alpha/d)^d (two-sided, or one side
    at alpha/d); at the edge of an allowance (true mean = expected + allowance in every coordinate)
    one side is exact at alpha/(2d) and the other fails with the noncentral-t probability. Johnson's t
    is approximate: on Gaussian and on exponential replicates (skewness 2, n = 50) its rate is held
    to the exact value by the same binomial test."""
    law, n, d, allowance, alternative, skew = MEAN_NULLS[case]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, SIMULATIONS, d)) if law == "gaussian" else rng.exponential(size=(n, SIMULATIONS, d))
    expected = 0.0 if law == "gaussian" else 1.0
    x = x + allowance  # the true mean at the allowance's edge
    fails = mean_check_fails(x, expected, allowance, alternative, skew)
    for j in agreement_indices(fails):
        result = mean_check(x[:, j], expected, alpha=ALPHA, allowance=allowance, alternative=alternative,
                            skewness_correction=skew)
        assert result.passed == (not fails[j]), (j, result.message())
    if allowance:
        far = scipy.stats.nct.cdf(-t_critical(n, d, ALPHA), n - 1, 2 * allowance * math.sqrt(n))
        rate = family_rate(ALPHA / (2 * d) + far, d)
    else:
        rate = family_rate(ALPHA / d, d)
    assert_rate(fails, SIMULATIONS, rate)


def test_student_t_is_miscalibrated_on_skewed_replicates():
    """Why Johnson's correction: Student's t on the same exponential replicates (n = 50) fails about
    3.5 times too often (the binomial test rejects the nominal rate)."""
    x = np.random.default_rng(1).exponential(size=(50, SIMULATIONS, 3))
    fails = mean_check_fails(x, 1.0, 0.0, "two-sided", False)
    count = int(fails.sum())
    assert binomial_p_values(count, SIMULATIONS, family_rate(ALPHA / 3, 3)) < RATE_ALPHA, count


@pytest.mark.parametrize("n,skew", [(20, False), (200, True)], ids=["student-n20", "johnson-n200"])
def test_mean_check_power_at_detectable(n, skew):
    """Gaussian replicates whose first coordinate's mean lies at the detectable deviation,
    allowance + delta_0.9 sd/sqrt(n) (delta_0.9 the noncentral-t quantile, exact for Student's t),
    are rejected with probability >= 0.9; Johnson's t, whose skewness estimate adds noise, is
    held to it at n = 200. The reported detectable deviation of one data set is that value with the
    estimated standard error in place of sd/sqrt(n)."""
    d, allowance = 2, 0.3
    critical = t_critical(n, d, ALPHA)
    detectable = allowance + detection_quantile(critical, POWER, n - 1) / math.sqrt(n)
    x = np.random.default_rng(2).standard_normal((n, POWER_SIMULATIONS, d))
    x[..., 0] += detectable
    fails = mean_check_fails(x, 0.0, allowance, "two-sided", skew)
    assert_rate(fails, POWER_SIMULATIONS, POWER, alternative="less")
    reported = mean_check(x[:, 0], 0.0, alpha=ALPHA, allowance=allowance, skewness_correction=skew).detectable
    np.testing.assert_allclose(reported, allowance + (detectable - allowance) * math.sqrt(n) * standard_error(x[:, 0]),
                               rtol=1e-12)


def test_detection_quantile():
    assert detection_quantile(3.0) == pytest.approx(3.0 + Z_POWER, rel=1e-12)
    q = detection_quantile(3.0, 0.9, 10)
    assert scipy.stats.nct.sf(3.0, 10, q) == pytest.approx(0.9, rel=1e-6)
    assert q > 3.0 + Z_POWER  # the estimated sd costs power
    assert detection_quantile(3.0, 1 - 1e-3, 10**6) == pytest.approx(3.0 + z_critical(1e-3, two_sided=False),
                                                                      rel=1e-4)


def test_statistics_and_critical_values():
    x = np.random.default_rng(3).gamma(2.0, size=(40, 2))
    mean, sd = x.mean(0), x.std(0, ddof=1)
    np.testing.assert_allclose(student_t(x, 1.0), (mean - 1.0) / (sd / math.sqrt(40)), rtol=1e-12)
    np.testing.assert_allclose(standard_error(x), sd / math.sqrt(40), rtol=1e-12)
    mu3 = ((x - mean) ** 3).mean(0)
    d = mean - 1.0
    expected = (d + mu3 / (6 * sd**2 * 40) + mu3 * d**2 / (3 * sd**4)) / (sd / math.sqrt(40))
    np.testing.assert_allclose(johnson_t(x, 1.0), expected, rtol=1e-12)
    assert t_critical(40, 3, 1e-3) == pytest.approx(scipy.stats.t.ppf(1 - 1e-3 / 6, 39), rel=1e-10)
    assert z_critical(1e-3, 4) == pytest.approx(scipy.stats.norm.ppf(1 - 1e-3 / 8), rel=1e-10)
    assert z_critical(1e-3, 4, two_sided=False) == pytest.approx(scipy.stats.norm.ppf(1 - 1e-3 / 4), rel=1e-10)


def test_law_check_power_against_wrong_answers():
    """A wrong answer 10 standard errors away is rejected by design and by the data; one 2 away is
    too close by design; a check against a wrong answer that passed is reported as not rejected."""
    x = np.random.default_rng(4).standard_normal((100, 3))  # se about 0.1
    result = law_check(x, 0.0, {"far": 1.0}, alpha=ALPHA, sure=1e-3, skewness_correction=False, name="law")
    result.assert_passed()
    assert result.alpha == pytest.approx(ALPHA + 1e-3)
    assert [p.name for p in result.details["components"]] == ["law", "law: rejects 'far'"]
    close = law_check(x, 0.0, {"close": 0.2}, alpha=ALPHA, sure=1e-3, name="law")
    close.assert_failed()
    assert "Too weak by design" in close.message() and "'close'" in close.message()
    null = mean_check(x, 0.0, alpha=ALPHA)
    unrejected = wrong_answer_check(null, 1.0, null, sure=1e-3, name="stale")
    assert not unrejected.passed and "Not rejected by the data" in unrejected.message()
    allowance = law_check(x, 0.0, {"within": 0.5}, alpha=ALPHA, allowance=0.45, name="allowance")
    assert not allowance.passed  # 0.5 is only 0.05 beyond the allowance: too close by design


# ---------------------------------------------------------------------------------------------
# moments


def test_moment_check_false_failure_rate():
    """estimate ~ N(e, mcse^2) against an expected value ~ N(e, expected_se^2): z is exactly N(0, 1),
    rate 1 - (1 - alpha/d)^d."""
    d = 4
    rng = np.random.default_rng(5)
    mcse, expected_se = np.array([0.1, 0.2, 0.5, 1.0]), np.array([0.0, 0.1, 0.5, 0.2])
    estimate = 3.0 + mcse * rng.standard_normal((SIMULATIONS, d))
    expected = 3.0 + expected_se * rng.standard_normal((SIMULATIONS, d))
    z = (estimate - expected) / np.sqrt(mcse**2 + expected_se**2)
    fails = np.any(np.abs(z) > z_critical(ALPHA, d), axis=-1)
    for j in agreement_indices(fails):
        result = moment_check(estimate[j], mcse, expected[j], expected_se=expected_se, alpha=ALPHA)
        assert result.passed == (not fails[j]), result.message()
    assert_rate(fails, SIMULATIONS, family_rate(ALPHA / d, d))


def test_moment_check_power_at_detectable():
    d, allowance = 3, np.array([0.0, 0.1, 0.2])
    mcse = np.array([0.05, 0.1, 0.2])
    detectable = moment_check(np.zeros(d), mcse, 0.0, allowance=allowance, alpha=ALPHA).detectable
    np.testing.assert_allclose(detectable, allowance + (z_critical(ALPHA, d) + Z_POWER) * mcse, rtol=1e-12)
    estimate = mcse * np.random.default_rng(6).standard_normal((POWER_SIMULATIONS, d))
    estimate[:, 2] += detectable[2]
    upper, lower = (estimate - allowance) / mcse, (estimate + allowance) / mcse
    fails = np.any((upper > z_critical(ALPHA, d)) | (lower < -z_critical(ALPHA, d)), axis=-1)
    assert_rate(fails, POWER_SIMULATIONS, POWER, alternative="less")


def test_moment_law_check():
    result = moment_law_check(np.array([1.0, 2.0]), np.array([0.01, 0.02]), np.array([1.0, 2.01]),
                              {"halved": np.array([0.5, 1.0])}, alpha=1e-3, name="moments")
    result.assert_passed()
    moment_law_check(np.array([1.0]), np.array([0.1]), np.array([1.0]), {"near": np.array([1.3])},
                     alpha=1e-3).assert_failed()


def test_expectation_mcse_is_the_metrics_mcse():
    """For f(x) = x and x^2 the helper gives sgbench.reference.metrics.moment_mcse's MCSE (AR(1) chains)."""
    rng = np.random.default_rng(7)
    x = np.zeros((4, 300, 2))
    for t in range(1, 300):
        x[:, t] = np.array([0.5, 0.9]) * x[:, t - 1] + rng.standard_normal((4, 2))
    reference = moment_mcse(x)
    for values, mcse in ((x, reference.mean), (x**2, reference.second_moment)):
        result = expectation_mcse(values)
        np.testing.assert_allclose(result.mcse, mcse, rtol=1e-10)
        np.testing.assert_allclose(result.estimate, values.mean(axis=(0, 1)), rtol=1e-12)
        assert np.all(result.ess < 1200)  # autocorrelated: fewer than the 1200 draws


# ---------------------------------------------------------------------------------------------
# normal_draws


def test_normal_draws_check_false_failure_rate_and_power():
    """z-tests of the means and chi-square tests of the variances of K = 30 Gaussian draws in d = 2:
    exact rate 1 - (1 - alpha/(2d))^(2d) (two-sided tests at alpha/(2d) each; the mean and variance
    of Gaussian draws are independent);
    a mean shifted by its reported detectable deviation is rejected with probability >= 0.9."""
    k, d = 30, 2
    mean, variance = np.array([1.0, -2.0]), np.array([0.5, 4.0])
    rng = np.random.default_rng(8)
    y = mean + np.sqrt(variance) * rng.standard_normal((SIMULATIONS, k, d))

    def fails_of(y):
        critical = z_critical(ALPHA, 2 * d)
        z = (y.mean(axis=1) - mean) / np.sqrt(variance / k)
        c = (k - 1) * y.var(axis=1, ddof=1) / variance
        low, high = scipy.special.chdtri(k - 1, 1 - ALPHA / (4 * d)), scipy.special.chdtri(k - 1, ALPHA / (4 * d))
        return np.any((np.abs(z) > critical) | (c < low) | (c > high), axis=-1)

    fails = fails_of(y)
    for j in agreement_indices(fails):
        assert normal_draws_check(y[j], mean, variance, alpha=ALPHA).passed == (not fails[j])
    assert_rate(fails, SIMULATIONS, family_rate(ALPHA / (2 * d), 2 * d))
    detectable = normal_draws_check(y[0], mean, variance, alpha=ALPHA).detectable
    shifted = y[:POWER_SIMULATIONS].copy()
    shifted[..., 0] += detectable[0, 0]
    assert_rate(fails_of(shifted), POWER_SIMULATIONS, POWER, alternative="less")


# ---------------------------------------------------------------------------------------------
# b2_bound


B2_NULLS = {  # standard errors, floor, replicates behind the standard errors (None: known), exact
    "equal-known-exact": (np.full(5, 0.02), 0.0, None, True),
    "unequal-floor": (np.array([0.01, 0.02, 0.03, 0.02, 0.05]), 0.03**2, None, False),
    "estimated-shared-exact": (np.full(5, 0.02), 0.0, 10, True),
    "estimated-per-coordinate": (np.array([0.01, 0.02, 0.03, 0.02, 0.05]), 0.01**2, 10, False),
}


@pytest.mark.parametrize("case", list(B2_NULLS))
def test_b2_check_false_failure_rate(case):
    """r_i = delta_i + tau_i Z_i with mean_i delta_i^2 = floor (all delta_i equal). Exact rate alpha
    without floor and with equal known tau, or with one estimated tau shared by all coordinates
    (df = 10: the F law); at most alpha with a floor or unequal, separately estimated tau."""
    tau, floor, df, exact = B2_NULLS[case]
    d = tau.size
    rng = np.random.default_rng(9)
    r = math.sqrt(floor) + tau * rng.standard_normal((SIMULATIONS, d))
    if df is None:
        estimated = np.broadcast_to(tau, r.shape)
    elif exact:  # one variance estimate with df degrees of freedom, shared
        estimated = tau * np.sqrt(rng.chisquare(df, (SIMULATIONS, 1)) / df) * np.ones(d)
    else:
        estimated = tau * np.sqrt(rng.chisquare(df, (SIMULATIONS, d)) / df)
    threshold = math.sqrt(floor) + estimated.max(axis=1) * b2_noise_bound(np.ones(d), alpha=ALPHA, df=df)
    fails = np.sqrt(np.mean(r**2, axis=1)) > threshold
    for j in agreement_indices(fails):
        assert b2_check(r[j], estimated[j], alpha=ALPHA, floor=floor, df=df).passed == (not fails[j])
    assert_rate(fails, SIMULATIONS, ALPHA, alternative="two-sided" if exact else "greater")


def test_b2_check_power_at_detectable():
    tau = np.array([0.01, 0.02, 0.03, 0.02, 0.05])
    floor = 0.02**2
    detectable = b2_check(np.zeros(5), tau, alpha=ALPHA, floor=floor).detectable
    q, q90 = scipy.stats.chi2.ppf(1 - ALPHA, 5), scipy.stats.chi2.ppf(POWER, 5)
    assert detectable == pytest.approx((0.02 + 0.05 * math.sqrt(q / 5) + 0.05 * math.sqrt(q90 / 5)) ** 2, rel=1e-12)
    signs = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    r = signs * math.sqrt(detectable) + tau * np.random.default_rng(10).standard_normal((POWER_SIMULATIONS, 5))
    threshold = math.sqrt(floor) + b2_noise_bound(tau, alpha=ALPHA)
    assert_rate(np.sqrt(np.mean(r**2, axis=1)) > threshold, POWER_SIMULATIONS, POWER, alternative="less")


# ---------------------------------------------------------------------------------------------
# p_values, family, empirical


def test_p_value_check_false_failure_rate():
    """Holm over m = 6 independent uniform p-values: the family fails iff min p <= alpha/m, exact
    rate 1 - (1 - alpha/m)^6. Detectable is NaN unless given."""
    m = 6
    p = np.random.default_rng(11).uniform(size=(SIMULATIONS, m))
    fails = holm(p, ALPHA).any(axis=-1)
    np.testing.assert_array_equal(fails, p.min(axis=-1) <= ALPHA / m)
    for j in agreement_indices(fails):
        result = p_value_check(p[j], alpha=ALPHA)
        assert result.passed == (not fails[j])
        assert result.passed == p_value_check(p[j], alpha=ALPHA, method="bonferroni").passed
    assert_rate(fails, SIMULATIONS, family_rate(ALPHA / m, m))
    assert math.isnan(p_value_check(p[0], alpha=ALPHA).detectable)


def test_holm_and_bonferroni():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_array_equal(holm(p, 0.05), [True, False, False, True])  # 0.005 <= .0125, .01 <= .0167, .03 > .025
    np.testing.assert_array_equal(holm(np.stack([p, p[::-1]]), 0.05)[1], [True, False, False, True][::-1])
    assert bonferroni(0.05, 4) == 0.0125
    result = p_value_check(p, alpha=0.05)
    assert not result.passed and result.statistic == pytest.approx(0.02)
    np.testing.assert_array_equal(result.details["rejected"], [True, False, False, True])


def test_empirical_null_false_failure_rate():
    """Heavy-tailed (Cauchy) statistics, n = 199 null runs: k = floor(0.01 x 200) = 2, and a new
    exchangeable statistic exceeds the 2nd largest with probability exactly 2/200."""
    n = 199
    rng = np.random.default_rng(12)
    null, statistic = rng.standard_cauchy((SIMULATIONS, n)), rng.standard_cauchy(SIMULATIONS)
    k = EmpiricalNull(null[0]).rank(ALPHA)
    assert k == 2
    fails = statistic > np.sort(null, axis=1)[:, -k]
    for j in agreement_indices(fails):
        result = EmpiricalNull(null[j]).check(statistic[j], ALPHA)
        assert result.passed == (not fails[j]) and result.details["exact_rate"] == pytest.approx(0.01)
    assert_rate(fails, SIMULATIONS, k / (n + 1))
    assert math.isnan(EmpiricalNull(null[0]).check(0.0, ALPHA).detectable)


def test_all_of_and_results():
    x = np.random.default_rng(13).standard_normal((30, 2))
    good = mean_check(x, 0.0, alpha=1e-3, name="good")
    bad = mean_check(x, 5.0, alpha=1e-3, name="bad")
    family = all_of([good, bad], name="both")
    assert not family.passed and family.alpha == pytest.approx(2e-3) and family.details["failed"] == ["bad"]
    assert family.statistic == bad.statistic
    assert all_of([good, good], name="twice").passed
    with pytest.raises(AssertionError, match=r"both: FAILED \(1 of 2 parts failed[\s\S]*bad: FAILED"):
        family.assert_passed()
    with pytest.raises(AssertionError) as error:
        bad.assert_passed()
    text = str(error.value)
    for piece in ("bad: FAILED", "Estimate", "+-", "expected", "threshold", "alpha = 0.001", "probability 0.9"):
        assert piece in text
    bad.assert_failed()
    with pytest.raises(AssertionError, match="expected to fail"):
        good.assert_failed()
    assert good.assert_passed() is good
    rows = [r.as_row() for r in (good, bad, family, b2_check(np.zeros(3), np.ones(3), alpha=0.1),
                                 p_value_check([0.5, 0.2], alpha=0.1), EmpiricalNull(np.arange(20.0)).check(3.0, 0.1))]
    for row in rows:
        assert all(isinstance(v, bool | int | float | str) for v in row.values()), row
    table = pd.DataFrame(rows)
    assert list(table["passed"]) == [True, False, False, True, True, True]
    assert rows[0]["num_coordinates"] == 2 and rows[0]["comparisons"] == 2
    assert isinstance(CheckResult("x", True, 0.1, 0.0, 1.0).as_row()["estimate"], float)


# ---------------------------------------------------------------------------------------------
# Bad input


BAD_INPUT = [
    (lambda: mean_check(np.zeros((5, 2)), 0.0, alpha=0.0), r"alpha must be a number in \(0, 1\)"),
    (lambda: mean_check(np.zeros((5, 2)), 0.0, alpha=1.0), r"alpha must be a number in \(0, 1\)"),
    (lambda: mean_check(np.zeros((5, 2)), 0.0, alpha=-0.1), r"alpha must be a number in \(0, 1\)"),
    (lambda: mean_check(np.zeros((1, 2)), 0.0, alpha=0.1), "at least 2 replicates"),
    (lambda: mean_check(np.zeros((5, 2)), np.zeros(3), alpha=0.1), r"expected must have the coordinates' shape \(2,\)"),
    (lambda: mean_check(np.zeros((5, 2)), 0.0, alpha=0.1, allowance=-1.0), "allowance must be >= 0"),
    (lambda: mean_check(np.zeros((5, 2)), 0.0, alpha=0.1, alternative="both"), "alternative must be one of"),
    (lambda: mean_check(np.full((5, 2), np.nan), 0.0, alpha=0.1), "x must be finite"),
    (lambda: t_critical(1, 3, 0.01), "num_replicates must be an integer >= 2"),
    (lambda: t_critical(10, 0, 0.01), "comparisons must be an integer >= 1"),
    (lambda: moment_check(np.zeros(3), np.zeros(3), 0.0, alpha=0.1), "mcse must be > 0"),
    (lambda: moment_check(np.zeros(3), 1.0, np.zeros(2), alpha=0.1), r"expected must have the coordinates' shape"),
    (lambda: moment_check(np.zeros(3), 1.0, 0.0, expected_se=-1.0, alpha=0.1), "expected_se must be >= 0"),
    (lambda: moment_check(0.0, 1.0, 0.0, alpha=2.0), r"alpha must be a number in \(0, 1\)"),
    (lambda: b2_check(np.zeros(3), np.ones(3), alpha=0.1, floor=-1e-4), "floor must be >= 0"),
    (lambda: b2_check(np.zeros(3), np.ones(2), alpha=0.1), r"standard_errors must have the coordinates' shape \(3,\)"),
    (lambda: b2_check(np.zeros(3), np.zeros(3), alpha=0.1), "standard_errors must be > 0"),
    (lambda: b2_check(np.zeros(3), np.ones(3), alpha=0.1, df=0), "df must be an integer >= 1"),
    (lambda: b2_check(np.zeros(3), np.ones(3), alpha=1.5), r"alpha must be a number in \(0, 1\)"),
    (lambda: p_value_check([0.5, 1.5], alpha=0.1), r"p_values must be one or more numbers in \[0, 1\]"),
    (lambda: p_value_check([], alpha=0.1), r"p_values must be one or more numbers in \[0, 1\]"),
    (lambda: p_value_check([0.5], alpha=0.1, method="fdr"), "method must be one of"),
    (lambda: holm([0.5, -0.1], 0.1), r"p_values must be at least one number in \[0, 1\]"),
    (lambda: bonferroni(0.1, 0), "m must be an integer >= 1"),
    (lambda: EmpiricalNull(np.zeros(50)).threshold(0.01), "alpha=0.01 needs at least 99 null statistics.*n=50"),
    (lambda: EmpiricalNull(np.zeros((2, 3))), "null_statistics must be a vector"),
    (lambda: normal_draws_check(np.zeros((10, 2)), 0.0, 0.0, alpha=0.1), "variance must be > 0"),
    (lambda: normal_draws_check(np.zeros((10, 2)), np.zeros(3), 1.0, alpha=0.1), r"mean must have the coordinates"),
    (lambda: law_check(np.eye(5, 2), 0.0, {"w": 1.0}, alpha=0.1, sure=0.0), r"sure must be a number in \(0, 1\)"),
    (lambda: law_check(np.eye(5, 2), 0.0, {"w": np.zeros(3)}, alpha=0.1), "wrong answer 'w' must have"),
    (lambda: all_of([], name="none"), "results must be one or more CheckResult"),
    (lambda: binomial_p_values(5, 3, 0.5), "0 <= successes <= trials"),
]


@pytest.mark.parametrize("call,message", BAD_INPUT, ids=[m for _, m in BAD_INPUT])
def test_bad_input_names_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_johnson_t_never_accepts_a_huge_deviation():
    """Past its turning point Johnson's t falls back towards 0; the statistic then is Student's t,
    so a mean far below expected (here 10^3 standard errors, against positive skewness) fails."""
    x = np.random.default_rng(0).exponential(size=(20, 1))
    far = x.mean() + 1e3 * x.std(ddof=1) / np.sqrt(20)
    assert johnson_t(x, far)[0] < -100
    mean_check(x, [far], alpha=1e-3).assert_failed()
