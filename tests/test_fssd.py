r"""FSSD against a direct computation, its null and alternative behaviour, the test's p-values,
the optimisation of the test locations, and bad input.

Draws are exact draws of a 3-d Gaussian (icg, condition number 10); alternatives shift coordinate
0 by SHIFT = 0.5 of its standard deviation, or scale the draws by SCALE = 1.2. False-failure rate
ALPHA per check:

- U-statistic at fixed locations: mean 0 under the null (two-sided z-test over REPLICATES
  replicates), mean > 0 under the shift (observed z about 13: power ~1);
- p-values of ``fssd_test`` (locations optimised, the default) of NULL_TESTS null replicates:
  KS test of uniformity at ALPHA (the null law is asymptotic in n and uses an estimated covariance;
  observed: KS p-value 0.8, 4.5 % of p-values below 0.05);
- power under the shift at n = 1000: p < 0.01 in all of 20 replications observed; the check asks
  for at least 15 of 20 (false failure needs a power below ~0.9);
- optimisation: the training criterion never decreases; under the scale alternative the criterion
  of the optimised parameters on fresh draws (n = 5000) exceeds that of the initial parameters
  (paired z-test over 20 replications; observed z about 5, and the test's power at level 0.01
  went from 1 to 11 of 20 replications).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from sgbench import targets
from sgbench.reference.checks import p_value_check
from sgbench.reference.metrics import get
from sgbench.reference.metrics.fssd import fssd, fssd_test, power_criterion, stein_features
from tests.test_ksd import z_test

ALPHA = 1e-3
SHIFT = 0.5
SCALE = 1.2
REPLICATES = 400
NULL_TESTS = 200


@pytest.fixture(scope="module")
def target():
    return targets.get("icg", dim=3, condition_number=10.0)


def draws(target, n, seed, shift=0.0, scale=1.0):
    x = np.array(target.sample(jax.random.key(seed), n)) * scale
    x[..., 0] += shift * np.sqrt(target.covariance[0, 0])
    return x, target.grad_logdensity(x)


def direct_fssd(x, s, locations, sigma):
    """(V, U) from xi(x, v) = s(x) k(x, v) + grad_x k(x, v), written per location and pair."""
    n, d = x.shape
    num_locations = len(locations)
    tau = np.zeros((n, num_locations * d))
    for i in range(n):
        for j, v in enumerate(locations):
            k = np.exp(-np.sum((x[i] - v) ** 2) / (2 * sigma**2))
            grad_k = -k * (x[i] - v) / sigma**2
            tau[i, j * d:(j + 1) * d] = (s[i] * k + grad_k) / np.sqrt(d * num_locations)
    u = sum(tau[i] @ tau[k] for i in range(n) for k in range(n) if i != k) / (n * (n - 1))
    v_stat = sum(np.sum(np.mean(tau[:, j * d:(j + 1) * d], axis=0) ** 2) for j in range(num_locations))
    return v_stat, u


def test_fssd_equals_a_direct_computation(target):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((30, 3)) * 2.0
    s = -x + 0.5 * rng.standard_normal(x.shape)
    locations = rng.standard_normal((4, 3))
    for sigma in (0.7, 2.0):
        v, u = direct_fssd(x, s, locations, sigma)
        assert fssd(x, s, locations, sigma) == pytest.approx(u, rel=1e-10, abs=1e-14)
        assert fssd(x, s, locations, sigma, statistic="v") == pytest.approx(v, rel=1e-10)
    chains, scores = x.reshape(3, 10, 3), s.reshape(3, 10, 3)
    assert fssd(chains, scores, locations, 1.0) == pytest.approx(fssd(x, s, locations, 1.0), rel=1e-12)
    np.testing.assert_allclose(fssd(chains, scores, locations, 1.0, over_chains="per_chain"),
                               [fssd(a, b, locations, 1.0) for a, b in zip(chains, scores)], rtol=1e-12)
    assert fssd(x, s, locations, 1.0, thin=2) == pytest.approx(fssd(x[1::2], s[1::2], locations, 1.0), rel=1e-12)
    assert get("fssd") is fssd


def test_u_statistic_has_mean_zero_under_the_null_and_grows_under_a_shift(target):
    locations = np.array(target.sample(jax.random.key(99), 5))
    x, s = draws(target, REPLICATES * 50, 1)
    null = fssd(x.reshape(REPLICATES, 50, 3), s.reshape(REPLICATES, 50, 3), locations, 1.0, over_chains="per_chain")
    z_test(null, alpha=ALPHA).assert_passed()
    x, s = draws(target, REPLICATES * 50, 2, shift=SHIFT)
    alternative = fssd(x.reshape(REPLICATES, 50, 3), s.reshape(REPLICATES, 50, 3), locations, 1.0,
                       over_chains="per_chain")
    z_test(alternative, alternative="greater", alpha=ALPHA).assert_failed()


def test_pvalues_are_uniform_under_the_null(target):
    pvalues = [fssd_test(*draws(target, 500, 100 + r), num_locations=5, seed=r).pvalue for r in range(NULL_TESTS)]
    ks = scipy.stats.kstest(pvalues, "uniform").pvalue
    p_value_check([ks], alpha=ALPHA, name="KS test of the null p-values").assert_passed()


def test_pvalues_are_small_under_a_shift(target):
    pvalues = np.array([fssd_test(*draws(target, 1000, 300 + r, shift=SHIFT), num_locations=5, seed=r).pvalue
                        for r in range(20)])
    assert np.sum(pvalues < 0.01) >= 15


def held_out_criterion(target, result, x):
    tau = stein_features(jnp.asarray(x), jnp.asarray(target.grad_logdensity(x)), jnp.asarray(result.locations),
                         result.sigma)
    return float(power_criterion(tau, 0.0))


def test_optimisation_increases_the_power_criterion(target):
    gains = []
    for r in range(20):
        x, s = draws(target, 1000, 500 + r, scale=SCALE)
        fresh, _ = draws(target, 5000, 700 + r, scale=SCALE)
        start = fssd_test(x, s, num_locations=5, seed=r, optimise=False)
        tuned = fssd_test(x, s, num_locations=5, seed=r)
        assert start.criterion_final == start.criterion_initial == pytest.approx(tuned.criterion_initial)
        assert tuned.criterion_final >= tuned.criterion_initial
        gains.append(held_out_criterion(target, tuned, fresh) - held_out_criterion(target, start, fresh))
    z_test(gains, alternative="greater", alpha=ALPHA).assert_failed()


def test_given_locations_and_width_are_used(target):
    x, s = draws(target, 200, 7)
    locations = np.array([[0.0, 0.0, 0.0], [1.0, -1.0, 0.5]])
    result = fssd_test(x, s, locations=locations, sigma=1.5, optimise=False)
    np.testing.assert_allclose(result.locations, locations)
    assert result.sigma == pytest.approx(1.5)
    assert (result.num_train, result.num_test) == (40, 160)
    assert 0 < result.pvalue <= 1


def test_bad_input_is_reported(target):
    x, s = draws(target, 50, 8)
    locations = np.zeros((2, 3))
    with pytest.raises(ValueError, match="scores must have the shape"):
        fssd(x, s[:, :2], locations, 1.0)
    bad = x.copy()
    bad[[1, 4, 9]] = np.nan
    with pytest.raises(ValueError, match=r"samples has non-finite values .* in 3 of 50 draws"):
        fssd(bad, s, locations, 1.0)
    with pytest.raises(ValueError, match=r"samples has non-finite values .* in 3 of 50 draws"):
        fssd_test(bad, s)
    with pytest.raises(ValueError, match=r"locations must have shape \(J, 3\)"):
        fssd(x, s, np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="locations must be finite"):
        fssd(x, s, np.full((2, 3), np.nan), 1.0)
    with pytest.raises(ValueError, match="sigma must be a finite number > 0"):
        fssd(x, s, locations, 0.0)
    with pytest.raises(ValueError, match="statistic must be one of"):
        fssd(x, s, locations, 1.0, statistic="w")
    with pytest.raises(ValueError, match=r"train_fraction must be a number in \(0, 1\)"):
        fssd_test(x, s, train_fraction=1.0)
    with pytest.raises(ValueError, match="both need at least 2"):
        fssd_test(x[:5], s[:5], train_fraction=0.1)
    with pytest.raises(ValueError, match="num_locations must be an integer >= 1"):
        fssd_test(x, s, num_locations=0)
    with pytest.raises(ValueError, match="null_draws must be an integer >= 1"):
        fssd_test(x, s, null_draws=0)
