r"""Tier 1: SGLD's exact discrete-time stationary law on a Gaussian target.

With a constant step :math:`h`, :math:`x' = (I - hP)x + h\epsilon + \sqrt{2hT}\xi` on
:math:`\mathcal N(0, P^{-1})` with gradient noise :math:`\epsilon \sim \mathcal N(0, V)`, so the
chain is a linear Gaussian recursion whose stationary covariance :math:`S` solves the discrete
Lyapunov equation :math:`S = A S A^\top + Q`, :math:`A = I - hP`, :math:`Q = h^2 V + 2hT I`.
It differs from the target's covariance by the method's discretisation bias, so the test
separates implementation bugs from the method's own bias.

Chains start from :math:`\mathcal N(0, S)` (exactly stationary, no burn-in bias). Each chain
yields an estimate of :math:`E[x x^\top]`; chains are independent, so the between-chain spread
gives the standard error and a Student-t test per entry with ``C - 1`` degrees of freedom is
exact up to the CLT over the draws of a chain. Family-wise false-failure rate: ``ALPHA`` with
Bonferroni over the entries tested. Power: the test reports the smallest deviation it detects
with probability 0.9 and checks that this is smaller than the discretisation bias itself (so a
sampler converging to the target covariance instead of ``S`` would fail).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.stats

import bench
import targets

ALPHA = 1e-3
STEP = 0.3
TARGET = dict(dim=4, condition_number=10.0, rotation_seed=1)


def stationary_covariance(target, step, temperature=1.0):
    """Solution S of S = A S A^T + Q for SGLD with step ``step`` (standard convention)."""
    a = np.eye(target.dim) - step * target.precision
    q = step**2 * target.noise.covariance(np.zeros(target.dim)) + 2 * step * temperature * np.eye(target.dim)
    return scipy.linalg.solve_discrete_lyapunov(a, q)


def t_test(estimates, expected):
    """Per-entry t statistics of chain-wise estimates (chains, ...) against ``expected``,
    the Bonferroni critical value, and the deviation detected with power 0.9."""
    num_chains = estimates.shape[0]
    se = estimates.std(axis=0, ddof=1) / np.sqrt(num_chains)
    t = (estimates.mean(axis=0) - expected) / se
    critical = scipy.stats.t.ppf(1 - ALPHA / (2 * t.size), num_chains - 1)
    detectable = (critical + scipy.stats.norm.ppf(0.9)) * se
    return t, critical, detectable


NOISE = [dict(noise="none"), dict(noise="isotropic", noise_variance=16.0)]


@pytest.mark.parametrize("noise", NOISE, ids=lambda n: n["noise"])
@pytest.mark.parametrize("backend,num_chains,num_steps", [("jax", 256, 4000), ("numpy", 32, 2000)])
def test_sgld_matches_discrete_lyapunov_solution(noise, backend, num_chains, num_steps):
    target = targets.get("icg", **TARGET, **noise)
    stationary = stationary_covariance(target, STEP)
    start = np.random.default_rng(7).multivariate_normal(np.zeros(target.dim), stationary, size=num_chains)
    keep = backend == "jax"
    result = bench.run(
        "sgld", target, params={"step_size": STEP}, num_chains=num_chains, num_steps=num_steps,
        seed=11, backend=backend, initial_position=start, keep_samples=keep, thin=10 if keep else 1,
    )
    assert result.metrics["num_diverged_chains"] == 0
    if keep:  # full covariance from the thinned draws
        estimates = np.einsum("csi,csj->cij", result.samples, result.samples) / result.samples.shape[1]
        rows, cols = np.triu_indices(target.dim)
        estimates, expected = estimates[:, rows, cols], stationary[rows, cols]
        truth_cov = target.covariance[rows, cols]
    else:  # diagonal from the streamed second moments
        estimates, expected, truth_cov = result.moments.second_moment, np.diag(stationary), np.diag(target.covariance)
    t, critical, detectable = t_test(estimates, expected)
    assert np.all(np.abs(t) <= critical), f"t = {t}, critical {critical:.2f}"
    # Power: the discretisation bias |S - Sigma| is detectable, so a wrong law cannot pass.
    assert np.max(np.abs(expected - truth_cov) - detectable) > 0, (
        f"test too weak: detects {detectable} but the bias is {np.abs(expected - truth_cov)}"
    )
    t_wrong, critical, _ = t_test(estimates, truth_cov)
    assert np.any(np.abs(t_wrong) > critical)


def test_lyapunov_solution_tends_to_target_covariance_as_step_shrinks():
    target = targets.get("icg", **TARGET)
    errors = [np.abs(stationary_covariance(target, h) - target.covariance).max() for h in (1e-2, 1e-3, 1e-4)]
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-3 * np.abs(target.covariance).max()
