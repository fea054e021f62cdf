r"""Tier 1: exact laws of the Langevin-family samplers (SGLD, SGLD-CV, pSGLD, cSGLD, SGLRW, Clipped-SGLD).

On a Gaussian target :math:`\mathcal N(0, P^{-1})` with additive Gaussian gradient noise
:math:`\epsilon \sim \mathcal N(0, V)`, SGLD, SGLD-CV and pSGLD with a frozen preconditioner are
linear Gaussian recursions :math:`x_{t+1} = A_t x_t + \eta_t`, :math:`\eta_t \sim \mathcal N(0, Q_t)`,
so :math:`S_{t+1} = A_t S_t A_t^\top + Q_t` holds exactly for the covariance, and with a constant
step the stationary covariance solves the discrete Lyapunov equation :math:`S = A S A^\top + Q`.
SGLRW is not Gaussian, but in its unclipped regime its second moment follows an exact linear
recursion too. These laws differ from the target by the method's own discretisation bias, so
the tests separate implementation bugs from the method's bias. Exact one-step laws complete them.

Conventions of every statistical test here. Each test is a family of tests with family-wise
false-failure rate at most ``ALPHA`` = 1e-3 (Bonferroni over its entries). Power is checked in
the test, never assumed: for every named wrong answer, the design (the standard errors of this
run) must reject it with probability at least ``1 - ALPHA`` (its largest standardized deviation
exceeds ``critical + z_{1-ALPHA}``), and the data must reject it, so a sampler that produced that
wrong answer fails. Messages report the deviation each entry detects with probability 0.9.
Long runs use ``t_test``: independent chains, each giving one estimate (a time average); the
between-chain spread gives the standard error, and a Student-t test with ``C - 1`` degrees of
freedom per entry is exact up to the CLT over chains (hundreds of chains of long averages).

Tests (statistic, false-failure rate, power):

- ``test_sgld_matches_discrete_lyapunov_solution`` (both backends, with and without isotropic
  noise): chains start at :math:`\mathcal N(0, S)` (exactly stationary); t-test of per-chain
  averages of :math:`x x^\top` (JAX: all entries from thinned draws; NumPy: streamed
  :math:`E[x_i^2]`) against :math:`S`, ``A = I - hP``, ``Q = h^2 V + 2hT I``. Rate ALPHA. Power:
  rejects the target covariance (the discretisation bias, 12-50 % here).
- ``test_lyapunov_solution_tends_to_target_covariance_as_step_shrinks``: deterministic.
- ``test_sgld_cv_cancels_additive_noise`` (both backends): SGLD-CV with isotropic noise
  (V = 16 I) has the NOISE-FREE SGLD stationary covariance, whatever the centre (the MAP from
  ``params_for`` on JAX, an off-mode centre on NumPy). Same t-test, rate ALPHA. Power: rejects the
  noisy-SGLD solution (the :math:`h^2 V` term: 3.4 times larger) and the target covariance.
- ``test_psgld_frozen_preconditioner_lyapunov`` (JAX T = 0.5 with noise, JAX T = 1 without,
  NumPy T = 2 with noise): ``smoothing = 1``, :math:`\nu_0` a vector, so
  :math:`G = 1/(\sqrt{\nu_0} + \varepsilon)` is constant, ``A = I - hGP``,
  ``Q = h^2 G V G + 2hT G``. Same t-test, rate ALPHA. Power: rejects the unpreconditioned SGLD
  solution at the same (h, T) and the tempered target covariance :math:`T P^{-1}`.
- ``test_time_varying_schedule_follows_exact_recursion`` (SGLD with polynomial decay and
  isotropic noise; cSGLD, exploration fraction 0, cyclical schedule, T = 0.5; cSGLD with an
  exploration stage, JAX and NumPy): chains start at :math:`\mathcal N(0, S_0)`,
  :math:`S_{t+1} = A_t S_t A_t^\top + Q_t` with the schedule recomputed here from its formula
  and, in exploration steps, no injected noise (the gradient noise stays). Statistic: t-test of
  the per-chain streamed :math:`E[x_i^2]` against the average of :math:`\mathrm{diag}(S_{t+1})`
  over the recorded steps (sampling-stage steps only). The moment count must equal the number of
  sampling-stage steps exactly. Rate ALPHA. Power: rejects the schedule ignored (constant h), the
  halved step (the other discretisation convention), and with exploration: noise on in the
  exploration stage, and exploration positions included in the average.
- ``test_sglrw_one_step_moments`` (unclipped and partly clipped, T = 0.5, reference and
  optimized steps on the same draws, which must agree): every :math:`S_i^2 = 2hT` (deterministic,
  to rounding); clipped coordinates move by :math:`\sqrt{2hT}\,\mathrm{sign}(g_i)` in every draw;
  for unclipped coordinates the number of +1 moves and the number of positive products
  :math:`s_i s_j` are exactly binomial under eq. (10) (:math:`E[S] = hg`,
  :math:`E[S_i S_j] = h^2 g_i g_j`): exact binomial tests, Bonferroni, rate at most ALPHA. Power:
  rejects the halved drift (:math:`hg/2`), the temperature left out of the tilt
  (:math:`h\sqrt T g`), and a variant built from the same draws with one uniform shared by all
  coordinates (correlated moves).
- ``test_sglrw_lemma_4_3_covariance_error`` (Bayesian linear regression, N = 1000, d = 20, B = 8):
  (i) deterministic: for 5 x 400 minibatch draws, :math:`\|M_{SGLRW}\|_F^2 \le \|M_{SGLD}\|_F^2`
  with :math:`M_{SGLRW} = \mathrm{offdiag}(M_{SGLD})`, strictly where the diagonal
  :math:`\zeta_i^2 + 2 g_i \zeta_i` is non-zero (the paper's :math:`\nabla U, \zeta` are
  :math:`-g, -\zeta` here; M is unchanged); (ii) statistical: for 4 (position, minibatch) pairs
  in the unclipped regime, :math:`M` estimated from 10^5 pairs of sampler increments (minibatch
  vs full gradient, same internal draws) by both samplers: its SGLRW diagonal is exactly 0, and
  z-tests of every entry against the lemma's formula (Bonferroni over all entries of both
  samplers, rate ALPHA; the per-draw terms are bounded or Gaussian, 10^5 draws). Power: rejects
  M = 0 (minibatch ignored) and M / 4 (halved drift).
- ``test_sglrw_unclipped_second_moment_fixed_point``: ICG (d = 3, kappa = 4) with V = I, h = 0.04:
  :math:`\Sigma' = \Sigma - h(\Sigma P + P\Sigma) + 2hT I + h^2\,\mathrm{offdiag}(P\Sigma P + V)`
  (derivation in ``sglrw_second_moment_fixed_point``); chains start with second moment
  :math:`\Sigma^*` (so every step has it); t-test of all entries of per-chain averages of
  :math:`x x^\top`. Rate ALPHA. The clip is active with probability about 3e-5 per coordinate and
  step (Gaussian approximation of the tilt); it shortens the mean drift by a relative 1e-5,
  asserted to be far below the detectable deviation. Power: rejects the SGLD Lyapunov solution
  (the dropped :math:`h^2\,\mathrm{diag}(P\Sigma P + V)`: 3-6 %) and the target covariance.
- ``test_clipped_sgld_one_step_law`` (drift clipped in two coordinates, not in two others; both
  implementations on the same draws): the increment is exactly
  :math:`\mathcal N(\mathrm{clip}(hg; R), 2hT I)`: z-test of each mean with the known variance,
  two-sided chi-square test of each variance (K - 1 degrees of freedom), rate ALPHA. Power:
  rejects full-increment clipping :math:`\mathrm{clip}(hg + R\xi; R)` built from the same draws
  (the paper's appendix A.4: variance near 0 where the drift saturates, about 0.5 x 2hT where
  it is small) and the unclipped drift.
- ``test_clipped_sgld_unclipped_path_is_sgld_path`` (both backends, polynomial decay): with the
  same seed (hence the same draws) and a path on which :math:`|h_t g_i| < R_t` at every step
  (checked; the design makes a violation a 9-sigma event), Clipped-SGLD's path equals SGLD's to
  1e-12. Deterministic. Power: started far out (clip active), the paths differ.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
import scipy.stats

import bench
import samplers
import targets
from samplers._draws import numpy_draws

ALPHA = 1e-3
Z_POWER = scipy.stats.norm.ppf(0.9)  # deviation reported: detected with probability 0.9
Z_SURE = scipy.stats.norm.ppf(1 - ALPHA)  # a wrong answer must be rejected with probability >= 1 - ALPHA
STEP = 0.3
TARGET = dict(dim=4, condition_number=10.0, rotation_seed=1)
NOISE = [dict(noise="none"), dict(noise="isotropic", noise_variance=16.0)]


# ---------------------------------------------------------------------------------------------
# Shared statistics


def stationary_covariance(target, step, temperature=1.0):
    """Solution S of S = A S A^T + Q for SGLD with step ``step`` (standard convention)."""
    a = np.eye(target.dim) - step * target.precision
    q = step**2 * target.noise.covariance(np.zeros(target.dim)) + 2 * step * temperature * np.eye(target.dim)
    return scipy.linalg.solve_discrete_lyapunov(a, q)


def t_test(estimates, expected):
    """Per-entry t statistics of chain-wise estimates (chains, ...) against ``expected``, the
    Bonferroni critical value, and the standard errors."""
    num_chains = estimates.shape[0]
    se = estimates.std(axis=0, ddof=1) / np.sqrt(num_chains)
    t = (estimates.mean(axis=0) - expected) / se
    critical = scipy.stats.t.ppf(1 - ALPHA / (2 * t.size), num_chains - 1)
    return t, critical, se


def check_law(estimates, expected, wrong_answers):
    """t-test of ``estimates`` (chains, entries) against ``expected``; then power: every wrong
    answer (name -> entries) is rejected with probability >= 1 - ALPHA by design and by the data."""
    t, critical, se = t_test(estimates, expected)
    detectable = (critical + Z_POWER) * se
    assert np.all(np.abs(t) <= critical), f"t = {t}, critical {critical:.2f}; expected {expected}"
    check_power(estimates.mean(axis=0), se, critical, expected, wrong_answers, detectable)


def check_power(mean, se, critical, expected, wrong_answers, detectable):
    for name, wrong in wrong_answers.items():
        margin = np.max(np.abs(wrong - expected) / se)
        assert margin > critical + Z_SURE, (
            f"test too weak to reject '{name}': it detects {detectable} but the deviation is {np.abs(wrong - expected)}")
        assert np.any(np.abs(mean - wrong) / se > critical), f"'{name}' not rejected"


def covariance_estimates(samples):
    """Per-chain averages of x x^T from kept samples (chains, draws, dim), upper triangle, and the
    (rows, cols) of the entries."""
    estimates = np.einsum("csi,csj->cij", samples, samples) / samples.shape[1]
    rows, cols = np.triu_indices(samples.shape[2])
    return estimates[:, rows, cols], (rows, cols)


def run_stationary(name, target, params, stationary, backend, num_chains, num_steps, seed, thin=10):
    """Run from N(0, stationary); per-chain estimates of E[x x^T] (JAX: upper triangle from
    thinned draws) or E[x_i^2] (NumPy: streamed), and a function picking the same entries."""
    start = np.random.default_rng(seed).multivariate_normal(np.zeros(target.dim), stationary, size=num_chains)
    keep = backend == "jax"
    result = bench.run(name, target, params=params, num_chains=num_chains, num_steps=num_steps, seed=seed,
                       backend=backend, initial_position=start, keep_samples=keep, thin=thin if keep else 1)
    assert result.metrics["num_diverged_chains"] == 0
    if keep:
        estimates, (rows, cols) = covariance_estimates(result.samples)
        return estimates, lambda matrix: np.asarray(matrix)[rows, cols]
    return result.moments.second_moment, np.diag


# ---------------------------------------------------------------------------------------------
# 1. SGLD: the discrete Lyapunov solution


@pytest.mark.parametrize("noise", NOISE, ids=lambda n: n["noise"])
@pytest.mark.parametrize("backend,num_chains,num_steps", [("jax", 256, 4000), ("numpy", 32, 2000)])
def test_sgld_matches_discrete_lyapunov_solution(noise, backend, num_chains, num_steps):
    target = targets.get("icg", **TARGET, **noise)
    stationary = stationary_covariance(target, STEP)
    estimates, entries = run_stationary("sgld", target, {"step_size": STEP}, stationary, backend,
                                        num_chains, num_steps, seed=11)
    check_law(estimates, entries(stationary), {"target covariance": entries(target.covariance)})


def test_lyapunov_solution_tends_to_target_covariance_as_step_shrinks():
    target = targets.get("icg", **TARGET)
    errors = [np.abs(stationary_covariance(target, h) - target.covariance).max() for h in (1e-2, 1e-3, 1e-4)]
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-3 * np.abs(target.covariance).max()


# ---------------------------------------------------------------------------------------------
# 2. SGLD-CV: additive noise cancels exactly


@pytest.mark.parametrize("backend,num_chains,num_steps,centre", [
    ("jax", 256, 4000, "map"), ("numpy", 32, 2000, "off-mode")])
def test_sgld_cv_cancels_additive_noise(backend, num_chains, num_steps, centre):
    target = targets.get("icg", **TARGET, noise="isotropic", noise_variance=16.0)
    params = {"step_size": STEP}
    if centre == "off-mode":  # exact for any centre with the full gradient there
        params["centre"] = np.array([1.0, -2.0, 0.5, 3.0])
        params["centre_grad"] = target.grad_logdensity(params["centre"])
    noise_free = stationary_covariance(targets.get("icg", **TARGET), STEP)
    estimates, entries = run_stationary("sgld_cv", target, params, noise_free, backend, num_chains, num_steps,
                                        seed=12)
    check_law(estimates, entries(noise_free), {
        "noisy-SGLD Lyapunov solution": entries(stationary_covariance(target, STEP)),
        "target covariance": entries(target.covariance),
    })


# ---------------------------------------------------------------------------------------------
# 3. pSGLD with a frozen preconditioner

NU0 = np.array([0.25, 1.0, 4.0, 9.0])
PSGLD_STEP = 0.15


@pytest.mark.parametrize("backend,noise,temperature,num_chains,num_steps", [
    ("jax", dict(noise="isotropic", noise_variance=4.0), 0.5, 256, 4000),
    ("jax", dict(noise="none"), 1.0, 256, 4000),
    ("numpy", dict(noise="isotropic", noise_variance=4.0), 2.0, 32, 2000),
], ids=["jax-isotropic-T0.5", "jax-none-T1", "numpy-isotropic-T2"])
def test_psgld_frozen_preconditioner_lyapunov(backend, noise, temperature, num_chains, num_steps):
    target = targets.get("icg", **TARGET, **noise)
    epsilon = 1e-5
    g = np.diag(1 / (np.sqrt(NU0) + epsilon))
    v = target.noise.covariance(np.zeros(target.dim))
    a = np.eye(target.dim) - PSGLD_STEP * g @ target.precision
    assert np.max(np.abs(np.linalg.eigvals(a))) < 0.98  # stable, mixing within ~50 steps
    q = PSGLD_STEP**2 * g @ v @ g + 2 * PSGLD_STEP * temperature * g
    stationary = scipy.linalg.solve_discrete_lyapunov(a, q)
    params = dict(step_size=PSGLD_STEP, temperature=temperature, smoothing=1.0, epsilon=epsilon,
                  initial_square_average=NU0)
    estimates, entries = run_stationary("psgld", target, params, stationary, backend, num_chains, num_steps, seed=13)
    check_law(estimates, entries(stationary), {
        "unpreconditioned SGLD solution": entries(stationary_covariance(target, PSGLD_STEP, temperature)),
        "tempered target covariance": entries(temperature * target.covariance),
    })


# ---------------------------------------------------------------------------------------------
# 4. Time-varying schedules: the exact covariance recursion


def polynomial_decay(base, t, offset=1.0, exponent=0.55):
    return base * (offset + t) ** (-exponent)


def cyclical(base, t, cycle_length, final_fraction=0.0):
    phase = np.mod(t, cycle_length) / cycle_length
    return base * (final_fraction + (1 - final_fraction) / 2 * (np.cos(np.pi * phase) + 1))


def averaged_second_moment(target, s0, steps, noisy, recorded, temperature=1.0):
    """diag of the mean of S_{t+1} over the recorded steps t, where S_{t+1} = A_t S_t A_t^T + Q_t,
    A_t = I - h_t P, Q_t = h_t^2 V + noisy_t 2 h_t T I, S_0 = s0."""
    eye, p = np.eye(target.dim), target.precision
    v = target.noise.covariance(np.zeros(target.dim))
    s, total = s0, np.zeros(target.dim)
    for h, on, keep in zip(steps, noisy, recorded):
        a = eye - h * p
        s = a @ s @ a.T + h**2 * v + on * 2 * h * temperature * eye
        total += keep * np.diag(s)
    return total / np.sum(recorded)


SCHEDULE_CASES = {
    # name: (sampler, params, schedule formula, exploration steps of each cycle (cycle_length, count), noise)
    "sgld-decay": ("sgld", dict(step_size=0.5, schedule={"kind": "polynomial_decay", "offset": 1.0, "exponent": 0.55}),
                   polynomial_decay, None, dict(noise="isotropic", noise_variance=4.0), 1.0),
    "csgld-cyclical": ("csgld", dict(step_size=0.5, temperature=0.5,
                                     schedule={"kind": "cyclical", "cycle_length": 250}),
                       functools.partial(cyclical, cycle_length=250), None, dict(noise="none"), 0.5),
    # beta K = 60.5: steps 0..60 of each 200-step cycle explore (no float boundary case)
    "csgld-exploration": ("csgld", dict(step_size=0.5, exploration_fraction=0.3025,
                                        schedule={"kind": "cyclical", "cycle_length": 200, "final_fraction": 0.02}),
                          functools.partial(cyclical, cycle_length=200, final_fraction=0.02), (200, 61),
                          dict(noise="isotropic", noise_variance=4.0), 1.0),
}


@pytest.mark.parametrize("case,backend,num_chains,num_steps", [
    ("sgld-decay", "jax", 256, 2000),
    ("csgld-cyclical", "jax", 256, 1000),
    ("csgld-exploration", "jax", 256, 1000),
    ("csgld-exploration", "numpy", 32, 600),
])
def test_time_varying_schedule_follows_exact_recursion(case, backend, num_chains, num_steps):
    name, params, schedule, exploration, noise, temperature = SCHEDULE_CASES[case]
    target = targets.get("icg", **TARGET, **noise)
    s0 = np.eye(target.dim)
    start = np.random.default_rng(14).multivariate_normal(np.zeros(target.dim), s0, size=num_chains)
    result = bench.run(name, target, params=params, num_chains=num_chains, num_steps=num_steps, seed=14,
                       backend=backend, initial_position=start)
    assert result.metrics["num_diverged_chains"] == 0
    t = np.arange(num_steps)
    steps = schedule(params["step_size"], t)
    sampling = np.ones(num_steps, bool) if exploration is None else np.mod(t, exploration[0]) >= exploration[1]
    np.testing.assert_array_equal(result.moments.count, np.full(num_chains, sampling.sum()))
    law = functools.partial(averaged_second_moment, target, s0, temperature=temperature)
    expected = law(steps, sampling, sampling)
    wrong = {"schedule ignored (constant step)": law(np.full(num_steps, params["step_size"]), sampling, sampling),
             "halved step": law(steps / 2, sampling, sampling)}
    if exploration is not None:
        wrong["noise on in the exploration stage"] = law(steps, np.ones(num_steps, bool), sampling)
        wrong["exploration positions recorded"] = law(steps, sampling, np.ones(num_steps, bool))
    check_law(result.moments.second_moment, expected, wrong)


# ---------------------------------------------------------------------------------------------
# One-step laws: increments of many draws from one fixed state


def increments(sampler, params, x, grad_fn, draws, implementation):
    """Increments of one step from ``x`` for each draw (leading axis of ``draws``): the reference
    step broadcast over the draws, or the optimized step vmapped over them."""
    if implementation == "reference":
        state = sampler.init(np.array(x, dtype=np.float64), params)
        return sampler.reference_step(state, grad_fn, draws, params)[0].position - x
    state = sampler.init(jnp.asarray(x, dtype=jnp.float64), params)
    step = jax.jit(jax.vmap(lambda d: sampler.optimized_step(state, grad_fn, d, params)[0].position))
    return np.asarray(step(jax.tree.map(jnp.asarray, draws))) - x


def both_implementations(sampler, params, x, grad_fn, draws):
    reference = increments(sampler, params, x, grad_fn, draws, "reference")
    optimized = increments(sampler, params, x, grad_fn, draws, "optimized")
    np.testing.assert_allclose(optimized, reference, rtol=0, atol=1e-12 * np.abs(reference).max())
    return reference


# ---------------------------------------------------------------------------------------------
# 5. SGLRW

SGLRW_STEP, SGLRW_TEMPERATURE, NUM_DRAWS = 0.05, 0.5, 100_000


def binomial_pvalues(successes, trials, probabilities):
    return np.array([scipy.stats.binomtest(int(k), trials, p).pvalue for k, p in zip(successes, probabilities)])


@pytest.mark.parametrize("tilts", [[0.5, -0.3, 0.7, -0.2], [3.0, -2.0, 0.4, -0.6]], ids=["unclipped", "clipped"])
def test_sglrw_one_step_moments(tilts):
    sampler, h, temp = samplers.get("sglrw"), SGLRW_STEP, SGLRW_TEMPERATURE
    target = targets.get("icg", **TARGET)
    tilts = np.array(tilts)
    x = -target.covariance @ (tilts / np.sqrt(h / (2 * temp)))  # the position where the tilts are these
    np.testing.assert_allclose(np.sqrt(h / (2 * temp)) * target.grad_logdensity(x), tilts, rtol=1e-12)
    params = sampler.Params(step_size=h, temperature=temp)
    draws = numpy_draws(np.random.default_rng(15), sampler.draw_spec(target.dim), (NUM_DRAWS,))
    steps = both_implementations(sampler, params, x, target.grad_logdensity, draws)
    lattice = np.sqrt(2 * h * temp)
    # Second moment: exactly 2hT in every draw (a lattice move), not only on average.
    np.testing.assert_allclose(steps**2, 2 * h * temp, rtol=1e-14)
    moves = np.sign(steps)
    clipped = np.abs(tilts) >= 1
    # Clipped coordinates: E[S_i] = sqrt(2hT) sign(g_i) with probability 1.
    assert np.all(moves[:, clipped] == np.sign(tilts[clipped]))
    free = np.flatnonzero(~clipped)
    pairs = [(i, j) for k, i in enumerate(free) for j in free[k + 1:]]

    def pvalues(moves, mean_tilts):
        """Exact binomial tests: #(s_i = +1) ~ Bin(K, (1 + t_i)/2), #(s_i s_j = +1) ~ Bin(K, (1 + t_i t_j)/2)."""
        singles = binomial_pvalues((moves[:, free] > 0).sum(0), NUM_DRAWS, (1 + mean_tilts[free]) / 2)
        products = [(moves[:, i] * moves[:, j] > 0).sum() for i, j in pairs]
        crosses = binomial_pvalues(products, NUM_DRAWS, [(1 + mean_tilts[i] * mean_tilts[j]) / 2 for i, j in pairs])
        return np.concatenate([singles, crosses])

    num_tests = len(free) + len(pairs)
    p = pvalues(moves, tilts)
    assert np.all(p >= ALPHA / num_tests), f"binomial p-values {p}, Bonferroni level {ALPHA / num_tests:.1e}"
    # Mean h g (eq. 10) and cross moments h^2 g_i g_j: np.mean is checked by the binomial counts above.
    np.testing.assert_allclose(steps.mean(0)[clipped], lattice * np.sign(tilts[clipped]), rtol=1e-14)
    # Power. The deviation detected with probability 1 - ALPHA in the tilt of one coordinate is
    # about 2 (z_{ALPHA/2m} + z_{1-ALPHA}) sqrt(p(1-p)/K) <= 0.025; the wrong answers move tilts by >= 0.05.
    z = scipy.stats.norm.ppf(1 - ALPHA / (2 * num_tests)) + Z_SURE
    sure = 2 * z * np.sqrt(0.25 / NUM_DRAWS)
    wrong = {"halved drift h g / 2": tilts / 2, "temperature left out of the tilt": tilts * np.sqrt(temp)}
    for name, wrong_tilts in wrong.items():
        wrong_tilts = np.where(clipped, tilts, wrong_tilts)
        assert np.max(np.abs(wrong_tilts - tilts)[free]) > sure, name
        assert np.any(pvalues(moves, wrong_tilts) < ALPHA / num_tests), f"'{name}' not rejected"
    shared = {"uniform": np.repeat(draws["uniform"][:, :1], target.dim, axis=1)}  # one uniform for all coordinates
    shared_moves = np.sign(increments(sampler, params, x, target.grad_logdensity, shared, "reference"))
    if len(pairs):
        assert np.any(pvalues(shared_moves, tilts) < ALPHA / num_tests), "correlated moves not rejected"


