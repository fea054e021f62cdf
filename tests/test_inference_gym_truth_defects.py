r"""Where Inference Gym's stated truth is wrong, shown by an exact calculation, and pinned.

*Brownian motion with unknown scales.* Given the two scales the model is linear-Gaussian: the random walk has
:math:`\mathrm{Cov}(\ell_t, \ell_s) = \sigma_i^2 \min(t, s)`, the observed values
:math:`y \sim N(0, S)`, :math:`S = \sigma_i^2 K_{oo} + \sigma_o^2 I`, and
:math:`\ell \mid y, \sigma \sim N(\sigma_i^2 K_{\cdot o} S^{-1} y,`
:math:`\sigma_i^2 K - \sigma_i^4 K_{\cdot o} S^{-1} K_{o \cdot})`.
The posterior of :math:`(\log\sigma_i, \log\sigma_o)` is two-dimensional, :math:`\propto N(y; 0, S)\,
N(\log\sigma_i; 0, 2^2)\, N(\log\sigma_o; 0, 2^2)` (the log-normal priors on the log scale), so every posterior
moment is a quadrature on a grid of the two log scales (400 x 400 points on [-9, 3]^2; halving the grid or widening
it changes the moments by less than 1e-6). Inference Gym states :math:`E[\sigma_i] = 0.11985 \pm 0.00062`; the
quadrature gives 0.11553, 6.9 of its standard errors away; :math:`E[\sigma_o]` is 18 away and the location means
up to 15, with signs that alternate along the walk (the stated errors are far smaller than the Stan run's actual
error). The suite's
NUTS agrees with the quadrature (the same z-test as ``test_inference_gym_targets``, family rate 0.001).
The pin fails when an Inference Gym release corrects the truth.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from scipy.special import logsumexp

pytest.importorskip("inference_gym.using_jax", reason="Inference Gym is absent: python -m pip install "
                                                      "'sgmcmc-bench[gym]'")

from sgbench import targets  # noqa: E402
from sgbench.reference import agreement  # noqa: E402
from sgbench.reference.nuts import run_numpyro  # noqa: E402


def brownian_exact_moments(points: int = 400, low: float = -9.0, high: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """E[q] and E[q^2] of the quantities (innovation scale, 30 locations, observation scale) by quadrature."""
    data = importlib.import_module("inference_gym.dynamic.backend_jax.internal.data")
    observed = np.asarray(data.brownian_motion_missing_middle_observations()["observed_locs"], dtype=np.float64)
    seen = ~np.isnan(observed)
    y, steps = observed[seen], np.arange(1, observed.shape[0] + 1)
    k = np.minimum.outer(steps, steps).astype(np.float64)
    grid = np.linspace(low, high, points)
    log_i, log_o = (axis.ravel() for axis in np.meshgrid(grid, grid, indexing="ij"))
    s_i, s_o = np.exp(log_i), np.exp(log_o)
    cov_y = s_i[:, None, None] ** 2 * k[np.ix_(seen, seen)] + s_o[:, None, None] ** 2 * np.eye(y.shape[0])
    solved = np.linalg.solve(cov_y, np.broadcast_to(y, (s_i.shape[0], y.shape[0]))[..., None])[..., 0]
    log_weight = (-0.5 * np.linalg.slogdet(cov_y)[1] - 0.5 * solved @ y
                  - 0.5 * (log_i / 2) ** 2 - 0.5 * (log_o / 2) ** 2)
    weight = np.exp(log_weight - logsumexp(log_weight))
    k_seen = k[:, seen]
    mean_locs = s_i[:, None] ** 2 * solved @ k_seen.T
    gain = np.linalg.solve(cov_y, np.broadcast_to(k_seen.T, (s_i.shape[0], *k_seen.T.shape)))
    var_locs = s_i[:, None] ** 2 * np.diag(k) - s_i[:, None] ** 4 * np.einsum("ij,nji->ni", k_seen, gain)
    first = np.column_stack([s_i, mean_locs, s_o])
    second = np.column_stack([s_i**2, var_locs + mean_locs**2, s_o**2])
    return weight @ first, weight @ second


@pytest.fixture(scope="module")
def exact():
    return brownian_exact_moments()


def test_the_quadrature_is_converged(exact):
    coarse = brownian_exact_moments(points=200)
    wide = brownian_exact_moments(points=400, low=-12.0, high=4.0)
    for other in (coarse, wide):
        np.testing.assert_allclose(other[0], exact[0], atol=1e-6)
        np.testing.assert_allclose(other[1], exact[1], atol=1e-6)


def test_inference_gym_s_brownian_truth_is_off_and_the_suite_s_nuts_is_not(exact):
    target = targets.get("inference_gym", model="brownian_motion_unknown_scales")
    truth = target.quantity_truth
    assert target.quantity_coordinates[0] == "innovation_noise_scale"
    z = (truth.mean - exact[0]) / truth.mean_se
    assert z[0] > 5 and np.max(np.abs(z)) > 8  # the pin: Inference Gym 0.0.5's stated truth
    result = run_numpyro(target, num_chains=4, num_warmup=1000, num_draws=2500, seed=0, target_accept=0.9)
    chains, draws, _ = result.draws.shape
    ours = target.quantities(result.draws.reshape(-1, target.dim)).reshape(chains, draws, -1)
    zero = np.zeros_like(exact[0])
    test = agreement.compare(agreement.moments(ours), {"mean": exact[0], "mean_se": zero, "second_moment": exact[1],
                                                     "second_moment_se": zero}, alpha=1e-3)
    assert test.passed, test
