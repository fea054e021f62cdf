r"""Tier 1: exact laws of the Langevin-family samplers (SGLD, SGLD-CV, pSGLD, cSGLD, SGLRW, Clipped-SGLD).

On a Gaussian target :math:`\mathcal N(0, P^{-1})` with additive Gaussian gradient noise
:math:`\epsilon \sim \mathcal N(0, V)`, SGLD, SGLD-CV and pSGLD with a frozen preconditioner are
linear Gaussian recursions :math:`x_{t+1} = A_t x_t + \eta_t`, :math:`\eta_t \sim \mathcal N(0, Q_t)`,
so :math:`S_{t+1} = A_t S_t A_t^\top + Q_t` holds exactly for the covariance, and with a constant
step the stationary covariance solves the discrete Lyapunov equation :math:`S = A S A^\top + Q`.
SGLRW is not Gaussian, but in its unclipped regime its second moment follows an exact linear
recursion too. These laws include the method's own discretisation bias, so the tests separate
implementation bugs from that bias. Exact one-step laws complete them.

Conventions. Every test is a family of checks with family-wise false-failure rate at most
``ALPHA`` = 1e-3 (Bonferroni over its entries); deterministic checks have rate 0 (tolerances are rounding,
1e-9 to 1e-12 relative). Power is checked in each test, never assumed: for every named wrong answer,
the design (this run's standard errors) must reject it with probability at least ``1 - ALPHA`` (its
largest standardized deviation exceeds the one the test detects with that probability:
``critical + z_{1-ALPHA}`` for z-tests, the noncentral-t quantile, somewhat larger, for t-tests), and the data
must reject it, so a sampler that produced that wrong answer fails; failure messages give the
deviation each entry detects with probability 0.9. The checks are those of ``sgbench.reference.checks``
(``law_check``, ``moment_law_check``, ``normal_draws_check``, ``p_value_check``). Long runs use a
Student-t test per entry (``law_check`` without Johnson's skewness correction, the statistic the
realized rates below were measured for): independent chains each give one estimate (a time average),
the between-chain spread gives the standard error, ``C - 1`` degrees of freedom. It is exact up to
the CLT over chains, but the per-chain averages are skewed (sample skewness 0.2-0.5 in the
stationary runs, up to 2.6 in the polynomial-decay case, where the transient dominates), which makes
the far tails of t asymmetric. So the realized family-wise rate was measured by resampling 10^5
families of chains from a run of 8192-32768 chains of the same configuration (precision about
+-10 %), for every configuration with few chains or short runs (all NumPy runs, all schedule cases,
SGLRW) and for SGLD on JAX with noise (representative of the other 256-chain JAX runs): 0.9-1.1
ALPHA at nominal level ALPHA, except pSGLD on NumPy (1.3 ALPHA; tested at nominal ALPHA/2: 0.76
ALPHA) and cSGLD with exploration on NumPy (2.1 ALPHA; tested at nominal ALPHA/4: 0.82 ALPHA); the
polynomial-decay case uses 8192 chains for the same reason (1.4 ALPHA with 2048).

Tests (statistic; false-failure rate; power):

- ``test_sgld_matches_discrete_lyapunov_solution`` (JAX 256 chains x 4000 steps, NumPy 32 x 2000;
  with and without isotropic noise V = 16 I; h = 0.3): chains start at :math:`\mathcal N(0, S)`
  (exactly stationary); t-test of per-chain averages of :math:`x x^\top` (JAX: the 10 entries of
  the upper triangle from draws thinned by 10; NumPy: the 4 streamed :math:`E[x_i^2]`) against
  :math:`S`, ``A = I - hP``, ``Q = h^2 V + 2hT I``. Rate ALPHA. Power: rejects the target
  covariance (the discretisation bias: 9-36 % without noise, a factor 3.4 with it).
- ``test_lyapunov_solution_tends_to_target_covariance_as_step_shrinks``: deterministic.
- ``test_sgld_cv_cancels_additive_noise`` (JAX, centre at the mode; NumPy, centre off the mode;
  V = 16 I): the control variate cancels additive noise exactly for any centre (with the full
  gradient there), so the stationary covariance is the NOISE-FREE SGLD solution. Same t-test,
  rate ALPHA. Power: rejects the noisy-SGLD solution (the :math:`h^2 V` term makes it 3.4 times
  larger) and the target covariance. (The centre is given, not found by ``find_map``, whose
  L-BFGS compile costs seconds; ``params_for``'s MAP path is covered by the equivalence tests.)
- ``test_psgld_frozen_preconditioner_lyapunov`` (JAX T = 0.5, NumPy T = 2; V = 4 I, h = 0.2):
  ``smoothing = 1`` and :math:`\nu_0 = (9, 4, 1, 1/4)`, so :math:`G = 1/(\sqrt{\nu_0} + \varepsilon)`
  (1/3 to 2) is constant, ``A = I - hGP``, ``Q = h^2 G V G + 2hT G``. Same t-test, rate ALPHA.
  Power: rejects the unpreconditioned SGLD solution at the same (h, T) and the tempered target
  covariance :math:`T P^{-1}`.
- ``test_time_varying_schedule_follows_exact_recursion``: chains start at :math:`\mathcal N(0, S_0)`
  and :math:`S_{t+1} = A_t S_t A_t^\top + Q_t` with :math:`h_t` recomputed here from the
  schedule's formula and, in exploration steps, no injected noise (the gradient noise stays).
  Statistic: t-test of the per-chain streamed :math:`E[x_i^2]` against the average of
  :math:`\mathrm{diag}(S_{t+1})` over the recorded steps t (sampling-stage steps only); the moment
  count must equal the number of sampling-stage steps exactly. Rate ALPHA. Cases and power:
  SGLD, polynomial decay, V = 4 I, :math:`S_0 = 9I` (8192 chains x 300 steps) and cSGLD with a
  cyclical schedule, exploration fraction 0, T = 0.5 (1024 x 400): reject the schedule ignored
  (constant h) and the halved step (the other discretisation convention); cSGLD with
  exploration fraction 0.3025 (16 noise-free steps per 50-step cycle, V = 4 I, h = 0.05, 2048 x
  400): also rejects noise left on in the exploration stage and exploration positions included in
  the average; the same on the NumPy driver (h = 0.5, 64 x 400) checks the count exactly and
  rejects only the gross error (constant h). Not detectable here: an off-by-one in the schedule
  or in which position ``is_sample`` marks (both need about 30 times more chain-steps).
- ``test_sglrw_one_step_moments`` (T = 0.5, h = 0.05, 10^5 draws from one position; tilts
  :math:`\sqrt{h/2T}\,g` all inside (-1, 1), or two of them clipped): reference and optimized steps
  on the same draws must agree (1e-12; a move flips only if a uniform is within rounding of its
  threshold, probability about 1e-10). Deterministic: every :math:`S_i^2 = 2hT` (eq. 10's second
  moment holds draw by draw, not only on average); clipped coordinates move by
  :math:`\sqrt{2hT}\,\mathrm{sign}(g_i)` in every draw. Statistical, for unclipped coordinates:
  the number of +1 moves and the number of positive products :math:`s_i s_j` are exactly binomial
  with :math:`E[S] = hg` and :math:`E[S_i S_j] = h^2 g_i g_j` (eq. 10, independent coordinates):
  exact binomial tests, Bonferroni, rate at most ALPHA. Power: rejects the halved drift
  (:math:`hg/2`), the temperature left out of the tilt (:math:`h\sqrt T g`), and a variant built
  from the same draws with one uniform shared by all coordinates (correlated moves).
- ``test_sglrw_lemma_4_3_covariance_error`` (Bayesian linear regression, N = 1000, d = 20, B = 8):
  (i) deterministic: at 5 posterior draws x 400 minibatches,
  :math:`\|M_{SGLRW}\|_F^2 \le \|M_{SGLD}\|_F^2` with :math:`M_{SGLRW} = \mathrm{offdiag}(M_{SGLD})`,
  :math:`M_{SGLD} = \zeta\zeta^\top + g\zeta^\top + \zeta g^\top`, strictly where the diagonal
  :math:`\zeta_i^2 + 2 g_i \zeta_i` is non-zero, and on average over minibatches (the paper's
  :math:`\nabla U, \zeta` are :math:`-g, -\zeta` here; M is unchanged). (ii) statistical: for 4
  (position, minibatch) pairs, with h making the largest tilt 0.5 (clip inactive), M estimated
  by :math:`h^{-2}` times the mean of :math:`\Delta^{mb}\Delta^{mb\top} - \Delta^{fb}\Delta^{fb\top}`
  over 10^5 increments of each sampler (minibatch vs full gradient, same internal draws): the
  SGLRW diagonal is exactly 0 (deterministic), and z-tests of every other entry against the
  lemma (SGLD: :math:`M_{SGLD}`; SGLRW: its off-diagonal part), Bonferroni over all entries of
  both samplers, rate ALPHA (the per-draw terms are bounded or Gaussian). Power: rejects M = 0
  (minibatch noise ignored) and M / 4 (halved drift).
- ``test_sglrw_unclipped_second_moment_fixed_point`` (ICG d = 3, kappa = 4, V = I, h = 0.04, T = 1;
  512 chains x 4000 steps): the fixed point of
  :math:`\Sigma' = \Sigma - h(\Sigma P + P\Sigma) + 2hT I + h^2\,\mathrm{offdiag}(P\Sigma P + V)`
  (derived in ``sglrw_second_moment_fixed_point``, solved vectorised, checked by substitution and
  by turning the mask into SGLD's Lyapunov equation); chains start with second moment
  :math:`\Sigma^*`, which the recursion then keeps at every step; t-test of the 6 entries of
  per-chain averages of :math:`x x^\top` (draws thinned by 4). Rate ALPHA. The clip is active
  with probability about 3e-5 per coordinate and step (Gaussian approximation of the tilt at the
  fixed point, sd 0.24); it shortens the mean drift by a relative 1e-5, asserted to be below 1 %
  of the smallest standard error. Power: rejects the SGLD Lyapunov solution (it keeps
  :math:`h^2\,\mathrm{diag}(P\Sigma P + V)`: 3-6 % larger).
- ``test_clipped_sgld_one_step_law`` (h = 0.02, T = 2, 10^5 draws; :math:`hg/R = (50, -50, 0.5,
  -0.3)`, so the drift is clipped in two coordinates; reference and optimized steps on the same
  draws agree): the increment is exactly :math:`\mathcal N(\mathrm{clip}(hg; R), 2hT I)`: z-test of
  each mean with the known variance, two-sided chi-square test of each variance (K - 1 degrees of
  freedom), rate ALPHA, exact. Power: the variance test detects a relative change of 3 %; it
  rejects full-increment clipping :math:`\mathrm{clip}(hg + R\xi; R)` built from the same draws
  (the paper's appendix A.4: variance near 0 where the drift saturates, about 0.5 x 2hT where it
  is small), and the mean test rejects the unclipped drift.
- ``test_clipped_sgld_unclipped_path_is_sgld_path`` (JAX 64 chains x 1000 steps, NumPy 4 x 300;
  polynomial decay): the same seed gives both samplers the same draws; on paths where
  :math:`|h_t g_i| < R_t` at every step (checked; a violation is a 9-sd event by design),
  Clipped-SGLD's path equals SGLD's to 1e-12. Deterministic. Power: one more chain starts far
  out, where its first step differs by exactly :math:`h_0 g - \mathrm{clip}(h_0 g; R_0)`.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
import scipy.stats

from sgbench import samplers, targets
from sgbench.base.draws import numpy_draws
from sgbench.bench.running import run as running
from sgbench.reference.checks import (
    binomial_p_values,
    bonferroni,
    law_check,
    moment_law_check,
    normal_draws_check,
    p_value_check,
    z_critical,
)
from sgbench.samplers._langevin import langevin_recursion

ALPHA = 1e-3
# law_check's options here: Student's t, and every wrong answer rejected with probability >= 1 - ALPHA
STUDENT = dict(sure=ALPHA, skewness_correction=False)
STEP = 0.3
TARGET = dict(dim=4, condition_number=10.0, rotation_seed=1)
NOISE = [dict(noise="none"), dict(noise="isotropic", noise_variance=16.0)]


# ---------------------------------------------------------------------------------------------
# Shared statistics


def stationary_covariance(target, step, temperature=1.0):
    """Solution S of S = A S A^T + Q for SGLD with step ``step`` (standard convention)."""
    noise = target.noise.covariance(np.zeros(target.dim))
    return scipy.linalg.solve_discrete_lyapunov(*langevin_recursion(target.precision, step, temperature, noise))


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
    result = running.run(name, target, params=params, num_chains=num_chains, num_steps=num_steps, seed=seed,
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
    law_check(estimates, entries(stationary), {"target covariance": entries(target.covariance)}, alpha=ALPHA,
              **STUDENT, name="SGLD: discrete Lyapunov law").assert_passed()


def test_lyapunov_solution_tends_to_target_covariance_as_step_shrinks():
    target = targets.get("icg", **TARGET)
    errors = [np.abs(stationary_covariance(target, h) - target.covariance).max() for h in (1e-2, 1e-3, 1e-4)]
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-3 * np.abs(target.covariance).max()


# ---------------------------------------------------------------------------------------------
# 2. SGLD-CV: additive noise cancels exactly


@pytest.mark.parametrize("backend,num_chains,num_steps,centre", [
    ("jax", 256, 4000, [0.0, 0.0, 0.0, 0.0]), ("numpy", 32, 2000, [1.0, -2.0, 0.5, 3.0]),
], ids=["jax-mode", "numpy-off-mode"])
def test_sgld_cv_cancels_additive_noise(backend, num_chains, num_steps, centre):
    target = targets.get("icg", **TARGET, noise="isotropic", noise_variance=16.0)
    # The mode (0, analytic) or another centre: exact for any centre with the full gradient there.
    params = {"step_size": STEP, "centre": np.array(centre), "centre_grad": target.grad_logdensity(np.array(centre))}
    noise_free = stationary_covariance(targets.get("icg", **TARGET), STEP)
    estimates, entries = run_stationary("sgld_cv", target, params, noise_free, backend, num_chains, num_steps,
                                        seed=12)
    law_check(estimates, entries(noise_free), {
        "noisy-SGLD Lyapunov solution": entries(stationary_covariance(target, STEP)),
        "target covariance": entries(target.covariance),
    }, alpha=ALPHA, **STUDENT, name="SGLD-CV: noise-free Lyapunov law").assert_passed()


# ---------------------------------------------------------------------------------------------
# 3. pSGLD with a frozen preconditioner

NU0 = np.array([9.0, 4.0, 1.0, 0.25])  # G = 1/(sqrt(nu0) + eps) from 1/3 to 2
PSGLD_STEP = 0.2


@pytest.mark.parametrize("backend,noise,temperature,num_chains,num_steps,alpha", [
    ("jax", dict(noise="isotropic", noise_variance=4.0), 0.5, 256, 4000, ALPHA),
    ("numpy", dict(noise="isotropic", noise_variance=4.0), 2.0, 32, 2000, ALPHA / 2),  # realized 1.3 x nominal
], ids=["jax-T0.5", "numpy-T2"])
def test_psgld_frozen_preconditioner_lyapunov(backend, noise, temperature, num_chains, num_steps, alpha):
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
    law_check(estimates, entries(stationary), {
        "unpreconditioned SGLD solution": entries(stationary_covariance(target, PSGLD_STEP, temperature)),
        "tempered target covariance": entries(temperature * target.covariance),
    }, alpha=alpha, **STUDENT, name="pSGLD, frozen preconditioner: Lyapunov law").assert_passed()


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


ISOTROPIC_4 = dict(noise="isotropic", noise_variance=4.0)
DECAY = {"kind": "polynomial_decay", "offset": 1.0, "exponent": 0.55}
CYCLES = {"kind": "cyclical", "cycle_length": 100}
CYCLES_50 = {"kind": "cyclical", "cycle_length": 50, "final_fraction": 0.02}
SCHEDULE_CASES = {  # sampler, params, the schedule's formula, exploration steps per cycle, noise, S_0 = s0 I, steps
    "sgld-decay": ("sgld", dict(step_size=0.2, schedule=DECAY), polynomial_decay, None, ISOTROPIC_4, 9.0, 300),
    "csgld-cyclical": ("csgld", dict(step_size=0.5, temperature=0.5, schedule=CYCLES),
                       functools.partial(cyclical, cycle_length=100), None, dict(noise="none"), 1.0, 400),
    # beta K = 15.125: steps 0..15 of each 50-step cycle explore (no float boundary case)
    "csgld-exploration": ("csgld", dict(step_size=0.05, exploration_fraction=0.3025, schedule=CYCLES_50),
                          functools.partial(cyclical, cycle_length=50, final_fraction=0.02), (50, 16),
                          ISOTROPIC_4, 1.0, 400),
    "csgld-exploration-short": ("csgld", dict(step_size=0.5, exploration_fraction=0.3025, schedule=CYCLES_50),
                                functools.partial(cyclical, cycle_length=50, final_fraction=0.02), (50, 16),
                                ISOTROPIC_4, 1.0, 400),
}
ALL_WRONG = ("schedule ignored (constant step)", "halved step", "noise on in the exploration stage",
             "exploration positions recorded")


@pytest.mark.parametrize("case,backend,num_chains,wrong_names,alpha", [
    ("sgld-decay", "jax", 8192, ALL_WRONG[:2], ALPHA),
    ("csgld-cyclical", "jax", 1024, ALL_WRONG[:2], ALPHA),
    ("csgld-exploration", "jax", 2048, ALL_WRONG, ALPHA),
    # 64 chains: only a gross error is detectable, and skewness doubles the realized rate at nominal ALPHA
    ("csgld-exploration-short", "numpy", 64, ALL_WRONG[:1], ALPHA / 4),
], ids=["sgld-decay-jax", "csgld-cyclical-jax", "csgld-exploration-jax", "csgld-exploration-numpy"])
def test_time_varying_schedule_follows_exact_recursion(case, backend, num_chains, wrong_names, alpha):
    name, params, schedule, exploration, noise, s0_scale, num_steps = SCHEDULE_CASES[case]
    temperature = params.get("temperature", 1.0)
    target = targets.get("icg", **TARGET, **noise)
    s0 = s0_scale * np.eye(target.dim)
    start = np.random.default_rng(14).multivariate_normal(np.zeros(target.dim), s0, size=num_chains)
    result = running.run(name, target, params=params, num_chains=num_chains, num_steps=num_steps, seed=14,
                         backend=backend, initial_position=start)
    assert result.metrics["num_diverged_chains"] == 0
    t = np.arange(num_steps)
    steps = schedule(params["step_size"], t)
    sampling = np.ones(num_steps, bool) if exploration is None else np.mod(t, exploration[0]) >= exploration[1]
    np.testing.assert_array_equal(result.moments.count, np.full(num_chains, sampling.sum()))
    law = functools.partial(averaged_second_moment, target, s0, temperature=temperature)
    everywhere = np.ones(num_steps, bool)
    wrong = {"schedule ignored (constant step)": lambda: law(np.full(num_steps, params["step_size"]), sampling,
                                                             sampling),
             "halved step": lambda: law(steps / 2, sampling, sampling),
             "noise on in the exploration stage": lambda: law(steps, everywhere, sampling),
             "exploration positions recorded": lambda: law(steps, sampling, everywhere)}
    law_check(result.moments.second_moment, law(steps, sampling, sampling), {k: wrong[k]() for k in wrong_names},
              alpha=alpha, **STUDENT, name=f"{case}: exact recursion").assert_passed()


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


@pytest.mark.parametrize("tilts", [[0.5, -0.3, 0.7, -0.2], [3.0, -2.0, 0.4, -0.6]], ids=["unclipped", "clipped"])
def test_sglrw_one_step_moments(tilts):
    sampler, h, temp = samplers.get("sglrw"), SGLRW_STEP, SGLRW_TEMPERATURE
    target = targets.get("icg", **TARGET)
    tilts = np.array(tilts)
    x = -target.covariance @ (tilts / np.sqrt(h / (2 * temp)))  # the position where the tilts are these
    np.testing.assert_allclose(np.sqrt(h / (2 * temp)) * target.grad_logdensity(x), tilts, rtol=1e-12)
    params = sampler.Params(step_size=h, temperature=temp)
    draws = numpy_draws(np.random.default_rng(15), sampler.draw_spec(target.dim, params), (NUM_DRAWS,))
    steps = both_implementations(sampler, params, x, target.grad_logdensity, draws)
    lattice = np.sqrt(2 * h * temp)
    # Second moment: exactly 2hT in every draw (a lattice move), not only on average.
    np.testing.assert_allclose(steps**2, 2 * h * temp, rtol=1e-12)  # rounding of (x + S) - x
    moves = np.sign(steps)
    clipped = np.abs(tilts) >= 1
    # Clipped coordinates: E[S_i] = sqrt(2hT) sign(g_i) with probability 1.
    assert np.all(moves[:, clipped] == np.sign(tilts[clipped]))
    free = np.flatnonzero(~clipped)
    pairs = [(i, j) for k, i in enumerate(free) for j in free[k + 1:]]

    def pvalues(moves, mean_tilts):
        """Exact binomial tests: #(s_i = +1) ~ Bin(K, (1 + t_i)/2), #(s_i s_j = +1) ~ Bin(K, (1 + t_i t_j)/2)."""
        singles = binomial_p_values((moves[:, free] > 0).sum(0), NUM_DRAWS, (1 + mean_tilts[free]) / 2)
        products = [(moves[:, i] * moves[:, j] > 0).sum() for i, j in pairs]
        crosses = binomial_p_values(products, NUM_DRAWS, [(1 + mean_tilts[i] * mean_tilts[j]) / 2 for i, j in pairs])
        return np.concatenate([singles, crosses])

    num_tests = len(free) + len(pairs)
    p_value_check(pvalues(moves, tilts), alpha=ALPHA, name="SGLRW one-step binomial tests").assert_passed()
    # Clipped coordinates: the mean increment is exactly sqrt(2hT) sign(g_i).
    np.testing.assert_allclose(steps.mean(0)[clipped], lattice * np.sign(tilts[clipped]), rtol=1e-12)
    # Power. The deviation detected with probability 1 - ALPHA in the tilt of one coordinate is
    # about 2 (z_{ALPHA/2m} + z_{1-ALPHA}) sqrt(p(1-p)/K) <= 0.025; the wrong answers move tilts by >= 0.05.
    z = z_critical(ALPHA, num_tests) + z_critical(ALPHA, two_sided=False)
    sure = 2 * z * np.sqrt(0.25 / NUM_DRAWS)
    wrong = {"halved drift h g / 2": tilts / 2, "temperature left out of the tilt": tilts * np.sqrt(temp)}
    for name, wrong_tilts in wrong.items():
        wrong_tilts = np.where(clipped, tilts, wrong_tilts)
        assert np.max(np.abs(wrong_tilts - tilts)[free]) > sure, name
        p_value_check(pvalues(moves, wrong_tilts), alpha=ALPHA, name=f"against '{name}'").assert_failed()
    shared = {"uniform": np.repeat(draws["uniform"][:, :1], target.dim, axis=1)}  # one uniform for all coordinates
    shared_moves = np.sign(increments(sampler, params, x, target.grad_logdensity, shared, "reference"))
    if len(pairs):
        p_value_check(pvalues(shared_moves, tilts), alpha=ALPHA, name="correlated moves").assert_failed()


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
        np.testing.assert_allclose(sgld_norm - sglrw_norm, diagonal, rtol=1e-9, atol=1e-12 * sgld_norm.max())
        assert sglrw_norm.mean() < sgld_norm.mean()

    # (ii) Statistical: M estimated from sampler increments matches the lemma (both samplers).
    cases = []
    for x in positions[:2]:
        for _ in range(2):
            draw = numpy_draws(rng, target.draw_spec)
            cases.append((x, functools.partial(target.stochastic_grad, draw=draw), target.stochastic_grad(x, draw)))
    temp = 1.0
    num_tests = 2 * len(cases) * target.dim * (target.dim + 1) // 2
    for name in ("sgld", "sglrw"):
        sampler = samplers.get(name)
        for x, minibatch_oracle, minibatch_grad in cases:
            g = target.grad_logdensity(x)
            largest = max(np.abs(minibatch_grad).max(), np.abs(g).max())
            h = 2 * temp * (0.5 / largest) ** 2  # largest tilt sqrt(h/2T)|g_i| = 0.5: the clip is inactive
            params = sampler.Params(step_size=h, temperature=temp)
            draws = numpy_draws(rng, sampler.draw_spec(target.dim, params), (NUM_DRAWS,))
            mb = increments(sampler, params, x, minibatch_oracle, draws, "reference")
            fb = increments(sampler, params, x, target.grad_logdensity, draws, "reference")
            mean, se = increment_second_moment_difference(mb, fb, h)
            m_sgld, m_sglrw = lemma_matrices(g, minibatch_grad - g)
            if name == "sglrw":  # the diagonal is deterministic: mb_i^2 = fb_i^2 = 2hT
                np.testing.assert_allclose(np.diag(mean), 0, atol=1e-9 * np.abs(mean).max())
                expected, entries = m_sglrw, np.triu_indices(target.dim, 1)
            else:
                expected, entries = m_sgld, np.triu_indices(target.dim)
            wrong = {"M = 0 (minibatch ignored)": 0 * expected, "M / 4 (halved drift)": expected / 4}
            # z-tests of these entries, Bonferroni over all num_tests entries of both samplers and all cases
            moment_law_check(mean[entries], se[entries], expected[entries], {k: v[entries] for k, v in wrong.items()},
                             alpha=bonferroni(ALPHA, num_tests) * entries[0].size, sure=ALPHA,
                             name=f"{name}: Lemma 4.3's M").assert_passed()


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
                                        num_chains=512, num_steps=4000, seed=17, thin=4)
    check = law_check(estimates, entries(fixed), {"SGLD Lyapunov solution": entries(sgld)}, alpha=ALPHA, **STUDENT,
                      name="SGLRW: unclipped fixed point")
    se = check.standard_error
    assert relative_drift_change * np.abs(entries(fixed)).max() < 1e-2 * se.min()  # clipping cannot matter
    check.assert_passed()