def lemma_matrices(g, zeta):
    """M_SGLD = zeta zeta^T + g zeta^T + zeta g^T and M_SGLRW = offdiag(M_SGLD) (Lemma 4.3) for
    draws of zeta (..., d)."""
    m_sgld = zeta[..., :, None] * zeta[..., None, :] + g[:, None] * zeta[..., None, :] + zeta[..., :, None] * g
    return m_sgld, m_sgld * (1 - np.eye(g.shape[0]))


def increment_second_moment_difference(mb, fb, h):
    """Per-entry mean and standard error over draws of (mb_i mb_j - fb_i fb_j) / h^2, from the
    increments (K, d) of the minibatch and full-batch updates, without forming (K, d, d)."""
    k = mb.shape[0]
    mean = (mb.T @ mb - fb.T @ fb) / (k * h**2)
    square = ((mb**2).T @ mb**2 - 2 * (mb * fb).T @ (mb * fb) + (fb**2).T @ fb**2) / (k * h**4)
    return mean, np.sqrt(np.maximum(square - mean**2, 0) / (k - 1))


def test_sglrw_lemma_4_3_covariance_error():
    target = targets.get("linreg", noise="minibatch", noise_batch_size=8)
    rng = np.random.default_rng(16)
    positions = np.asarray(target.sample(jax.random.key(16), 5))

    # (i) Deterministic: ||M_SGLRW||_F^2 <= ||M_SGLD||_F^2 for every minibatch, strictly where diag(M_SGLD) != 0.
    for x in positions:
        g = target.grad_logdensity(x)
        zeta = np.array([target.stochastic_grad(x, numpy_draws(rng, target.draw_spec)) - g for _ in range(400)])
        m_sgld, m_sglrw = lemma_matrices(g, zeta)
        sgld_norm, sglrw_norm = (m_sgld**2).sum((1, 2)), (m_sglrw**2).sum((1, 2))
        diagonal = (np.diagonal(m_sgld, axis1=1, axis2=2) ** 2).sum(1)
        assert np.all(sglrw_norm <= sgld_norm)
        nonzero = diagonal > 1e-12 * sgld_norm
        assert nonzero.mean() > 0.99
        assert np.all(sglrw_norm[nonzero] < sgld_norm[nonzero])
        np.testing.assert_allclose(sgld_norm - sglrw_norm, diagonal, rtol=1e-9)
        assert sglrw_norm.mean() < sgld_norm.mean()

    # (ii) Statistical: M estimated from sampler increments matches the lemma (both samplers).
    cases = []
    for x in positions[:2]:
        for _ in range(2):
            draw = numpy_draws(rng, target.draw_spec)
            cases.append((x, functools.partial(target.stochastic_grad, draw=draw), target.stochastic_grad(x, draw)))
    largest = max(np.abs(minibatch_grad).max() for _, _, minibatch_grad in cases)
    h, temp = 2 * (0.5 / largest) ** 2, 1.0  # largest tilt sqrt(h/2T)|g_i| = 0.5: the clip is inactive
    num_draws = NUM_DRAWS
    num_tests = 2 * len(cases) * target.dim * (target.dim + 1) // 2
    critical = scipy.stats.norm.ppf(1 - ALPHA / (2 * num_tests))
    upper = np.triu_indices(target.dim)
    for name in ("sgld", "sglrw"):
        sampler = samplers.get(name)
        params = sampler.Params(step_size=h, temperature=temp)
        for x, minibatch_oracle, minibatch_grad in cases:
            g = target.grad_logdensity(x)
            draws = numpy_draws(rng, sampler.draw_spec(target.dim), (num_draws,))
            mb = increments(sampler, params, x, minibatch_oracle, draws, "reference")
            fb = increments(sampler, params, x, target.grad_logdensity, draws, "reference")
            mean, se = increment_second_moment_difference(mb, fb, h)
            m_sgld, m_sglrw = lemma_matrices(g, minibatch_grad - g)
            expected = m_sgld if name == "sgld" else m_sglrw
            if name == "sglrw":  # the diagonal is deterministic: mb_i^2 = fb_i^2 = 2hT
                np.testing.assert_allclose(np.diag(mean), 0, atol=1e-9 * np.abs(mean).max())
                entries = np.triu_indices(target.dim, 1)
            else:
                entries = upper
            z = (mean - expected)[entries] / se[entries]
            assert np.all(np.abs(z) <= critical), f"{name}: z = {z[np.abs(z) > critical]}"
            wrong = {"M = 0 (minibatch ignored)": 0 * expected, "M / 4 (halved drift)": expected / 4}
            check_power(mean[entries], se[entries], critical, expected[entries],
                        {k: v[entries] for k, v in wrong.items()}, (critical + Z_POWER) * se[entries])


