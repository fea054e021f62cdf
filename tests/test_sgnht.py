r"""SGNHT and SGNHT-CV (``sgbench.samplers.sgnht``, ``sgbench.samplers.sgnht_cv``): the thermostat's kinetic energy,
the stationary position moments, exact noise cancellation by the control variate, input checks.

Conventions as in ``tests/test_langevin_exact_laws.py``: every statistical check is a family
with false-failure rate at most ``ALPHA`` = 1e-3 (Bonferroni over its entries), a Student-t test
over independent chains (each chain gives one time average; ``C - 1`` degrees of freedom;
``sgbench.reference.checks.law_check`` without Johnson's correction), and checks its own power against
named wrong answers: each must be rejected with probability at least ``1 - ALPHA`` by design (its
largest standardized deviation beyond the allowance exceeds the noncentral-t quantile at that
probability, about ``critical + z_{1-ALPHA}``) and by the data. Deterministic checks have rate 0.

Target: the ICG with ``dim`` = 10 and condition number 100 (covariance eigenvalues 0.1 to 10),
not the default 1e4: with SGNHT's small per-step friction the slowest mode of the default
relaxes in :math:`c/(h\lambda_{min})` steps, 10^3 at h = 1e-3, and the moment test would need
about 10 times more chain-steps for the same standard errors. Chains start from the
frozen-thermostat stationary law below (positions, momenta, thermostat), so a short burn-in
suffices. Four configurations, both forms, with and without gradient noise, temperature never 1
(so "temperature left out" is a wrong answer): Chen form h = 1e-3, a = 0.01 (MAMBA), T = 0.5,
no noise, and T = 2 with isotropic noise V = 100 I; practical form :math:`\epsilon` = 0.03,
a = 0.5 (per-step diffusion 0.015), T = 0.5 without and T = 2 with the same noise.

The frozen-thermostat law. With the thermostat frozen at a per-step friction :math:`c` (Chen
units: the practical chain is the Chen chain with :math:`h = \epsilon^2`, :math:`v = -\epsilon r`,
:math:`\alpha = \xi\epsilon`, :math:`a_{chen} = a\epsilon`), one step on a Gaussian target
:math:`\mathcal N(0, P^{-1})` with additive noise :math:`\mathcal N(0, V)` is linear:
:math:`v' = (1 - c)v - hPx + n`, :math:`x' = x + v'`, :math:`n \sim \mathcal N(0, 2ahT I + h^2V)`,
whose stationary covariance solves a discrete Lyapunov equation. The thermostat's fixed point
:math:`c^*` is the friction at which :math:`\mathrm{tr}\,S_{vv}/D = hT`. In one dimension
:math:`S_{xx} = S_{vv}(2 - c)/(2h\lambda)`, so with :math:`S_{vv} = hT` the position variance is
:math:`(T/\lambda)(1 - c^*/2)`: the first-order bias of SGNHT, :math:`-c^*/2` relative, where
:math:`c^* \approx a + hV/(2T)` (0.5 % to 2 % here), plus :math:`O(h\lambda)` from the modes'
unequal kinetic energies.

Tests (statistic; false-failure rate; power):

- ``test_thermostat_drives_kinetic_energy_to_target`` (default part; JAX, 128 chains, 2000
  burn-in + 3000 steps per configuration): per-chain time average of :math:`|m|^2/D` (the momentum
  after each step) against the target :math:`hT` (Chen) or :math:`T` (practical). The thermostat
  update telescopes: the average over a window of W steps is exactly the target plus
  (thermostat change over the window) / (W times its rate), so at stationarity its expectation
  is the target exactly, with or without gradient noise and at any step size (no allowance), and
  its spread is the thermostat's fluctuation over W: the test is sharp (relative standard errors
  3e-4 to 7e-4). Rate ALPHA (realized, by resampling 10^5 families of 128 chains from 8192
  chains of the Chen noisy case: 1.1 ALPHA +- 0.1; per-chain skewness -0.02). Power: rejects the
  target without the temperature (:math:`h`, or 1), half the target, and, with noise, the
  kinetic energy of the same chain with the thermostat frozen at its initial value a (gradient
  noise not absorbed: 3.5 (Chen) and 2.5 (practical) times the target).
- ``test_stationary_second_moments_within_bias_bound`` (``statistical``; JAX, 256 chains, 2000
  burn-in + 10000 steps per configuration): per-chain time averages of :math:`x_i^2` (10
  entries) against the truth :math:`T\Sigma_{ii}`, accepted within ``critical * se + B_i``, the
  bias bound :math:`B_i = |S^*_{ii} - T\Sigma_{ii}| + (hT/(Dc^*))\,T\Sigma_{ii}`: the derived
  first-order bias (the frozen-thermostat law :math:`S^*` at :math:`c^*`; -0.5 % to -2 % here)
  plus a bound on the correction from the thermostat's fluctuations, which the frozen law leaves
  out: their variance per step is :math:`hT/D` (the SDE's stationary thermostat law
  :math:`\mathcal N(A, T/D)` in Ding et al.'s units), and the bound is that variance over the
  thermostat's mean (0.3 % to 0.6 % here). Measured at two step sizes, h and 4h (practical:
  :math:`\epsilon` and :math:`2\epsilon`), for every configuration (1024 chains x 10^4 steps, 8
  runs), the bias beyond the derived one, averaged over the 10 entries, was +0.76 % +- 0.17 % at
  4h in the Chen noise-free case, where the bound is 2.0 % (0.4 times the bound), and consistent
  with 0 in the other seven runs (at most 0.45 % +- 0.40 %; bounds 0.3 % to 0.7 %); no entry
  exceeded its bound by more than 1.3 standard errors. (On the default ICG, condition number
  1e4, the slowest mode showed about -2.5 % +- 0.8 % beyond the derived bias: one more reason for
  the better-conditioned target.) Nominal level ALPHA/2: the bare t-test's realized rate at
  nominal ALPHA was 1.16 ALPHA +- 0.11 (Chen noisy, per-chain skewness 0.4-0.8) and 0.97 ALPHA
  (practical), and 0.63 ALPHA and 0.62 ALPHA at ALPHA/2 (resampling 10^5 families of 256 chains
  from 8192), so the rate is at most ALPHA while the bias lies within :math:`B`. Power: rejects
  the truth at the wrong temperature (:math:`\Sigma` for :math:`T\Sigma`) and, with noise, the
  stationary law with the thermostat frozen at a (gradient noise not absorbed: 3.5 and 2.5
  times the truth); detects relative deviations from the truth of 4.4 % to 11.6 % (allowance
  included) with probability 0.9.
- ``test_sgnht_cv_cancels_additive_noise``: deterministic (1e-10): with additive noise the
  control-variate gradient is the exact gradient for any centre (here off the mode), so
  SGNHT-CV on the noisy target follows SGNHT on the noise-free one, draw for draw, in both
  implementations and both forms. Power: SGNHT on the noisy target and SGNHT-CV with a wrong
  centre gradient both leave that path by more than 1e-3.
- ``test_one_step_follows_the_papers``, ``test_gradient_evaluations_per_step``,
  ``test_bad_input_names_the_parameter``, ``test_sgnht_cv_centre_of_wrong_dimension``:
  deterministic.

Measured runtimes (2 cores shared with other jobs, load about 4): the default part 13-20 s (30
tests; the kinetic-energy test 2-3 s per configuration); the ``statistical`` test 20-25 s (about
6 s per configuration). The calibration runs quoted above took 20-50 s each.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

from sgbench import samplers, targets
from sgbench.base.draws import jax_draws, numpy_draws
from sgbench.reference.checks import law_check
from sgbench.samplers.sgnht import State

ALPHA = 1e-3
TARGET = dict(dim=10, condition_number=100.0)
NOISE_VARIANCE = 100.0
BLOCK = 500  # steps per generator call in run_chains
CONFIGS = {
    "chen": (dict(step_size=1e-3, temperature=0.5), dict(noise="none")),
    "chen-noisy": (dict(step_size=1e-3, temperature=2.0), dict(noise="isotropic", noise_variance=NOISE_VARIANCE)),
    "practical": (dict(step_size=0.03, form="practical", diffusion=0.5, temperature=0.5), dict(noise="none")),
    "practical-noisy": (dict(step_size=0.03, form="practical", diffusion=0.5, temperature=2.0),
                        dict(noise="isotropic", noise_variance=NOISE_VARIANCE)),
}


# ---------------------------------------------------------------------------------------------
# The frozen-thermostat law (Chen units)


def chen_units(params):
    """(h, a) of the Chen-form chain that ``params`` is (practical: h = eps^2, a = diffusion * eps)."""
    if params.form == "chen":
        return params.step_size, params.diffusion
    return params.step_size**2, params.diffusion * params.step_size


def frozen_law(target, params, friction):
    """Stationary covariance of (x, v) with the thermostat frozen at per-step ``friction``."""
    (h, a), d, temp = chen_units(params), target.dim, params.temperature
    eye, precision = np.eye(d), target.precision
    transition = np.block([[eye - h * precision, (1 - friction) * eye], [-h * precision, (1 - friction) * eye]])
    noise = 2 * a * h * temp * eye + h**2 * target.noise.covariance(np.zeros(d))
    both = np.vstack([eye, eye])  # the momentum noise enters x' = x + v' too
    return scipy.linalg.solve_discrete_lyapunov(transition, both @ noise @ both.T)


def thermostat_fixed_point(target, params):
    """c* (tr S_vv / D = h T) and the frozen law there."""
    d = target.dim
    h, _ = chen_units(params)
    excess = lambda c: np.trace(frozen_law(target, params, c)[d:, d:]) / d - h * params.temperature
    c = scipy.optimize.brentq(excess, 1e-9, 1.0, xtol=1e-14)
    return c, frozen_law(target, params, c)


def stationary_start(target, params, num_chains, seed):
    """States drawn from the frozen-thermostat law at c*, in the sampler's own units."""
    d = target.dim
    c, law = thermostat_fixed_point(target, params)
    z = np.random.default_rng(seed).multivariate_normal(np.zeros(2 * d), law, size=num_chains)
    x, v = z[:, :d], z[:, d:]
    steps = np.zeros(num_chains, dtype=np.int64)
    if params.form == "chen":
        return State(x, v, np.full(num_chains, c), steps)
    eps = params.step_size
    return State(x, -v / eps, np.full(num_chains, c / eps), steps)