# ---------------------------------------------------------------------------------------------
# 6. Clipped-SGLD


def test_clipped_sgld_one_step_law():
    sampler, h, temp = samplers.get("clipped_sgld"), 0.02, 2.0
    target = targets.get("icg", **TARGET)
    radius = np.sqrt(2 * h * temp)
    ratios = np.array([50.0, -50.0, 0.5, -0.3])  # h g_i / R: the drift is clipped in the first two
    x = -target.covariance @ (ratios * radius / h)
    params = sampler.Params(step_size=h, temperature=temp)
    draws = numpy_draws(np.random.default_rng(18), sampler.draw_spec(target.dim, params), (NUM_DRAWS,))
    steps = both_implementations(sampler, params, x, target.grad_logdensity, draws)
    clip = np.clip(ratios, -1, 1) * radius
    variance = radius**2  # 2hT

    def law(steps, mean):
        """z-tests of the means (known variance 2hT) and chi-square tests of the variances."""
        return normal_draws_check(steps, mean, variance, alpha=ALPHA, name="Clipped-SGLD one-step law")

    check = law(steps, clip).assert_passed()
    # Power. Variance: chi-square detects with probability 1 - ALPHA a relative change of about
    # (z + z_{1-ALPHA}) sqrt(2/K) = 0.031; full-increment clipping changes it by > 30 % here.
    assert (check.threshold + z_critical(ALPHA, two_sided=False)) * np.sqrt(2 / NUM_DRAWS) < 0.3
    full_clip = np.clip(h * target.grad_logdensity(x) + radius * draws["noise"], -radius, radius)
    assert np.all(law(full_clip, clip).details["variance_rejected"]), "full-increment clipping not rejected"
    unclipped_drift = h * target.grad_logdensity(x)
    assert np.any(law(steps, unclipped_drift).details["mean_rejected"]), "unclipped drift not rejected"