def sglrw_second_moment_fixed_point(precision, noise_covariance, step, temperature, mask):
    r"""Fixed point of :math:`\Sigma' = \Sigma - h(\Sigma P + P\Sigma) + 2hT I + h^2 [mask \odot (P\Sigma P + V)]`.

    SGLRW, unclipped, on :math:`\mathcal N(0, P^{-1})` with :math:`\hat g = -Px + \epsilon`:
    :math:`E[S \mid x, \epsilon] = h\hat g` (the probabilities are linear in :math:`\hat g`), so
    :math:`E[S \mid x] = -hPx` and :math:`E[x S^\top] = -h\Sigma P`; :math:`S_i^2 = 2hT`; for
    :math:`i \ne j` the moves are independent given :math:`(x, \epsilon)`:
    :math:`E[S_i S_j \mid x] = h^2 E[\hat g_i \hat g_j \mid x] = h^2 ((Px)_i (Px)_j + V_{ij})`. So
    :math:`E[x' x'^\top] = \Sigma - h(\Sigma P + P\Sigma) + 2hT I + h^2\,\mathrm{offdiag}(P\Sigma P + V)`
    (mask = off-diagonal ones). With mask = all ones it is SGLD's recursion (a check of the algebra).
    Returns the fixed point and the spectral radius of the linear map (< 1: a stable recursion).
    """
    d = precision.shape[0]
    eye, p = np.eye(d), precision
    m = np.asarray(mask, dtype=np.float64).reshape(-1)
    # Row-major vec: vec(A S B) = kron(A, B^T) vec(S).
    linear = np.eye(d * d) - step * (np.kron(eye, p.T) + np.kron(p, eye)) + step**2 * m[:, None] * np.kron(p, p.T)
    rhs = (2 * step * temperature * eye + step**2 * np.asarray(mask) * noise_covariance).reshape(-1)
    fixed = np.linalg.solve(np.eye(d * d) - linear, rhs).reshape(d, d)
    return (fixed + fixed.T) / 2, np.max(np.abs(np.linalg.eigvals(linear)))


