r"""ESS, R-hat and MCSE: equal to ArviZ where ArviZ computes them, the chainwise split R-hat of
MILE on hand-made chains, the streamed classic R-hat equal to its formula on stored draws, and
MCSE of AR(1) chains near its closed form.

AR(1) chains :math:`x_t = \phi x_{t-1} + \sqrt{1-\phi^2}\,\epsilon_t` started in their stationary
law N(0, 1): the mean of N draws has variance :math:`\frac{1+\phi}{1-\phi}/N` asymptotically, and
:math:`x_t^2` (variance 2, autocorrelation :math:`\phi^{2k}`) has mean with variance
:math:`2\frac{1+\phi^2}{1-\phi^2}/N`.
"""

from __future__ import annotations

import math

import arviz as az
import numpy as np
import pytest
import scipy.signal
import scipy.stats

from sgbench.reference.metrics import Moments
from sgbench.reference.metrics.chainwise_rhat import chainwise_split_rhat
from sgbench.reference.metrics.classic_rhat import gelman_rubin_from_moments
from sgbench.reference.metrics.ess import ess
from sgbench.reference.metrics.mcse import moment_mcse
from sgbench.reference.metrics.split_rhat import split_rhat


def ar1_chains(phi, chains, draws, dim, seed):
    """Stationary AR(1) chains (chains, draws, dim) with unit marginal variance."""
    rng = np.random.default_rng(seed)
    noise = np.sqrt(1 - phi**2) * rng.standard_normal((chains, draws, dim))
    noise[:, 0] = rng.standard_normal((chains, dim))
    return scipy.signal.lfilter([1.0], [1.0, -phi], noise, axis=1)


@pytest.fixture(scope="module")
def chains():
    """4 AR(1) chains of 1000 draws in 3 dimensions, the chains slightly shifted and scaled."""
    x = ar1_chains(0.6, 4, 1000, 3, seed=0)
    return x * np.array([1.0, 2.0, 0.5]) + np.array([0.0, 0.1, 0.2, 0.3])[:, None, None]


@pytest.mark.parametrize("method", ["bulk", "tail"])
def test_ess_equals_arviz(chains, method):
    expected = [az.ess(chains[..., i], method=method) for i in range(chains.shape[-1])]
    np.testing.assert_allclose(ess(chains, method), expected, rtol=1e-8)


def test_split_rhat_equals_arviz(chains):
    expected = [az.rhat(chains[..., i], method="rank") for i in range(chains.shape[-1])]
    np.testing.assert_allclose(split_rhat(chains), expected, rtol=1e-8)
    assert np.all(split_rhat(chains) > 1.0)


def test_moment_mcse_equals_arviz(chains):
    result = moment_mcse(chains)
    for i in range(chains.shape[-1]):
        assert result.mean[i] == pytest.approx(az.mcse(chains[..., i], method="mean"), rel=1e-8)
        assert result.second_moment[i] == pytest.approx(az.mcse(chains[..., i] ** 2, method="mean"), rel=1e-8)


def test_moment_mcse_of_ar1_chains_is_near_its_closed_form():
    phi, total = 0.5, 4 * 5000
    result = moment_mcse(ar1_chains(phi, 4, 5000, 2, seed=1))
    # ESS estimates of 20000 draws with tau = 3 have a few % error; 10 % is several sigma.
    np.testing.assert_allclose(result.mean, math.sqrt((1 + phi) / (1 - phi) / total), rtol=0.1)
    np.testing.assert_allclose(result.second_moment, math.sqrt(2 * (1 + phi**2) / (1 - phi**2) / total), rtol=0.1)


def test_chainwise_split_rhat_by_hand():
    # One chain 1..8, split factor 4: sub-chains (1,2), (3,4), (5,6), (7,8), n = 2. Without rank
    # normalisation: W = 1/2, B/n = var(1.5, 3.5, 5.5, 7.5) = 20/3, R = sqrt((W/2 + 20/3)/W) = sqrt(83/6).
    chain = np.arange(1.0, 9.0)[None, :, None]
    assert chainwise_split_rhat(chain, rank_normalize=False)[0, 0] == pytest.approx(math.sqrt(83 / 6), rel=1e-14)
    # Rank-normalised: ranks 1..8 -> z_r = Phi^{-1}((r - 3/8)/(8 + 1/4)) = (-a4, -a3, -a2, -a1, a1, a2, a3, a4).
    a = scipy.stats.norm.ppf((np.arange(5.0, 9.0) - 0.375) / 8.25)
    means = np.array([-(a[3] + a[2]), -(a[1] + a[0]), a[0] + a[1], a[2] + a[3]]) / 2
    within = ((a[3] - a[2]) ** 2 + (a[1] - a[0]) ** 2) / 4  # mean of the four variances, d^2/2 each
    between_over_n = np.sum(means**2) / 3
    expected = math.sqrt((within / 2 + between_over_n) / within)
    assert chainwise_split_rhat(chain)[0, 0] == pytest.approx(expected, rel=1e-13)
    # Draws past the last full sub-chain (here 2 of 10) are left out.
    longer = np.append(chain, [[[-50.0], [60.0]]], axis=1)
    assert chainwise_split_rhat(longer)[0, 0] == pytest.approx(expected, rel=1e-13)
    # Rank normalisation within the chain: invariant under increasing transforms.
    assert chainwise_split_rhat(np.exp(chain))[0, 0] == pytest.approx(expected, rel=1e-13)


