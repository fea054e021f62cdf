r"""Tier 1: the exact law of SGLD with minibatch gradients on Bayesian linear regression
(``sgbench.reference.minibatch_laws``, fed the step SGLD's file declares, ``sgbench.samplers.sgld.linear_law``),
checked against simulation and its limits, and the suite's SGLD held to it.

Target: ``linreg`` with N = 40, d = 2, B = 8 (with replacement), posterior :math:`\mathcal N(\mu, \Sigma)`,
precision eigenvalues 20.6 and 29.7. At step 0.02 the law's stationary second moment is 2.4-2.9 times
:math:`\Sigma` (discretisation and minibatch noise), so the law, not the posterior, is what SGLD must match.

Conventions. Every statistical check is a mean check at family-wise false-failure rate ``ALPHA`` = 1e-3
(Bonferroni over its coordinates), with each named wrong answer rejected with probability at least
1 - ``ALPHA`` by design (``law_check``'s ``sure``), so a case with k wrong answers fails a correct law with
probability at most (1 + k) ``ALPHA`` (2e-3 or 3e-3); deterministic checks have rate 0 (rounding
tolerances). Replicates are
per-chain time averages of independent chains started at independent draws of the start law, so they are
iid and ``mean_check`` (Johnson's skewness-corrected t, ``C - 1`` degrees of freedom) applies exactly up to
the CLT over chains.

Tests (statistic; false-failure rate; power):

- ``test_law_matches_direct_simulation`` (8 cases: step 0.02 and 1e-3, T = 1 and 0.5, both conventions):
  an independent NumPy simulation of :math:`x' = x + h\hat g(x) + \sqrt{2hT}\xi` with the minibatch
  estimator written here from the data (step 0.02: 4000 chains, 300 recorded steps after 3; step 1e-3:
  2000 chains, 1000 after 50), started at :math:`\mathcal N(\mu + (0.5, -0.5), 4\Sigma)` so the transient
  and the mean error enter the averages. ``law_check`` of the 4 per-chain averages of :math:`x - \mu` and
  :math:`(x - \mu)^2` against the law. Detects (probability 0.9) a deviation of
  0.9-1.3 % of the second moment at step 0.02 and 3-5 % at 1e-3 (mean error: 0.002-0.009). Power: rejects
  the other convention (the same step_size read as h doubled or halved: 36-86 % at 0.02; at 1e-3 its mean
  error is off by a factor 2) and, at step 0.02, the law without minibatch noise (27-70 % smaller; at 1e-3
  the minibatch term, 1-8 %, is below this design's power).
- ``test_stationary_law_tends_to_tempered_posterior``: deterministic; full gradient and B = N (with
  replacement: still minibatch noise, of order h), T = 1 and 0.5: the relative error of the stationary
  second moment against :math:`T\Sigma` falls by a factor 9-11 per decade of h (first order), below
  0.05 % at h = 1e-5.
- ``test_law_reduces_to_langevin_recursion``: deterministic (1e-10 relative). Without minibatch noise
  the law is ``langevin_recursion``'s at every step (transient and stationary); with it, one step from a
  point x is ``langevin_recursion`` with the noise covariance :math:`V(x)` of
  ``sgbench.targets.noise.minibatch`` (the suite's own, independent formula), for B = 8 and B = N, without and
  with a preconditioner (frozen pSGLD's :math:`G`); SGLD's declared step in Welling & Teh's convention is the
  standard one at half the step.
- ``test_suite_sgld_matches_law`` (JAX, 256 chains x 2000 steps after 2000 of burn-in, step 0.02,
  overdispersed start :math:`\mu + 2(\text{exact draws} - \mu)`): ``law_check`` of the streamed per-chain
  :math:`E[x]` and :math:`E[x^2]` against the law (:math:`\mu + m`, :math:`\bar S_{ii} + 2\mu_i m_i +
  \mu_i^2`). Power: rejects the posterior (:math:`\mu`, :math:`\Sigma_{ii} + \mu_i^2`) and the
  law without minibatch noise.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.linalg

from sgbench import samplers, targets
from sgbench.bench.running import run as running
from sgbench.reference.checks import law_check
from sgbench.reference.linear_laws import averaged_second_moment
from sgbench.reference.minibatch_laws import (
    minibatch_sgld_operator,
    minibatch_sgld_second_moment,
    minibatch_sgld_stationary,
)
from sgbench.samplers import LangevinStep
from sgbench.samplers._langevin import langevin_law, langevin_recursion

ALPHA = 1e-3
TARGET = dict(num_data=40, dim=2)
BATCH = 8
OFFSET = np.array([0.5, -0.5])  # the simulation's start mean minus mu (about 2.5 posterior sd)


def linreg(noise="minibatch", batch=BATCH):
    return targets.get("linreg", **TARGET, noise=noise, **({"noise_batch_size": batch} if noise == "minibatch" else {}))


def posterior(target):
    return np.asarray(target.posterior.mean), np.asarray(target.posterior.covariance)


def sgld_step(step_size, temperature=1.0, convention="standard"):
    """SGLD's step as its file declares it: the LangevinStep of its law."""
    law = samplers.get("sgld").law({"step_size": step_size, "temperature": temperature, "convention": convention},
                                   np.eye(TARGET["dim"]), None)
    return law.langevin