def test_sglrw_unclipped_second_moment_fixed_point():
    target = targets.get("icg", dim=3, condition_number=4.0, rotation_seed=1, noise="isotropic", noise_variance=1.0)
    h, temp = 0.04, 1.0
    p, v = target.precision, target.noise.covariance(np.zeros(3))
    offdiag = 1 - np.eye(3)
    fixed, radius = sglrw_second_moment_fixed_point(p, v, h, temp, offdiag)
    assert radius < 1
    np.testing.assert_allclose(fixed, fixed - h * (fixed @ p + p @ fixed) + 2 * h * temp * np.eye(3)
                               + h**2 * offdiag * (p @ fixed @ p + v), rtol=1e-10)
    sgld = stationary_covariance(target, h, temp)
    np.testing.assert_allclose(sglrw_second_moment_fixed_point(p, v, h, temp, np.ones((3, 3)))[0], sgld, rtol=1e-10)
    # Clipping: the tilt sqrt(h/2T) g_i is about N(0, h (P Sigma P + V)_ii / 2T) at the fixed point.
    tilt_sd = np.sqrt(h * np.diag(p @ fixed @ p + v) / (2 * temp)).max()
    clip_probability = 2 * scipy.stats.norm.sf(1 / tilt_sd)
    excess = 2 * (tilt_sd * scipy.stats.norm.pdf(1 / tilt_sd) - scipy.stats.norm.sf(1 / tilt_sd))  # E(|t| - 1)+
    relative_drift_change = excess / (tilt_sd * np.sqrt(2 / np.pi))
    assert clip_probability < 1e-4 and relative_drift_change < 1e-4

    estimates, entries = run_stationary("sglrw", target, {"step_size": h, "temperature": temp}, fixed, "jax",
                                        num_chains=512, num_steps=8000, seed=17, thin=4)
    _, _, se = t_test(estimates, entries(fixed))
    assert relative_drift_change * np.abs(entries(fixed)).max() < 1e-2 * se.min()  # clipping cannot matter
    check_law(estimates, entries(fixed), {"SGLD Lyapunov solution": entries(sgld),
                                          "target covariance": entries(target.covariance)})


