r"""b^2 against closed forms and its null distribution under exact sampling.

For a zero-mean Gaussian coordinate with variance s^2 and n exact draws,
:math:`\hat E[x^2] = s^2 W/n` with :math:`W \sim \chi^2_n`, so
:math:`b^2 = (W/n - 1)^2 / 2` exactly: :math:`P(b^2 \le y) = F_n(n(1+\sqrt{2y})) - F_n(n(1-\sqrt{2y}))`
and :math:`E[b^2] = 1/n`. The tests compare replicated b^2 of exact ICG draws with that law
(KS test) and its mean (z-test), each at false-failure rate ALPHA; their power is checked by
the same tests rejecting draws whose variance is 10 % too large.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.stats

from sgbench import targets
from sgbench.reference.checks import p_value_check
from sgbench.reference.metrics import Moments, b2, b2_summary
from tests.test_ksd import z_test

ALPHA = 1e-3
DRAWS_PER_REPLICATE = 50
REPLICATES = 4000


def exact_b2_cdf(y, n):
    half_width = np.sqrt(2 * np.asarray(y))
    return scipy.stats.chi2.cdf(n * (1 + half_width), n) - scipy.stats.chi2.cdf(n * (1 - half_width), n)


def replicated_b2(scale=1.0):
    """b^2 (per dimension) of REPLICATES independent sets of exact ICG draws, variance x scale."""
    target = targets.get("icg")
    draws = np.asarray(target.sample(jax.random.key(3), REPLICATES * DRAWS_PER_REPLICATE)) * np.sqrt(scale)
    second_moments = (draws.reshape(REPLICATES, DRAWS_PER_REPLICATE, target.dim) ** 2).mean(axis=1)
    return b2(second_moments, target.truth, over_dims="none")


def test_b2_closed_form():
    truth = targets.get("icg", dim=2, condition_number=4.0).truth
    estimate = truth.second_moment + np.array([1.0, -2.0])
    expected = np.array([1.0, 4.0]) / truth.second_moment_var
    np.testing.assert_allclose(b2(estimate, truth, "none"), expected)
    np.testing.assert_allclose(b2(estimate, truth), expected.mean())
    np.testing.assert_allclose(b2(estimate, truth, "max"), expected.max())
    assert b2(truth.second_moment, truth) == 0


def test_b2_of_exact_draws_follows_its_exact_law():
    per_dim = replicated_b2()
    # Coordinates are correlated through the rotation; replicates are independent: one
    # coordinate per test keeps the KS sample iid.
    p = [scipy.stats.kstest(per_dim[:, dim], lambda y: exact_b2_cdf(y, DRAWS_PER_REPLICATE)).pvalue for dim in (0, 9)]
    p_value_check(p, alpha=ALPHA, method="bonferroni", name="KS tests of b^2 in dimensions 0 and 9").assert_passed()
    z_test(per_dim.mean(axis=1), 1 / DRAWS_PER_REPLICATE, alpha=ALPHA).assert_passed()


def test_b2_null_tests_reject_a_ten_percent_variance_error():
    per_dim = replicated_b2(scale=1.1)
    p = scipy.stats.kstest(per_dim[:, 0], lambda y: exact_b2_cdf(y, DRAWS_PER_REPLICATE)).pvalue
    p_value_check([p], alpha=ALPHA / 2, name="KS test of a 10 % variance error").assert_failed()


def test_summary_pools_averages_and_bootstraps_over_chains():
    truth = targets.get("icg").truth
    rng = np.random.default_rng(0)
    chain_moments = truth.second_moment * (1 + 0.1 * rng.standard_normal((10, truth.dim)))
    summary = b2_summary(chain_moments, truth, num_bootstrap=20000)
    per_chain = b2(chain_moments, truth)
    np.testing.assert_allclose(summary.per_chain, per_chain)
    assert summary.chain_average == pytest.approx(per_chain.mean())
    assert summary.pooled == pytest.approx(b2(chain_moments.mean(axis=0), truth))
    # Bootstrap std of a mean of C iid values is sd * sqrt((C-1)/C) / sqrt(C) (plug-in);
    # with 20000 resamples its relative Monte Carlo error is ~0.5 %, so 5 % is > 10 sigma.
    plug_in = per_chain.std(ddof=0) / np.sqrt(len(per_chain))
    assert summary.chain_average_bootstrap_std == pytest.approx(plug_in, rel=0.05)
    assert summary.pooled_bootstrap_std > 0


def test_b2_rejects_a_dimension_mismatch():
    truth = targets.get("icg").truth
    with pytest.raises(ValueError, match="dimensions"):
        b2(np.ones(3), truth)
    with pytest.raises(ValueError, match="over_dims"):
        b2(truth.second_moment, truth, over_dims="median")


def test_b2_from_streamed_moments_equals_b2_from_samples():
    target = targets.get("icg")
    draws = np.asarray(target.sample(jax.random.key(5), 3000)).reshape(3, 1000, target.dim)
    streamed = Moments.empty((3,), target.dim)
    for t in range(1000):
        streamed = streamed.update(draws[:, t], np.ones(3, bool))
    stored = b2((draws**2).mean(1), target.truth)
    np.testing.assert_allclose(b2(streamed.second_moment, target.truth), stored, rtol=1e-10)


def test_one_chain_has_no_bootstrap_spread_and_the_report_says_so(tmp_path, capsys):
    """With one chain the bootstrap has nothing to resample: its standard deviations are NaN, not 0, and
    ``sgbench run`` writes "± n/a (one chain)", never "± 0"."""
    from sgbench.bench.cli import main

    truth = targets.get("icg", dim=4).truth
    summary = b2_summary(np.ones((1, 4)), truth)
    assert np.isnan(summary.chain_average_bootstrap_std) and np.isnan(summary.pooled_bootstrap_std)
    assert np.isfinite(summary.pooled)
    status = main(["run", "--sampler", "sgld", "--target", "icg", "--step-size", "0.01", "--num-chains", "1",
                   "--num-steps", "200", "--db", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "out"),
                   "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0 and "± n/a (one chain)" in out and "± 0" not in out