def simulate(target, h, temperature, num_chains, num_steps, num_burnin, start, seed):
    """Per-chain time averages of x - mu and (x - mu)^2 over the recorded steps, by direct simulation of
    SGLD with the with-replacement minibatch estimator, written from the data."""
    rng = np.random.default_rng(seed)
    features, labels = np.asarray(target.features), np.asarray(target.labels)
    n, tau, sigma2 = target.num_data, target.tau, target.sigma2
    mu = np.asarray(target.posterior.mean)
    x = np.array(start, dtype=np.float64)
    total, total_sq = np.zeros_like(x), np.zeros_like(x)
    for t in range(num_burnin + num_steps):
        idx = rng.integers(0, n, size=(num_chains, BATCH))
        f = features[idx]  # (chains, B, d)
        residual = labels[idx] - np.einsum("cbd,cd->cb", f, x)
        grad = -tau * x + (n / BATCH) * np.einsum("cb,cbd->cd", residual, f) / sigma2
        x = x + h * grad + np.sqrt(2 * h * temperature) * rng.standard_normal(x.shape)
        if t >= num_burnin:
            e = x - mu
            total += e
            total_sq += e * e
    return total / num_steps, total_sq / num_steps


CASES = [(0.02, 1.0, "standard"), (0.02, 0.5, "standard"), (0.02, 1.0, "welling_teh"), (0.02, 0.5, "welling_teh"),
         (1e-3, 1.0, "standard"), (1e-3, 0.5, "standard"), (1e-3, 1.0, "welling_teh"), (1e-3, 0.5, "welling_teh")]


@pytest.mark.parametrize("step,temperature,convention", CASES)
def test_law_matches_direct_simulation(step, temperature, convention):
    target, full = linreg(), linreg("none")
    mu, sigma = posterior(target)
    num_chains, num_steps, num_burnin = (4000, 300, 3) if step > 1e-2 else (2000, 1000, 50)
    seed = 1000 + CASES.index((step, temperature, convention))
    start = np.random.default_rng(seed).multivariate_normal(mu + OFFSET, 4 * sigma, size=num_chains)
    h = step / 2 if convention == "welling_teh" else step  # Welling & Teh's epsilon is 2h
    means, squares = simulate(target, h, temperature, num_chains, num_steps, num_burnin, start, seed)

    def law(t, c=convention):
        return np.concatenate(minibatch_sgld_second_moment(t, sgld_step(step, temperature, c), num_steps, 4 * sigma,
                                                           num_burnin, mu + OFFSET))

    # the same step_size read in the other convention: h doubled (from welling_teh) or halved (from standard)
    wrong = {"other convention": law(target, "welling_teh" if convention == "standard" else "standard")}
    if step > 1e-2:  # at 1e-3 the minibatch-noise term (2-8 %) is below this design's power at rate ALPHA
        wrong["no minibatch noise"] = law(full)
    law_check(np.concatenate([means, squares], axis=1), law(target), wrong, alpha=ALPHA, sure=ALPHA,
              name=f"minibatch SGLD law, step {step}, T {temperature}, {convention}").assert_passed()