# ---------------------------------------------------------------------------------------------
# 6. Clipped-SGLD


def test_clipped_sgld_one_step_law():
    sampler, h, temp = samplers.get("clipped_sgld"), 0.02, 2.0
    target = targets.get("icg", **TARGET)
    radius = np.sqrt(2 * h * temp)
    ratios = np.array([50.0, -50.0, 0.5, -0.3])  # h g_i / R: the drift is clipped in the first two
    x = -target.covariance @ (ratios * radius / h)
    params = sampler.Params(step_size=h, temperature=temp)
    draws = numpy_draws(np.random.default_rng(18), sampler.draw_spec(target.dim), (NUM_DRAWS,))
    steps = both_implementations(sampler, params, x, target.grad_logdensity, draws)
    clip = np.clip(ratios, -1, 1) * radius
    num_tests = 2 * target.dim
    z_critical = scipy.stats.norm.ppf(1 - ALPHA / (2 * num_tests))
    dof = NUM_DRAWS - 1
    chi2_low = scipy.stats.chi2.ppf(ALPHA / (2 * num_tests), dof)
    chi2_high = scipy.stats.chi2.isf(ALPHA / (2 * num_tests), dof)

    def rejected(steps, mean):
        """Which of the mean z-tests (known variance 2hT) and variance chi-square tests reject."""
        z = (steps.mean(0) - mean) / (radius / np.sqrt(NUM_DRAWS))
        chi2 = dof * steps.var(0, ddof=1) / radius**2
        return np.abs(z) > z_critical, (chi2 < chi2_low) | (chi2 > chi2_high)

    mean_rejected, variance_rejected = rejected(steps, clip)
    assert not mean_rejected.any() and not variance_rejected.any(), (steps.mean(0), clip, steps.var(0), radius**2)
    # Power. Variance: chi-square detects with probability 1 - ALPHA a relative change of about
    # (z + z_{1-ALPHA}) sqrt(2/K) = 0.035; full-increment clipping changes it by > 30 % here.
    assert (z_critical + Z_SURE) * np.sqrt(2 / NUM_DRAWS) < 0.3
    full_clip = np.clip(h * target.grad_logdensity(x) + radius * draws["noise"], -radius, radius)
    assert np.all(rejected(full_clip, clip)[1]), "full-increment clipping not rejected"
    unclipped_drift = h * target.grad_logdensity(x)
    assert np.any(rejected(steps, unclipped_drift)[0]), "unclipped drift not rejected"