def test_chainwise_split_rhat_is_per_chain_and_equals_rhat_of_the_sub_chains(chains):
    result = chainwise_split_rhat(chains, split_factor=4, rank_normalize=False)
    assert result.shape == (4, 3)
    for c in range(4):
        for i in range(3):
            sub_chains = chains[c, :, i].reshape(4, 250)
            assert result[c, i] == pytest.approx(az.rhat(sub_chains, method="identity"), rel=1e-10)
    changed = chains.copy()
    changed[2] += 10.0 * np.linspace(0, 1, 1000)[:, None]  # a trend in chain 2 only
    after = chainwise_split_rhat(changed)
    np.testing.assert_array_equal(after[[0, 1, 3]], chainwise_split_rhat(chains)[[0, 1, 3]])
    assert np.all(after[2] > 1.5)


def test_streamed_classic_rhat_equals_the_formula_on_stored_draws(chains):
    streamed = Moments.empty((4,), 3)
    for t in range(chains.shape[1]):
        streamed = streamed.update(chains[:, t], np.ones(4, bool))
    result = gelman_rubin_from_moments(streamed)
    n = chains.shape[1]
    within = chains.var(axis=1, ddof=1).mean(axis=0)
    between_over_n = chains.mean(axis=1).var(axis=0, ddof=1)
    np.testing.assert_allclose(result, np.sqrt(((n - 1) / n * within + between_over_n) / within), rtol=1e-10)
    expected = [az.rhat(chains[..., i], method="identity") for i in range(3)]
    np.testing.assert_allclose(result, expected, rtol=1e-10)


def test_too_few_chains_or_draws_are_clear_errors(chains):
    with pytest.raises(ValueError, match="samples must hold at least 2 chains, got 1"):
        split_rhat(chains[:1])
    with pytest.raises(ValueError, match="moments must hold at least 2 chains, got 1"):
        gelman_rubin_from_moments(Moments.of_samples(chains[:1], axis=1))
    for metric in (ess, split_rhat, moment_mcse):
        with pytest.raises(ValueError, match="samples must hold at least 4 draws per chain, got 3"):
            metric(chains[:, :3])
    with pytest.raises(ValueError, match=r"at least 2 \* split_factor = 8 draws per chain .*, got 7"):
        chainwise_split_rhat(chains[:, :7])
    with pytest.raises(ValueError, match="split_factor must be an integer >= 2"):
        chainwise_split_rhat(chains, split_factor=1)
    with pytest.raises(ValueError, match="moments must count at least 2 draws in every chain"):
        gelman_rubin_from_moments(Moments.of_samples(chains[:, :1], axis=1))


def test_mismatched_shapes_and_counts_are_clear_errors(chains):
    for metric in (ess, split_rhat, moment_mcse, chainwise_split_rhat):
        with pytest.raises(ValueError, match=r"samples must have shape \(chains, draws, dim\).*x\[None\]"):
            metric(chains[0])
    with pytest.raises(ValueError, match="method must be one of"):
        ess(chains, method="mean")
    unequal = Moments.of_samples(chains, axis=1)._replace(count=np.array([1000.0, 1000.0, 999.0, 1000.0]))
    with pytest.raises(ValueError, match="same number of draws in every chain"):
        gelman_rubin_from_moments(unequal)
    with pytest.raises(TypeError, match="moments must be a sgbench.reference.metrics.Moments"):
        gelman_rubin_from_moments(chains)


def test_non_finite_draws_are_reported_not_dropped(chains):
    bad = chains.copy()
    bad[0, 10, 1] = np.nan
    bad[0, 11, 2] = -np.inf
    bad[3, 500, 0] = np.nan
    message = r"non-finite values \(NaN or inf\) in 3 of 4000 draws, in 2 of 4 chains \(chains \[0, 3\]\)"
    for metric in (ess, split_rhat, moment_mcse, chainwise_split_rhat):
        with pytest.raises(ValueError, match=message):
            metric(bad)