@pytest.mark.parametrize("temperature", [1.0, 0.5])
@pytest.mark.parametrize("noise", ["none", "minibatch"])
def test_stationary_law_tends_to_tempered_posterior(noise, temperature):
    """Full gradient, and B = N with replacement (still minibatch noise, of order h): first order in h."""
    target = linreg(noise, batch=TARGET["num_data"])
    _, sigma = posterior(target)
    errors = np.array([np.abs(minibatch_sgld_stationary(target, sgld_step(h, temperature)) - temperature * sigma).max()
                       / (temperature * np.abs(sigma).max()) for h in (1e-3, 1e-4, 1e-5)])
    assert np.all((errors[:-1] / errors[1:] > 9) & (errors[:-1] / errors[1:] < 11)), errors
    assert errors[-1] < 5e-4, errors


def test_law_reduces_to_langevin_recursion():
    full = linreg("none")
    mu, sigma = posterior(full)
    precision = np.linalg.inv(sigma)
    for step, temperature in [(0.02, 1.0), (1e-3, 0.5)]:
        law = langevin_law(precision, step, temperature)
        mean_error, second = minibatch_sgld_second_moment(full, LangevinStep(step, temperature), 500, 4 * sigma,
                                                          num_burnin=7)
        # num_burnin = 7: start the reference recursion 7 steps on
        s = 4 * sigma
        for _ in range(7):
            s = law.propagate(s)
        expected = averaged_second_moment(s, law, 500, 2)
        np.testing.assert_allclose(second, expected, rtol=1e-10)
        np.testing.assert_array_equal(mean_error, 0.0)
        np.testing.assert_allclose(minibatch_sgld_stationary(full, LangevinStep(step, temperature)),
                                   scipy.linalg.solve_discrete_lyapunov(law.transition, law.covariance), rtol=1e-10)
    # one step from a point: langevin_recursion with the minibatch covariance V(x) of sgbench.targets.noise.minibatch,
    # without and with a diagonal preconditioner G
    for batch in (BATCH, TARGET["num_data"]):
        for preconditioner in (1.0, np.array([0.5, 2.0])):
            target = linreg(batch=batch)
            x = mu + np.array([0.3, -0.2])
            e, z = x - mu, np.append(x - mu, 1.0)
            operator, q = minibatch_sgld_operator(target, LangevinStep(0.02, 0.7, preconditioner))
            after = (operator @ np.outer(z, z).ravel() + q).reshape(3, 3)
            a, noise = langevin_recursion(precision, 0.02, 0.7, target.noise.covariance(x), preconditioner)
            np.testing.assert_allclose(after[:2, :2], a @ np.outer(e, e) @ a.T + noise, rtol=1e-10)
            np.testing.assert_allclose(after[:2, 2], a @ e, rtol=1e-10)
            assert after[2, 2] == 1.0
    target = linreg()
    np.testing.assert_array_equal(minibatch_sgld_operator(target, sgld_step(0.04, 1.0, "welling_teh"))[0],
                                  minibatch_sgld_operator(target, sgld_step(0.02, 1.0))[0])


def test_suite_sgld_matches_law():
    target, full = linreg(), linreg("none")
    mu, sigma = posterior(target)
    num_chains, num_steps, num_burnin, step = 256, 2000, 2000, 0.02
    draws = np.asarray(target.sample(jax.random.key(5), num_chains))
    start = mu + 2 * (draws - mu)
    result = running.run("sgld", target, params={"step_size": step}, num_chains=num_chains, num_steps=num_steps,
                         num_burnin=num_burnin, initial_position=start, seed=17)
    assert result.metrics["num_diverged_chains"] == 0

    def law(t):
        mean_error, second = minibatch_sgld_second_moment(t, sgld_step(step), num_steps, 4 * sigma, num_burnin)
        return np.concatenate([mu + mean_error, second + 2 * mu * mean_error + mu**2])

    estimates = np.concatenate([result.moments.mean, result.moments.second_moment], axis=1)
    wrong = {"posterior": np.concatenate([mu, np.diag(sigma) + mu**2]), "no minibatch noise": law(full)}
    law_check(estimates, law(target), wrong, alpha=ALPHA, sure=ALPHA,
              name="suite SGLD: minibatch law").assert_passed()
