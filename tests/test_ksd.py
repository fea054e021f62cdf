r"""KSD with the IMQ kernel against an independent double loop, its null and alternative
behaviour, stochastic scores, and bad input.

Statistical checks are z-tests of a replicated mean at false-failure rate ALPHA (two-sided), the
replicates independent sets of exact draws of a 3-d Gaussian (icg, condition number 10):

- null: the U-statistic of exact draws has mean 0 (it is unbiased for KSD^2 = 0);
- power: draws with coordinate 0 shifted by SHIFT = 0.5 of its standard deviation give a mean U
  17 standard errors above 0 with these sizes (observed; 8.2 at 0.3 sd, 4.4 at 0.2 sd), so the
  z-test rejects it with probability ~1;
- stochastic scores (isotropic noise of variance NOISE_VARIANCE, an independent draw per sample):
  the U-statistic keeps its expectation (every off-diagonal term is linear in each of two
  independent noises), while the V-statistic gains exactly c^{2 beta} d NOISE_VARIANCE / n in
  expectation (its diagonal terms hold |s + e|^2). Both are tested on the paired differences
  stochastic - full batch of the same draws.
"""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest

from sgbench import targets
from sgbench.reference.checks import moment_check, standard_error
from sgbench.reference.metrics import get
from sgbench.reference.metrics.ksd import ksd, ksd_of_target

ALPHA = 1e-3
REPLICATES = 400
DRAWS = 50
SHIFT = 0.5
NOISE_VARIANCE = 1.0


def imq_stein_kernel(x, y, sx, sy, c, beta):
    """k_0(x, y) for k = (c^2 + |x - y|^2)^beta, from the partial derivatives written out:
    dk/dx_a = 2 beta u^(beta-1) r_a, dk/dy_a = -dk/dx_a, d2k/dx_a dy_a = -2 beta u^(beta-1)
    - 4 beta (beta-1) u^(beta-2) r_a^2 (r = x - y, u = c^2 + |r|^2)."""
    value = 0.0
    r = [x[a] - y[a] for a in range(len(x))]
    u = c * c + sum(ra * ra for ra in r)
    for a in range(len(x)):
        dk_dx = 2 * beta * u ** (beta - 1) * r[a]
        d2k = -2 * beta * u ** (beta - 1) - 4 * beta * (beta - 1) * u ** (beta - 2) * r[a] ** 2
        value += sx[a] * sy[a] * u**beta + sx[a] * (-dk_dx) + sy[a] * dk_dx + d2k
    return value


def double_loop(x, s, c, beta):
    """(V, U) statistics by an O(n^2) loop over all pairs."""
    n = len(x)
    total = diagonal = 0.0
    for i in range(n):
        for j in range(n):
            k0 = imq_stein_kernel(x[i], x[j], s[i], s[j], c, beta)
            total += k0
            diagonal += k0 if i == j else 0.0
    return total / n**2, (total - diagonal) / (n * (n - 1))


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((30, 3)) * [1.0, 2.0, 0.5] + 3.0
    s = -x + 0.5 * rng.standard_normal((30, 3))
    return x, s


@pytest.mark.parametrize("c, beta", [(1.0, -0.5), (0.3, -0.9), (2.5, -0.1)])
def test_ksd_equals_a_double_loop(small, c, beta):
    x, s = small
    v, u = double_loop(x, s, c, beta)
    for block_size in (4, 7, 30, 64):  # 4 and 7 do not divide n = 30; 64 > n
        assert ksd(x, s, c=c, beta=beta, block_size=block_size) == pytest.approx(v, rel=1e-10, abs=1e-12)
        assert ksd(x, s, c=c, beta=beta, statistic="u", block_size=block_size) == pytest.approx(
            u, rel=1e-10, abs=1e-12)
    assert ksd(x, s, c=c, beta=beta, dtype="float32", block_size=7) == pytest.approx(v, rel=1e-4)


def test_pooling_per_chain_and_thinning(small):
    x, s = small
    chains, scores = x.reshape(3, 10, 3), s.reshape(3, 10, 3)
    assert ksd(chains, scores, statistic="u") == pytest.approx(ksd(x, s, statistic="u"), rel=1e-12)
    per_chain = ksd(chains, scores, over_chains="per_chain")
    np.testing.assert_allclose(per_chain, [ksd(a, b) for a, b in zip(chains, scores)], rtol=1e-12)
    assert ksd(x, s, thin=3) == pytest.approx(ksd(x[2::3], s[2::3]), rel=1e-12)
    assert get("ksd") is ksd


