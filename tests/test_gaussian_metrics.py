r"""Gaussian-fit KL, covariance errors and xi(sigma) against hand-computed closed forms.

Hand cases: for p = N(0, 1), q = N(1, 4): KL(p||q) = (1/4 + 1/4 - 1 + log 4)/2 = log 2 - 1/4 and
KL(q||p) = (4 + 1 - 1 - log 4)/2 = 2 - log 2. For p = N(0, I_2), q = N((1, 1), [[2, 1], [1, 2]])
(det 3, inverse [[2, -1], [-1, 2]]/3): KL(p||q) = (4/3 + 2/3 - 2 + log 3)/2 = log(3)/2 and
KL(q||p) = (4 + 2 - 2 - log 3)/2 = 2 - log(3)/2. The statistical test compares the mean KL of
fits of exact draws with its exact expectation (``exact_sampling_kl``), z-test at ALPHA.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sgbench.reference.metrics import Moments
from sgbench.reference.metrics.covariance_error import covariance_difference, covariance_frobenius_error, covariance_mse
from sgbench.reference.metrics.gaussian_fit import GaussianFit
from sgbench.reference.metrics.gaussian_kl import (
    exact_sampling_kl,
    gaussian_kl,
    kl_diagonal_fit_from_moments,
    kl_to_fit,
)
from sgbench.reference.metrics.std_error import std_relative_error
from sgbench.targets._truth import Truth
from tests.test_ksd import z_test

ALPHA = 1e-3

# Two chains whose pooled draws have mean 0 and unbiased covariance (2/3) I.
PLUS_CHAINS = np.array([[[1.0, 0.0], [-1.0, 0.0]], [[0.0, 1.0], [0.0, -1.0]]])


def fit(mean, covariance):
    return GaussianFit(np.asarray(mean, dtype=float), np.asarray(covariance, dtype=float))


def test_kl_one_dimensional_closed_form_both_directions():
    p, q = fit([0.0], [[1.0]]), fit([1.0], [[4.0]])
    assert gaussian_kl(p, q) == pytest.approx(math.log(2) - 0.25, rel=1e-14)
    assert gaussian_kl(q, p) == pytest.approx(2 - math.log(2), rel=1e-14)
    # The diagonal (variance-vector) path gives the same numbers.
    assert gaussian_kl(p.to_diagonal(), q.to_diagonal()) == pytest.approx(math.log(2) - 0.25, rel=1e-14)


def test_kl_two_dimensional_correlated_closed_form_and_asymmetry():
    p, q = fit([0.0, 0.0], np.eye(2)), fit([1.0, 1.0], [[2.0, 1.0], [1.0, 2.0]])
    forward, backward = gaussian_kl(p, q), gaussian_kl(q, p)
    assert forward == pytest.approx(math.log(3) / 2, rel=1e-13)
    assert backward == pytest.approx(2 - math.log(3) / 2, rel=1e-13)
    assert forward != pytest.approx(backward)
    truth = Truth.of_gaussian([1.0, 1.0], [[2.0, 1.0], [1.0, 2.0]])
    assert kl_to_fit(truth, p, "fit_to_truth") == pytest.approx(forward, rel=1e-13)
    assert kl_to_fit(truth, p, "truth_to_fit") == pytest.approx(backward, rel=1e-13)


def test_kl_is_zero_for_identical_gaussians():
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
    g = fit([1.0, -2.0, 0.5], cov)
    assert gaussian_kl(g, g) == pytest.approx(0.0, abs=1e-14)
    assert gaussian_kl(g.to_diagonal(), g.to_diagonal()) == 0.0
    draws = np.random.default_rng(0).standard_normal((3, 40, 3))
    assert kl_to_fit(draws, draws) == pytest.approx(0.0, abs=1e-13)
    assert kl_to_fit(draws, draws, "fit_to_truth") == pytest.approx(0.0, abs=1e-13)


def test_kl_to_fit_of_samples_pools_chains_with_unbiased_covariance():
    # Pooled fit of PLUS_CHAINS: N(0, (2/3) I); KL(N(0, I) || N(0, 2/3 I)) = (2 * 3/2 - 2 + 2 log(2/3))/2.
    truth = Truth.of_gaussian([0.0, 0.0], np.eye(2))
    assert kl_to_fit(truth, PLUS_CHAINS) == pytest.approx(0.5 + math.log(2 / 3), rel=1e-13)
    # KL(N(0, 2/3 I) || N(0, I)) = (2 * 2/3 - 2 - 2 log(2/3))/2.
    assert kl_to_fit(truth, PLUS_CHAINS, "fit_to_truth") == pytest.approx(2 / 3 - 1 - math.log(2 / 3), rel=1e-13)
    # One chain (draws, dim) of 1-d draws [-1, 1]: N(0, 2); KL(N(0, 1) || N(0, 2)) = (1/2 - 1 + log 2)/2.
    one_d = Truth.of_gaussian([0.0], [[1.0]])
    assert kl_to_fit(one_d, np.array([[-1.0], [1.0]])) == pytest.approx((math.log(2) - 0.5) / 2, rel=1e-13)


def test_kl_with_reference_draws_equals_kl_with_their_fit():
    rng = np.random.default_rng(1)
    reference, samples = rng.standard_normal((2, 300, 3)), 1.1 * rng.standard_normal((4, 100, 3)) + 0.1
    via_fit = kl_to_fit(GaussianFit.of_samples(reference), samples)
    assert kl_to_fit(reference, samples) == pytest.approx(via_fit, rel=1e-14)


@pytest.mark.parametrize("direction", ["truth_to_fit", "fit_to_truth"])
def test_mean_kl_of_exact_fits_equals_its_exact_expectation(direction):
    dim, draws, replicates = 3, 30, 4000
    cov = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 0.7]])
    truth = Truth.of_gaussian([1.0, 0.0, -1.0], cov)
    rng = np.random.default_rng(2 if direction == "truth_to_fit" else 3)
    x = rng.standard_normal((replicates, draws, dim)) @ np.linalg.cholesky(cov).T + truth.mean
    reference = GaussianFit.of_truth(truth)
    kls = np.array([kl_to_fit(reference, x[r], direction) for r in range(replicates)])
    z_test(kls, exact_sampling_kl(dim, draws, direction), alpha=ALPHA).assert_passed()


def test_diagonal_kl_from_moments_is_the_sum_of_marginal_kls():
    rng = np.random.default_rng(4)
    draws = rng.standard_normal((3, 200, 2)) * [1.5, 0.5] + [0.2, -0.1]
    truth = Truth.of_gaussian([0.0, 0.0], [[2.0, 0.4], [0.4, 0.3]])
    flat = draws.reshape(-1, 2)
    m, s2 = flat.mean(axis=0), flat.var(axis=0, ddof=1)
    t2 = np.diag(truth.covariance)
    by_hand = 0.5 * np.sum(t2 / s2 + m**2 / s2 - 1 + np.log(s2 / t2))
    moments = Moments.of_samples(draws, axis=1)
    assert kl_diagonal_fit_from_moments(truth, moments) == pytest.approx(by_hand, rel=1e-12)
    backward = 0.5 * np.sum(s2 / t2 + m**2 / t2 - 1 + np.log(t2 / s2))
    assert kl_diagonal_fit_from_moments(truth, moments, "fit_to_truth") == pytest.approx(backward, rel=1e-12)


def test_diagonal_kl_from_moments_cannot_see_correlations():
    # Exact marginals but independent coordinates, against a truth with correlation 0.9: zero.
    draws = np.array([[[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]]])
    truth = Truth.of_gaussian([0.0, 0.0], [[4 / 3, 1.2], [1.2, 4 / 3]])
    assert kl_diagonal_fit_from_moments(truth, Moments.of_samples(draws, axis=1)) == pytest.approx(0.0, abs=1e-14)
    # The full-covariance KL sees them: KL = -log det(correlation)/2 = -log(1 - 0.9^2)/2.
    assert kl_to_fit(truth, draws) == pytest.approx(-0.5 * math.log(1 - 0.81), rel=1e-13)


def test_covariance_difference_mse_and_frobenius_by_hand():
    truth = Truth.of_gaussian([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]])
    expected = np.array([[-1 / 3, -0.5], [-0.5, -1 / 3]])
    np.testing.assert_allclose(covariance_difference(PLUS_CHAINS, truth), expected, rtol=1e-14)
    assert covariance_mse(PLUS_CHAINS, truth) == pytest.approx((2 / 9 + 0.5) / 4, rel=1e-14)
    assert covariance_frobenius_error(PLUS_CHAINS, truth) == pytest.approx(math.sqrt(2 / 9 + 0.5), rel=1e-14)
    assert covariance_mse(PLUS_CHAINS, PLUS_CHAINS) == 0.0


def test_std_relative_error_by_hand_and_from_streamed_moments():
    # Draws (1, 2), (-1, -2): standard deviations (sqrt 2, 2 sqrt 2) = sqrt(2) (1, 2), so against
    # sigma_ref = (1, 2) xi = (sqrt 2 - 1) |(1, 2)| / |(1, 2)| = sqrt 2 - 1.
    truth = Truth.of_gaussian([0.0, 0.0], [[1.0, 0.3], [0.3, 4.0]])
    draws = np.array([[[1.0, 2.0], [-1.0, -2.0]]])
    assert std_relative_error(draws, truth) == pytest.approx(math.sqrt(2) - 1, rel=1e-14)
    rng = np.random.default_rng(5)
    long = rng.standard_normal((4, 300, 3)) * [1.0, 2.0, 0.5]
    reference = rng.standard_normal((2, 500, 3))
    stored = std_relative_error(long, reference)
    assert std_relative_error(Moments.of_samples(long, axis=1), reference) == pytest.approx(stored, rel=1e-12)
    assert std_relative_error(long, Moments.of_samples(reference, axis=1)) == pytest.approx(stored, rel=1e-12)


def test_singular_fits_are_clear_errors():
    truth = Truth.of_gaussian(np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match=r"3 draws in all.*at least dim \+ 1 = 4"):
        kl_to_fit(truth, np.ones((1, 3, 3)))
    collinear = np.random.default_rng(6).standard_normal((2, 10, 1)) * [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="not positive definite"):
        kl_to_fit(truth, collinear)
    with pytest.raises(ValueError, match="variances of .* must all be > 0"):
        kl_diagonal_fit_from_moments(truth, Moments.of_samples(np.ones((2, 5, 3)), axis=1))


def test_bad_inputs_name_the_parameter():
    truth = Truth.of_gaussian(np.zeros(2), np.eye(2))
    draws = np.random.default_rng(7).standard_normal((3, 20, 2))
    with pytest.raises(ValueError, match="direction must be one of"):
        kl_to_fit(truth, draws, direction="symmetric")
    with pytest.raises(ValueError, match="samples has dimension 3, reference has dimension 2"):
        covariance_mse(np.ones((1, 5, 3)) * np.arange(5)[:, None], truth)
    with pytest.raises(ValueError, match="samples has dimension 3"):
        std_relative_error(draws[..., :1].repeat(3, axis=-1), truth)
    with pytest.raises(ValueError, match=r"samples must have shape \(draws, dim\) or \(chains, draws, dim\)"):
        kl_to_fit(truth, np.ones(5))
    with pytest.raises(TypeError, match="kl_diagonal_fit_from_moments"):
        kl_to_fit(truth, Moments.of_samples(draws, axis=1))
    with pytest.raises(ValueError, match="needs the full covariance"):
        covariance_difference(Moments.of_samples(draws, axis=1), truth)
    with pytest.raises(ValueError, match="num_draws must be an integer >= 5"):
        exact_sampling_kl(2, 4)


def test_non_finite_samples_are_reported_not_dropped():
    truth = Truth.of_gaussian(np.zeros(2), np.eye(2))
    draws = np.random.default_rng(8).standard_normal((4, 50, 2))
    draws[1, 3, 0] = np.nan
    draws[3, 7:9, 1] = np.inf
    message = r"non-finite values \(NaN or inf\) in 3 of 200 draws, in 2 of 4 chains \(chains \[1, 3\]\)"
    for metric in (kl_to_fit, covariance_mse, std_relative_error):
        args = (truth, draws) if metric is kl_to_fit else (draws, truth)
        with pytest.raises(ValueError, match=message):
            metric(*args)
    with pytest.raises(ValueError, match=r"moments has non-finite values in 1 of 4 chains \(chains \[1\]\)"):
        kl_diagonal_fit_from_moments(truth, Moments.of_samples(np.where(np.isinf(draws), 0.0, draws), axis=1))