@pytest.mark.parametrize("backend,num_chains,num_steps", [("jax", 64, 1000), ("numpy", 4, 300)])
def test_clipped_sgld_unclipped_path_is_sgld_path(backend, num_chains, num_steps):
    target = targets.get("icg", **TARGET)
    params = dict(step_size=0.01, temperature=1.0, schedule=DECAY)
    # Chains 0..C-1 start at the target law: |g_i| has sd sqrt(P_ii) <= 1.6 and the clip needs
    # |g_i| > sqrt(2T/h_t) >= 14, a 9-sd event. Chain C starts far out, where the clip is active.
    near = np.random.default_rng(19).multivariate_normal(np.zeros(target.dim), target.covariance, num_chains)
    far = 50.0 * np.array([[1.0, -2.0, 3.0, -4.0]])
    start = np.concatenate([near, far])
    common = dict(num_chains=num_chains + 1, num_steps=num_steps, seed=19, backend=backend, keep_samples=True,
                  initial_position=start)
    sgld = running.run("sgld", target, params=params, **common).samples
    clipped = running.run("clipped_sgld", target, params=params, **common).samples
    before = np.concatenate([start[:, None], sgld[:, :-1]], axis=1)[:num_chains]  # x_t of each step t
    h_t = polynomial_decay(params["step_size"], np.arange(num_steps))[:, None]
    assert np.all(np.abs(h_t * target.grad_logdensity(before)) < np.sqrt(2 * h_t)), "clip active: precondition"
    np.testing.assert_allclose(clipped[:num_chains], sgld[:num_chains], rtol=0, atol=1e-12)
    # Power: from far out the clip is active and the paths differ at the first step by exactly
    # h_0 g(x_0) - clip(h_0 g(x_0); R_0), with the same injected noise.
    drift = params["step_size"] * target.grad_logdensity(far[0])
    radius = np.sqrt(2 * params["step_size"])
    assert np.all(np.abs(drift) > 2 * radius)
    np.testing.assert_allclose(sgld[-1, 0] - clipped[-1, 0], drift - np.clip(drift, -radius, radius), rtol=1e-10)