def test_ksd_of_target_uses_the_exact_scores():
    target = targets.get("icg", dim=3, condition_number=10.0)
    x = np.asarray(target.sample(jax.random.key(0), 40)).reshape(2, 20, 3)
    expected = ksd(x[:, 1::2], target.grad_logdensity(x[:, 1::2]), beta=-0.3, over_chains="per_chain")
    np.testing.assert_allclose(ksd_of_target(x, target, thin=2, beta=-0.3, over_chains="per_chain"),
                               expected, rtol=1e-12)


def replicated_draws(shift=0.0, seed=2):
    target = targets.get("icg", dim=3, condition_number=10.0, noise="isotropic", noise_variance=NOISE_VARIANCE)
    x = np.array(target.sample(jax.random.key(seed), REPLICATES * DRAWS)).reshape(REPLICATES, DRAWS, 3)
    x[..., 0] += shift * np.sqrt(target.covariance[0, 0])
    return target, x


def z_test(values, expected=0.0, alternative="two-sided", alpha=ALPHA):
    """z-test of the mean of independent replicates ``values`` (standard error from their spread) at
    ``alpha`` two-sided; one-sided ("greater") at the same critical value, so at rate ``alpha`` / 2."""
    return moment_check(np.mean(values), standard_error(values), expected, alternative=alternative,
                        alpha=alpha if alternative == "two-sided" else alpha / 2)


def test_u_statistic_of_exact_draws_has_mean_zero_and_detects_a_shift():
    target, x = replicated_draws()
    null = ksd(x, target.grad_logdensity(x), statistic="u", over_chains="per_chain")
    z_test(null).assert_passed()
    target, shifted = replicated_draws(SHIFT, seed=3)
    alternative = ksd(shifted, target.grad_logdensity(shifted), statistic="u", over_chains="per_chain")
    z_test(alternative, alternative="greater").assert_failed()


def test_stochastic_scores_keep_the_u_statistic_and_bias_the_v_statistic():
    target, x = replicated_draws(seed=4)
    c, beta = 1.0, -0.5
    exact, noisy = (
        {stat: ksd_of_target(x, target, stochastic=stochastic, key=jax.random.key(5), c=c, beta=beta,
                             statistic=stat, over_chains="per_chain") for stat in ("u", "v")}
        for stochastic in (False, True))
    z_test(noisy["u"] - exact["u"]).assert_passed()
    v_bias = c ** (2 * beta) * target.dim * NOISE_VARIANCE / DRAWS
    z_test(noisy["v"] - exact["v"], v_bias).assert_passed()
    z_test(noisy["v"] - exact["v"], alternative="greater").assert_failed()  # the bias is visible at this size


def test_bad_input_is_reported():
    x = np.zeros((10, 2))
    with pytest.raises(ValueError, match="scores must have the shape"):
        ksd(x, np.zeros((10, 3)))
    with pytest.raises(ValueError, match=r"samples must have shape"):
        ksd(np.zeros(10), np.zeros(10))
    bad = np.ones((10, 2))
    bad[[2, 5], 1] = np.nan
    with pytest.raises(ValueError, match=r"samples has non-finite values .* in 2 of 10 draws"):
        ksd(bad, x)
    with pytest.raises(ValueError, match=r"scores has non-finite values .* in 1 of 10 draws"):
        ksd(x, np.where(np.arange(10)[:, None] == 3, np.inf, x))
    for keyword, value, message in [("c", 0.0, "c must be a finite number > 0"),
                                    ("beta", -1.0, r"beta must be a number in \(-1, 0\)"),
                                    ("beta", 0.0, r"beta must be a number in \(-1, 0\)"),
                                    ("statistic", "w", "statistic must be one of"),
                                    ("over_chains", "each", "over_chains must be one of"),
                                    ("thin", 11, r"thin must be an integer in \[1, n=10\]"),
                                    ("block_size", 0, "block_size must be an integer >= 1")]:
        with pytest.raises(ValueError, match=message):
            ksd(x, x, **{keyword: value})
    with pytest.raises(ValueError, match="at least 2 draws"):
        ksd(x, x, thin=6)
    target = targets.get("icg", dim=2)
    with pytest.raises(ValueError, match="key must be a JAX PRNG key"):
        ksd_of_target(x, target, stochastic=True)
    with pytest.raises(ValueError, match="dimension 3"):
        ksd_of_target(np.zeros((10, 2)), targets.get("icg", dim=3))


def test_blockwise_equals_unblocked_on_a_larger_input():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((257, 20))
    s = -x + 0.1 * rng.standard_normal(x.shape)
    values = [ksd(x, s, statistic=stat, block_size=b) for stat, b in itertools.product("uv", (16, 100, 257))]
    np.testing.assert_allclose(values[:3], values[0], rtol=1e-12)
    np.testing.assert_allclose(values[3:], values[3], rtol=1e-12)