@pytest.mark.parametrize("backend,num_chains,num_steps", [("jax", 64, 2000), ("numpy", 4, 300)])
def test_clipped_sgld_unclipped_path_is_sgld_path(backend, num_chains, num_steps):
    target = targets.get("icg", **TARGET)
    params = dict(step_size=0.01, temperature=1.0, schedule={"kind": "polynomial_decay"})
    # |g_i| at stationarity has sd sqrt(P_ii) <= 1.6; the clip needs |g_i| > sqrt(2T/h_t) >= 14: 9 sd.
    start = np.random.default_rng(19).multivariate_normal(np.zeros(target.dim), target.covariance, num_chains)
    common = dict(num_chains=num_chains, num_steps=num_steps, seed=19, backend=backend, keep_samples=True)
    sgld = bench.run("sgld", target, params=params, initial_position=start, **common).samples
    clipped = bench.run("clipped_sgld", target, params=params, initial_position=start, **common).samples
    before = np.concatenate([start[:, None], sgld[:, :-1]], axis=1)  # x_t of each step t
    h_t = polynomial_decay(params["step_size"], np.arange(num_steps))[:, None]
    assert np.all(np.abs(h_t * target.grad_logdensity(before)) < np.sqrt(2 * h_t)), "clip active: precondition"
    np.testing.assert_allclose(clipped, sgld, rtol=0, atol=1e-12)
    # Power: started far out the clip is active and the paths differ from the first step.
    far = np.full((num_chains, target.dim), 50.0) * np.array([1.0, -2.0, 3.0, -4.0])
    short = dict(common, num_steps=5)
    sgld = bench.run("sgld", target, params=params, initial_position=far, **short).samples
    clipped = bench.run("clipped_sgld", target, params=params, initial_position=far, **short).samples
    drift = params["step_size"] * target.grad_logdensity(far)  # h_0 g(x_0), clipped at R_0 = sqrt(2 h_0 T)
    assert np.all(np.abs(drift) > 2 * np.sqrt(2 * params["step_size"]))
    np.testing.assert_allclose(sgld[:, 0] - clipped[:, 0], drift - np.clip(drift, -np.sqrt(0.02), np.sqrt(0.02)),
                               rtol=1e-10)