def run_chains(name, target, params, start: State, num_steps, num_burnin, seed):
    """JAX, float64: per-chain time averages after burn-in of x_i^2 (chains, dim) and of the
    kinetic energy per dimension |m|^2 / D of the momentum after each step (chains,)."""
    sampler, d = samplers.get(name), target.dim
    spec = {"sampler": sampler.draw_spec(d, params), "gradient": target.draw_spec}
    assert num_steps % BLOCK == 0 and num_burnin % BLOCK == 0

    def one_step(state, draws):
        grad_fn = functools.partial(target.stochastic_grad, draw=draws["gradient"])
        state, _ = sampler.optimized_step(state, grad_fn, draws["sampler"], params)
        return state, (state.position**2, jnp.sum(state.momentum**2) / d)

    def chain(key, state):
        def block(carry, b):
            state, sums = carry
            draws = jax_draws(jax.random.fold_in(key, b), spec, (BLOCK,), "float64")
            state, (x2, kinetic) = jax.lax.scan(one_step, state, draws)
            keep = b >= num_burnin // BLOCK
            return (state, (sums[0] + keep * x2.sum(0), sums[1] + keep * kinetic.sum())), None

        (state, sums), _ = jax.lax.scan(block, (state, (jnp.zeros(d), jnp.zeros(()))),
                                        jnp.arange((num_burnin + num_steps) // BLOCK))
        return sums[0] / num_steps, sums[1] / num_steps, jnp.all(jnp.isfinite(state.position))

    keys = jax.random.split(jax.random.key(seed), len(start.step))
    x2, kinetic, finite = jax.jit(jax.vmap(chain))(keys, jax.tree.map(jnp.asarray, start))
    assert np.all(finite)
    return np.asarray(x2), np.asarray(kinetic)


def _config(key):
    params, noise = CONFIGS[key]
    target = targets.get("icg", **TARGET, **noise)
    return target, samplers.get("sgnht").params(**params)


# ---------------------------------------------------------------------------------------------
# Statistical


@pytest.mark.parametrize("key", list(CONFIGS))
def test_thermostat_drives_kinetic_energy_to_target(key):
    target, params = _config(key)
    start = stationary_start(target, params, 128, seed=1)
    _, kinetic = run_chains("sgnht", target, params, start, num_steps=3000, num_burnin=2000, seed=2)
    h, a = chen_units(params)
    temp = params.temperature
    scale = 1.0 if params.form == "chen" else h  # the practical momentum r is -v / eps: |r|^2 = |v|^2 / h
    target_energy = h * temp / scale
    wrong = {"temperature left out": h / scale, "half the target": target_energy / 2}
    if key.endswith("noisy"):
        d = target.dim
        frozen = frozen_law(target, params, a)  # the thermostat frozen at its initial value, a per step
        wrong["thermostat frozen at a"] = np.trace(frozen[d:, d:]) / d / scale
    law_check(kinetic[:, None], target_energy, wrong, alpha=ALPHA, sure=ALPHA, skewness_correction=False,
              name=f"{key}: kinetic energy per dimension").assert_passed()


@pytest.mark.statistical
@pytest.mark.parametrize("key", list(CONFIGS))
def test_stationary_second_moments_within_bias_bound(key):
    target, params = _config(key)
    d, temp = target.dim, params.temperature
    start = stationary_start(target, params, 256, seed=3)
    x2, _ = run_chains("sgnht", target, params, start, num_steps=10_000, num_burnin=2000, seed=4)
    truth = temp * np.diag(target.covariance)
    c, law = thermostat_fixed_point(target, params)
    h, a = chen_units(params)
    derived_bias = np.diag(law[:d, :d]) - truth
    allowance = np.abs(derived_bias) + h * temp / (d * c) * truth
    wrong = {"temperature left out": np.diag(target.covariance)}
    if key.endswith("noisy"):
        wrong["thermostat frozen at a"] = np.diag(frozen_law(target, params, a)[:d, :d])
    # nominal ALPHA / 2: the realized rate of the bare t-test at ALPHA is up to 1.2 ALPHA
    law_check(x2, truth, wrong, alpha=ALPHA / 2, sure=ALPHA, allowance=allowance, skewness_correction=False,
              name=f"{key}: stationary second moments").assert_passed()


# ---------------------------------------------------------------------------------------------
# Deterministic


def _paths(name, target, params, position, draws, gradient_draws, grad_fn=None):
    """(reference, optimized) paths of (position, momentum, thermostat), one row per step;
    ``grad_fn(target, draw)`` makes the oracle (default: the target's stochastic gradient)."""
    sampler = samplers.get(name)
    oracle = grad_fn or (lambda t, draw: functools.partial(t.stochastic_grad, draw=draw))
    num_steps = len(draws["noise"])
    state, reference = sampler.init(position.copy(), params), []
    for t in range(num_steps):
        grad_draw = {k: v[t] for k, v in gradient_draws.items()}
        state, _ = sampler.reference_step(state, oracle(target, grad_draw), {"noise": draws["noise"][t]}, params)
        reference.append(np.concatenate([state.position, state.momentum, [state.thermostat]]))

    def one_step(state, inputs):
        step_draws, grad_draw = inputs
        state, _ = sampler.optimized_step(state, oracle(target, grad_draw), step_draws, params)
        return state, jnp.concatenate([state.position, state.momentum, state.thermostat[None]])

    state = jax.tree.map(jnp.asarray, sampler.init(jnp.asarray(position), params))
    optimized = jax.jit(lambda s, i: jax.lax.scan(one_step, s, i)[1])(state, (draws, gradient_draws))
    return np.array(reference), np.asarray(optimized)


@pytest.mark.parametrize("key", ["chen-noisy", "practical-noisy"])
def test_sgnht_cv_cancels_additive_noise(key):
    noisy, params = _config(key)
    clean = targets.get("icg", **TARGET)
    centre = np.linspace(-1.0, 1.0, noisy.dim)  # off the mode: the cancellation holds for any centre
    cv_params = samplers.get("sgnht_cv").params(**CONFIGS[key][0], centre=centre,
                                                 centre_grad=clean.grad_logdensity(centre))
    rng = np.random.default_rng(5)
    num_steps = 300
    draws = numpy_draws(rng, samplers.get("sgnht").draw_spec(noisy.dim, params), (num_steps,))
    gradient_draws = numpy_draws(rng, noisy.draw_spec, (num_steps,))
    position = rng.standard_normal(noisy.dim)
    exact = lambda t, draw: clean.grad_logdensity

    expected = _paths("sgnht", clean, params, position, draws, gradient_draws, exact)
    with_cv = _paths("sgnht_cv", noisy, cv_params, position, draws, gradient_draws)
    without_cv = _paths("sgnht", noisy, params, position, draws, gradient_draws)
    wrong_grad = samplers.get("sgnht_cv").params(**CONFIGS[key][0], centre=centre, centre_grad=np.zeros(noisy.dim))
    wrong_cv = _paths("sgnht_cv", noisy, wrong_grad, position, draws, gradient_draws)
    assert np.all(np.isfinite(expected[0]))
    for implementation in (0, 1):
        assert np.max(np.abs(with_cv[implementation] - expected[implementation])) <= 1e-10
        assert np.max(np.abs(with_cv[implementation] - expected[1 - implementation])) <= 1e-10
        assert np.max(np.abs(without_cv[implementation] - expected[implementation])) > 1e-3
        assert np.max(np.abs(wrong_cv[implementation] - expected[implementation])) > 1e-3


def test_one_step_follows_the_papers():
    """One step from a state with momentum and thermostat, written out from MAMBA eq. (7) / Ding
    et al. Algorithm 1 (thermostat reads the new momentum) and PX Algorithm 4 (the old one, r is
    minus the momentum, the noise uses the diffusion, not the current thermostat); the practical
    chain is the Chen chain under h = eps^2, v = -eps r, alpha = xi eps, a_chen = a eps."""
    target = targets.get("icg", **TARGET)
    rng = np.random.default_rng(6)
    x, m, z = rng.standard_normal((3, target.dim))
    g = target.grad_logdensity(x)
    sgnht = samplers.get("sgnht")
    h, a, temp, alpha = 4e-3, 0.02, 0.7, 0.3
    chen = sgnht.params(step_size=h, diffusion=a, temperature=temp)
    v_new = m + h * g - alpha * m + np.sqrt(2 * a * h * temp) * z
    expected_chen = (x + v_new, v_new, alpha + v_new @ v_new / target.dim - h * temp)
    eps = np.sqrt(h)
    practical = sgnht.params(step_size=eps, diffusion=a / eps, temperature=temp, form="practical")
    r, xi = -m / eps, alpha / eps
    r_new = (1 - xi * eps) * r - eps * g + np.sqrt(2 * (a / eps) * eps * temp) * (-z)
    expected_practical = (x - eps * r_new, r_new, xi + eps * (r @ r / target.dim - temp))
    for params, state, expected in [(chen, State(x, m, alpha, 0), expected_chen),
                                    (practical, State(x, r, xi, 0), expected_practical)]:
        noise = {"noise": z if params.form == "chen" else -z}
        for step in (sgnht.reference_step, sgnht.optimized_step):
            new, info = step(jax.tree.map(jnp.asarray, state) if step is sgnht.optimized_step else state,
                             target.grad_logdensity, noise, params)
            for got, want in zip(new[:3], expected):
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14)
            assert int(new.step) == 1
    # the two forms: same position, momentum v = -eps r; thermostats differ only by the momentum read
    np.testing.assert_allclose(expected_practical[0], expected_chen[0], rtol=1e-12)
    np.testing.assert_allclose(-eps * expected_practical[1], expected_chen[1], rtol=1e-12)
    read_difference = (m @ m - v_new @ v_new) / target.dim
    np.testing.assert_allclose(eps * expected_practical[2] - expected_chen[2], read_difference, rtol=1e-10)


@pytest.mark.parametrize("name,evaluations", [("sgnht", 1), ("sgnht_cv", 2)])
def test_gradient_evaluations_per_step(name, evaluations):
    target = targets.get("icg", **TARGET)
    sampler = samplers.get(name)
    extra = dict(centre=np.zeros(target.dim), centre_grad=np.zeros(target.dim)) if name == "sgnht_cv" else {}
    params = sampler.params(step_size=1e-3, **extra)
    calls = []

    def grad_fn(x):
        calls.append(1)
        return target.grad_logdensity(x)

    state = sampler.init(np.ones(target.dim), params)
    assert float(state.thermostat) == params.diffusion == 0.01  # MAMBA's a; Ding et al.: xi_0 = A
    state, info = sampler.reference_step(state, grad_fn, {"noise": np.zeros(target.dim)}, params)
    assert len(calls) == info.num_grad_evals == evaluations


@pytest.mark.parametrize("params,match", [
    (dict(step_size=0.0), "step_size"),
    (dict(step_size=-1e-3), "step_size"),
    (dict(step_size=1e-3, diffusion=0.0), "diffusion"),
    (dict(step_size=1e-3, diffusion=-0.01), "diffusion"),
    (dict(step_size=1e-3, diffusion=0.6), "diffusion"),
    (dict(step_size=1e-2, form="practical"), r"diffusion \* step_size"),  # default 100 * 1e-2 >= 1/2
    (dict(step_size=1e-3, initial_thermostat=-0.1), "initial_thermostat"),
    (dict(step_size=1e-3, initial_thermostat=2.0), "initial_thermostat"),
    (dict(step_size=1e-3, temperature=0.0), "temperature"),
    (dict(step_size=1e-3, form="leapfrog"), "form"),
], ids=str)
@pytest.mark.parametrize("name", ["sgnht", "sgnht_cv"])
def test_bad_input_names_the_parameter(name, params, match):
    extra = dict(centre=np.zeros(10), centre_grad=np.zeros(10)) if name == "sgnht_cv" else {}
    with pytest.raises(ValueError, match=match):
        samplers.get(name).params(**params, **extra)


def test_sgnht_cv_centre_of_wrong_dimension():
    target = targets.get("icg", **TARGET)
    sampler = samplers.get("sgnht_cv")
    with pytest.raises(ValueError, match="centre"):
        sampler.params_for(target, step_size=1e-3, centre=np.zeros(3))
    params = sampler.params(step_size=1e-3, centre=np.zeros(3), centre_grad=np.zeros(3))
    with pytest.raises(ValueError, match="centre has dimension 3"):
        sampler.init(np.zeros(target.dim), params)
    with pytest.raises(ValueError, match="centre_grad"):
        sampler.params(step_size=1e-3, centre=np.zeros(3), centre_grad=np.zeros(4))
    with pytest.raises(ValueError, match="centre is required"):
        sampler.params(step_size=1e-3)
