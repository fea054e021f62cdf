r"""Tier 1: exact laws of the SGHMC family (SGHMC, SGHMC-CV; ``sgbench.samplers._hamiltonian``).

On a Gaussian target :math:`\mathcal N(0, P^{-1})` with additive Gaussian gradient noise
:math:`e \sim \mathcal N(0, VI)`, every SGHMC step is a linear Gaussian recursion
:math:`z_{t+1} = A z_t + B w_t` in :math:`z = (x, m)`, m the momentum (v in the Chen form, r in the
practical form), :math:`w = (n, e)` with n the injected noise :math:`\mathcal N(0, cI)`. ``A``, ``B``
and ``c`` are derived in ``linear_recursion`` from the papers' equations for each form x integrator
(the gradient noise enters through the kick, beta-hat lowers c), not read from the implementation;
the stationary covariance of the full state solves :math:`S = ASA^\top + BWB^\top`
(``scipy.linalg.solve_discrete_lyapunov``). It contains the method's own discretisation bias, so
the tests separate implementation bugs from that bias: the step sizes are chosen where the bias is
large (the SDE's law is rejected by a wide margin in every case).

Conventions: those of ``tests/test_langevin_exact_laws.py`` (its ``TARGET`` and ``law_check``
options are imported): every statistical test is a family of per-entry Student-t tests over
independent chains' time averages, Bonferroni over entries, family-wise false-failure rate
``ALPHA`` = 1e-3 (nominal); power is checked in each test (``sgbench.reference.checks.law_check``): every
named wrong answer must be rejected with probability >= 1 - ALPHA by design, and by the data.
"Margin" below: a wrong answer's largest standardized deviation divided by that sure-rejection
threshold (critical value + z_{1-ALPHA}; > 1 needed), as measured in the runs here (``law_check``
requires the noncentral-t quantile at 1 - ALPHA instead, larger by 1 % with 256 chains and 5 % with
32: every margin below exceeds 1 either way). Deterministic checks have rate 0 (tolerances are
rounding). ``bench.run`` starts the momentum at 0, so the stationary runs use a driver written
here (``joint_second_moments``: ``lax.scan`` over steps, ``vmap`` over chains, draws from
``sgbench.base.draws.jax_draws`` for the sampler's and the target's draw specs, the optimized step,
float64) that starts the full state exactly at :math:`\mathcal N(0, S)`; the NumPy case uses
``bench.run(backend="numpy")`` and the exact transient from zero momentum instead.

Cases (``CASES``; V: the gradient-noise variance of the noisy runs, beta-hat = V in the corrected
ones): chen-euler h = 0.4, alpha = 0.6, T = 1, V = 2; practical-euler eps = 0.7, gamma = 1,
T = 0.5, V = 1; chen-splitting h = 1, alpha = 0.5, T = 0.5, V = 0.25; practical-splitting
eps = 0.9, gamma = 0.8, T = 1, V = 0.5 (V is small in the splitting cases because beta-hat = V
needs :math:`h^2\hat\beta \le hT(1 - e^{-2\alpha})`).

Tests (statistic; false-failure rate; power):

- ``test_one_step_map_is_the_derived_recursion`` (4 cases x SGHMC, SGHMC-CV; beta-hat = 0.1):
  from 16 random states on random draws, both implementations' next state equals
  :math:`Az + B(\sqrt c\,\xi, \sqrt V\zeta)` (SGHMC-CV with the exact gradient at an off-mode
  centre: V drops out) to 1e-12. Deterministic, rate 0; detects any coefficient error.
- ``test_sghmc_matches_discrete_lyapunov_solution`` (4 cases x {no noise, noise V, noise V with
  beta-hat = V}; 256 chains x 4000 steps): chains start at :math:`\mathcal N(0, S)`; t-test of the
  36 entries of the upper triangle of per-chain averages of :math:`zz^\top` against S. Rate ALPHA
  nominal; realized (resampling families of 256 from 16384 chains): chen-euler noisy 1.07 ALPHA
  (1.21 and 1.03 in 10^5 and 4 x 10^5 families), chen-splitting without noise 0.83 ALPHA
  (10^5); per-chain skewness <= 0.16. Power: standard errors 0.17-0.30 % of the largest entry of
  S, so each entry detects a deviation of about 1-1.7 % of it with probability 0.9; every wrong
  answer has margin >= 34: the SDE's law (Euler: position
  variances 9-58 % above T Sigma's, momentum variances 63-250 % above, cross covariances -0.33 to -0.61;
  splitting: only the cross covariance, -hT/2 or +eps T/2, see below), the other integrator's
  law (where it is stable), the temperature ignored (T = 0.5 cases), the noise ignored (the
  noisy law is 1 + hV/(2 alpha T) times the noise-free one for Euler), beta-hat ignored, and, for
  splitting with beta-hat = V, the noise-free law. With the Euler integrator beta-hat = V gives
  back the noise-free law exactly (asserted: h^2 V + h(2 alpha T - hV) = 2 alpha h T); with the
  splitting integrator it does not (the injected noise also moves the position by half a drift,
  the gradient noise does not): variances differ by -20 % to +250 %.
- ``test_sghmc_cv_cancels_additive_noise`` (chen-euler and practical-splitting, V = 16, centre
  (1, -2, 0.5, 3) with the exact gradient there, given explicitly: no MAP search): the law is
  noise-free SGHMC's. Same t-test and rate. Power: rejects the noisy-SGHMC law (margin 500 to
  3700) and the SDE's law (77 to 95).
- ``test_numpy_driver_follows_exact_recursion`` (``bench.run(backend="numpy")``, 32 chains x
  2000 steps, noise V; chen-euler by default, practical-splitting ``statistical``): positions start
  at the stationary position law, the momentum at 0 (the driver's ``init``); t-test of the
  streamed :math:`E[x_i^2]` against the mean of :math:`\mathrm{diag}\,S_t` over the steps, with
  :math:`S_{t+1} = AS_tA^\top + Q` from :math:`S_0 = \mathrm{diag}(S_{xx}, 0)`. Realized rate
  1.05 and 1.06 ALPHA (10^5 families of 32 resampled from 16384 chains of the same law, run on the
  JAX driver). Power: standard errors about 1 % of the largest entry; rejects the noise ignored
  (margin 6.4 to 6.5) and, for Euler, the target covariance (7.6).
- ``test_refresh_replaces_momentum_by_scaled_draw`` (4 cases, polynomial-decay schedule, noise,
  beta-hat, both implementations): at counters 0 and 2L the step equals a refresh-free step from
  momentum :math:`\sqrt{h_tT}\,\xi` (Chen) or :math:`\sqrt T\,\xi` (practical), :math:`h_t` from the
  schedule's formula written here, whatever the old momentum; at 2L + 1 it keeps the old momentum.
  Deterministic (1e-12).
- ``test_refresh_follows_cyclostationary_law`` (chen-euler L = 4, practical-splitting L = 5, no
  noise; 256 x 4000): the law before a refresh step solves :math:`S = \Phi S\Phi^\top + Q_L` with
  :math:`\Phi = A^LR` (R drops the momentum); chains start there at counter 0; t-test of the 36
  entries of the per-chain average of :math:`zz^\top` against the mean of the L phase laws.
  Rate ALPHA (same statistic and size as above). Power: rejects the refresh ignored (margin 12.5,
  27) and the SDE's law (65, 59). Not detectable here: a refresh at the wrong phase (the average
  over whole cycles does not see it); the deterministic test above does.
- ``test_chen_and_practical_forms_are_one_chain`` (Euler, splitting; 300 steps, noise, beta-hat,
  T = 0.7, both implementations): with :math:`h = \epsilon^2`, :math:`\alpha = \gamma\epsilon`,
  :math:`v = -\epsilon r` and the injected normal negated (r is minus the usual momentum, so the
  same draw enters with the opposite sign), the momenta agree step by step and the positions agree
  with a shift of one step for Euler (practical position after step k = Chen position after step
  k + 1: Chen drifts before its kick, the practical form after it; Chen's first step, from the zero
  momentum of ``init``, does not move) and at the same step for splitting. Deterministic (1e-12).
- ``test_splitting_position_law_is_exact_on_gaussians`` (both forms; steps up to
  :math:`h\lambda_{max} = 3.98`, frictions 0.05 to 4, T = 1 and 0.3; exact gradients): the position
  block of S is :math:`T\Sigma` (largest error 2e-12 relative), the momentum block is the SDE's
  (hT or T) I, and the cross covariance is :math:`-hT/2\,I` (Chen) or :math:`+\epsilon T/2\,I`
  (practical): A O A B records the momentum after the full kick, half a kick past BAOAB's. The
  Euler position law is off by > 1 %. Deterministic.
- ``test_euler_stability_region``: the Euler recursion is stable iff :math:`h\lambda < 4 - 2\alpha`
  (practical: :math:`\epsilon^2\lambda < 4 - 2\gamma\epsilon`); splitting for :math:`h\lambda < 4`
  at any friction. Deterministic.
- ``test_semi_implicit_and_splitting_stable_where_explicit_euler_diverges`` (10-d ICG,
  kappa = 1e4, h = 1e-3, alpha = 0.01, 8 chains x 10^4 steps; float32 by default, float64
  ``statistical``): both our integrators (spectral radius < 1) end with 0 non-finite chains
  (``bench.run``); the explicit Euler of blackjax (``integrator="explicit_euler"``: position and momentum both from
  the old state; checked against blackjax below) has spectral radius
  :math:`\sqrt{1 - \alpha + h\lambda_{max}}` = 1.0440 and grows like :math:`e^{0.0431t}`: in
  float32 all 8 chains are non-finite (from steps 2016-2058 on, counted); in float64 they stay
  finite (about 1e185 after 10^4 steps) and the measured growth rate is log(1.0440) within 2 %.
  Measured, not a speed claim.
- ``test_explicit_euler_recursion_is_blackjax_sghmc_diffusion``: one step of
  ``blackjax.sgmcmc.diffusions.sghmc`` (step :math:`\sqrt h`, friction rate :math:`\alpha/\sqrt h`,
  momentum :math:`v/\sqrt h`) is that recursion on the same noise (skipped without blackjax).

Runtime (``--durations=0``; 2 cores shared with other jobs, load average about 5): the default
set 66-79 s (36 tests; the longest: the float32 stability test 10-18 s, the NumPy driver 4-5.5 s,
each stationary-law run 1.2-4.3 s); ``-m statistical`` (the two marked cases) 29 s (float64
stability 18 s, NumPy practical-splitting 6 s). Compilation dominates: the runner is compiled once
per sampler, target and static fields (the noisy and beta-hat runs of a case share one).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from sgbench import samplers, targets
from sgbench.base.draws import jax_draws, numpy_draws
from sgbench.bench.running import run as running
from sgbench.reference.checks import law_check
from sgbench.reference.linear_laws import averaged_second_moment
from sgbench.samplers import LinearLaw
from sgbench.samplers._hamiltonian import hamiltonian_recursion as linear_recursion
from tests.test_langevin_exact_laws import ALPHA, STUDENT, TARGET

# ---------------------------------------------------------------------------------------------
# The linear recursions, derived from the update equations (not from the implementation):
# sgbench.samplers._hamiltonian.hamiltonian_recursion


def spectral_radius(matrix):
    return np.max(np.abs(np.linalg.eigvals(matrix)))


def stationary_law(precision, **case):
    """Covariance S of the stationary law of z = (x, m): S = A S A^T + B W B^T (A stable, c >= 0)."""
    big_a, big_b, w, c = linear_recursion(precision, **case)
    assert c >= 0 and spectral_radius(big_a) < 1, (case, c, spectral_radius(big_a))
    s = scipy.linalg.solve_discrete_lyapunov(big_a, big_b @ w @ big_b.T)
    return (s + s.T) / 2


def is_stable(precision, **case):
    big_a, _, _, c = linear_recursion(precision, **case)
    return c >= 0 and spectral_radius(big_a) < 1


def momentum_variance(form, step, temperature):
    """The momentum's stationary variance of the SDE: hT (Chen form) or T (practical)."""
    return step * temperature if form == "chen" else temperature


def continuous_law(target, form, step, temperature):
    """The SDE's stationary law of (x, m): block-diag(T Sigma, momentum variance I)."""
    d = target.dim
    return scipy.linalg.block_diag(temperature * target.covariance,
                                   momentum_variance(form, step, temperature) * np.eye(d))


def law_case(case, noise_variance=0.0, noise_estimate=0.0, **changes):
    """The keyword arguments of ``linear_recursion`` for a case's sampler params, with the gradient
    noise variance and beta-hat given here (0 unless given: the case's own ``noise_variance`` is
    only the level its noisy runs use)."""
    case = {**case, **changes}
    return dict(form=case["form"], integrator=case["integrator"], step=case["step_size"], friction=case["friction"],
                temperature=case.get("temperature", 1.0), noise_covariance=noise_variance,
                noise_estimate=noise_estimate)


def sampler_params(sampler, case, **extra):
    keys = ("form", "integrator", "step_size", "friction", "temperature", "noise_estimate", "refresh_every")
    return sampler.Params(**{k: case[k] for k in keys if k in case}, **extra)


@functools.cache
def make_target(noise_variance):
    """The 4-d ICG, with isotropic gradient noise of variance ``noise_variance`` if > 0 (one object
    per variance, so that compiled runners are reused)."""
    if noise_variance:
        return targets.get("icg", **TARGET, noise="isotropic", noise_variance=noise_variance)
    return targets.get("icg", **TARGET)


# ---------------------------------------------------------------------------------------------
# A driver that starts (position, momentum) anywhere: lax.scan over steps, vmap over chains


@functools.cache
def _runner(sampler, target, num_steps):
    """Compiled (keys, starts, params) -> per-chain averages of z z^T; the params are an argument,
    so settings that differ only in numbers (noisy vs beta-hat) share one compilation."""
    d = target.dim

    def chain(key, z0, params):
        spec = {"sampler": sampler.draw_spec(d, params), "gradient": target.draw_spec}
        state = jax.tree.map(jnp.asarray, sampler.init(z0[:d], params)._replace(momentum=z0[d:]))

        def one_step(carry, t):
            state, total = carry
            draws = jax_draws(jax.random.fold_in(key, t), spec, (), "float64")
            grad_fn = functools.partial(target.stochastic_grad, draw=draws["gradient"])
            state, _ = sampler.optimized_step(state, grad_fn, draws["sampler"], params)
            z = jnp.concatenate([state.position, state.momentum])
            return (state, total + jnp.outer(z, z)), None

        (_, total), _ = jax.lax.scan(one_step, (state, jnp.zeros((2 * d, 2 * d))), jnp.arange(num_steps))
        return total / num_steps

    return jax.jit(jax.vmap(chain, in_axes=(0, 0, None)))


def joint_second_moments(sampler, target, params, start, num_steps, seed):
    """Per-chain time averages of z z^T, z = (position, momentum) after each of ``num_steps``
    optimized steps (float64) from the states ``start`` (chains, 2 d); draws from
    ``sgbench.base.draws.jax_draws`` for the sampler's and the target's draw specs, one key per chain
    and step."""
    keys = jax.random.split(jax.random.key(seed), start.shape[0])
    params = jax.tree.map(lambda leaf: jnp.asarray(leaf, dtype=jnp.float64), params)
    return np.asarray(_runner(sampler, target, num_steps)(keys, jnp.asarray(start, dtype=jnp.float64), params))


def upper(matrix):
    """The upper triangle (diagonal included) of the last two axes."""
    rows, cols = np.triu_indices(matrix.shape[-1])
    return np.asarray(matrix)[..., rows, cols]


def run_from_law(name, target, params, law, num_chains, num_steps, seed):
    """Chains started at N(0, law) for (x, m); per-chain upper triangles of the average z z^T."""
    start = np.random.default_rng(seed).multivariate_normal(np.zeros(law.shape[0]), law, size=num_chains)
    estimates = joint_second_moments(samplers.get(name), target, params, start, num_steps, seed)
    assert np.all(np.isfinite(estimates))
    return upper(estimates)


# ---------------------------------------------------------------------------------------------
# 1. The implementation's one-step map is the derived recursion (deterministic)

CASES = {  # sampler params and the isotropic gradient-noise variance V of the noisy runs
    "chen-euler": dict(form="chen", integrator="euler", step_size=0.4, friction=0.6, temperature=1.0,
                       noise_variance=2.0),
    "practical-euler": dict(form="practical", integrator="euler", step_size=0.7, friction=1.0, temperature=0.5,
                            noise_variance=1.0),
    "chen-splitting": dict(form="chen", integrator="splitting", step_size=1.0, friction=0.5, temperature=0.5,
                           noise_variance=0.25),
    "practical-splitting": dict(form="practical", integrator="splitting", step_size=0.9, friction=0.8,
                                temperature=1.0, noise_variance=0.5),
    # explicit Euler is stable only where friction exceeds h lambda_max (spectral radii 0.973, 0.957)
    "chen-explicit": dict(form="chen", integrator="explicit_euler", step_size=0.1, friction=1.2, temperature=0.5,
                          noise_variance=1.0),
    "practical-explicit": dict(form="practical", integrator="explicit_euler", step_size=0.25, friction=2.0,
                               temperature=1.0, noise_variance=0.5),
}
CV_CENTRE = np.array([1.0, -2.0, 0.5, 3.0])


def one_step_states(sampler, params, target, z, draws, implementation):
    """(position, momentum) after one step from each state z (K, 2d) on the draws (K leading)."""
    d = target.dim

    def step(z, draw, xp):
        state = sampler.init(z[:d], params)._replace(momentum=z[d:])
        grad_fn = functools.partial(target.stochastic_grad, draw=draw["gradient"])
        step_fn = sampler.reference_step if xp is np else sampler.optimized_step
        new = step_fn(state, grad_fn, draw["sampler"], params)[0]
        return xp.concatenate([new.position, new.momentum])

    if implementation == "reference":
        return np.array([step(z[i], jax.tree.map(lambda a, i=i: a[i], draws), np) for i in range(len(z))])
    return np.asarray(jax.jit(jax.vmap(lambda z, draw: step(z, draw, jnp)))(jnp.asarray(z), draws))


@pytest.mark.parametrize("name", ["sghmc", "sghmc_cv"])
@pytest.mark.parametrize("case_name", list(CASES))
def test_one_step_map_is_the_derived_recursion(case_name, name):
    """z' = A z + B (sqrt(c) xi, sqrt(V) zeta) on random states and draws, both implementations;
    SGHMC-CV with the exact centre gradient: the gradient noise drops out (V -> 0)."""
    case = dict(CASES[case_name], noise_estimate=0.1)
    target = make_target(case["noise_variance"])
    sampler = samplers.get(name)
    extra = dict(centre=CV_CENTRE, centre_grad=target.grad_logdensity(CV_CENTRE)) if name == "sghmc_cv" else {}
    params = sampler_params(sampler, case, **extra)
    d, k = target.dim, 16
    rng = np.random.default_rng(1)
    z = rng.standard_normal((k, 2 * d))
    draws = {"sampler": numpy_draws(rng, sampler.draw_spec(d, params), (k,)),
             "gradient": numpy_draws(rng, target.draw_spec, (k,))}
    v = 0.0 if name == "sghmc_cv" else case["noise_variance"]
    big_a, big_b, w, c = linear_recursion(target.precision, **law_case(case, v, case["noise_estimate"]))
    w_sqrt = np.sqrt(np.diag(w))
    shocks = np.concatenate([draws["sampler"]["noise"], draws["gradient"]["gradient_noise"]], axis=1)
    expected = z @ big_a.T + (shocks * w_sqrt) @ big_b.T
    for implementation in ("reference", "optimized"):
        observed = one_step_states(sampler, params, target, z, draws, implementation)
        np.testing.assert_allclose(observed, expected, rtol=0, atol=1e-12 * np.abs(expected).max(),
                                   err_msg=implementation)


# ---------------------------------------------------------------------------------------------
# 2. Stationary laws: SGHMC (noise-free, noisy, noisy with beta-hat = V) and SGHMC-CV

NUM_CHAINS, NUM_STEPS = 256, 4000


def noise_config(case, noise):
    """(target noise variance, noise_estimate) of a noise setting."""
    v = case["noise_variance"]
    return {"none": (0.0, 0.0), "noisy": (v, 0.0), "beta-hat": (v, v)}[noise]


@pytest.mark.parametrize("noise", ["none", "noisy", "beta-hat"])
@pytest.mark.parametrize("case_name", list(CASES))
def test_sghmc_matches_discrete_lyapunov_solution(case_name, noise):
    case = CASES[case_name]
    v, beta = noise_config(case, noise)
    target, p = make_target(v), targets.get("icg", **TARGET).precision
    temp = case["temperature"]
    expected = stationary_law(p, **law_case(case, noise_variance=v, noise_estimate=beta))
    noise_free = stationary_law(p, **law_case(case, noise_variance=0.0))
    wrong = {"continuous law (the SDE's)": continuous_law(target, case["form"], case["step_size"], temp)}
    if noise == "none":
        other = {"euler": "splitting", "splitting": "euler", "explicit_euler": "euler"}[case["integrator"]]
        if is_stable(p, **law_case(case, integrator=other)):
            wrong[f"the {other} integrator's law"] = stationary_law(p, **law_case(case, integrator=other))
        if temp != 1:
            wrong["temperature ignored"] = stationary_law(p, **law_case(case, temperature=1.0))
    elif noise == "noisy":
        wrong["gradient noise ignored (noise-free law)"] = noise_free
    else:
        wrong["beta-hat ignored (noisy, uncorrected law)"] = stationary_law(p, **law_case(case, noise_variance=v))
        if case["integrator"] != "splitting":
            # Euler: h^2 V from the gradient plus h(2 alpha T - h V) injected is the noise-free 2 alpha h T.
            np.testing.assert_allclose(expected, noise_free, rtol=1e-10, atol=1e-12)
        else:
            # Splitting: the injected noise also moves the position (half a drift), the gradient noise
            # does not, so beta-hat = V does not give back the noise-free law.
            wrong["noise-free law"] = noise_free
    params = sampler_params(samplers.get("sghmc"), case, noise_estimate=beta)
    estimates = run_from_law("sghmc", target, params, expected, NUM_CHAINS, NUM_STEPS,
                             seed=100 + 3 * list(CASES).index(case_name) + ["none", "noisy", "beta-hat"].index(noise))
    law_check(estimates, upper(expected), {k: upper(s) for k, s in wrong.items()}, alpha=ALPHA, **STUDENT,
              name=f"SGHMC {case_name} ({noise}): Lyapunov law").assert_passed()


@pytest.mark.parametrize("case_name", ["chen-euler", "practical-splitting"])
def test_sghmc_cv_cancels_additive_noise(case_name):
    """Centre off the mode with the exact gradient there: the noisy chain is noise-free SGHMC."""
    case, v = CASES[case_name], 16.0
    target, p = make_target(v), targets.get("icg", **TARGET).precision
    noise_free = stationary_law(p, **law_case(case, noise_variance=0.0))
    sampler = samplers.get("sghmc_cv")
    params = sampler_params(sampler, case, centre=CV_CENTRE, centre_grad=target.grad_logdensity(CV_CENTRE))
    estimates = run_from_law("sghmc_cv", target, params, noise_free, NUM_CHAINS, NUM_STEPS, seed=120)
    law_check(estimates, upper(noise_free), {
        "noisy-SGHMC law": upper(stationary_law(p, **law_case(case, noise_variance=v))),
        "continuous law": upper(continuous_law(target, case["form"], case["step_size"], case["temperature"])),
    }, alpha=ALPHA, **STUDENT, name=f"SGHMC-CV {case_name}: noise-free law").assert_passed()


# ---------------------------------------------------------------------------------------------
# 3. The NumPy reference driver: momentum starts at 0, so the exact transient recursion

NUMPY_CASES = {"chen-euler": (32, 2000), "practical-splitting": (32, 2000)}  # chains, steps


def averaged_position_second_moment(precision, law, s0, num_steps):
    """diag of the mean over t = 1..num_steps of the position block of S_t, where
    S_{t+1} = A S_t A^T + Q from S_0 = s0 (the exact law of every step, transient included)."""
    big_a, big_b, w, _ = linear_recursion(precision, **law)
    return averaged_second_moment(s0, LinearLaw(big_a, big_b @ w @ big_b.T), num_steps, precision.shape[0])


@pytest.mark.parametrize("case_name", ["chen-euler",
                                       pytest.param("practical-splitting", marks=pytest.mark.statistical)])
def test_numpy_driver_follows_exact_recursion(case_name):
    """bench.run(backend="numpy"): positions start at N(0, S_xx) of the noisy stationary law, the
    momentum at 0 (the driver's init); t-test of the streamed E[x_i^2] against the average of
    diag(S_t) over the recorded steps."""
    case = CASES[case_name]
    num_chains, num_steps = NUMPY_CASES[case_name]
    v, d = case["noise_variance"], TARGET["dim"]
    target, p = make_target(v), targets.get("icg", **TARGET).precision
    law = law_case(case, noise_variance=v)
    s_xx = stationary_law(p, **law)[:d, :d]
    start = np.random.default_rng(130).multivariate_normal(np.zeros(d), s_xx, size=num_chains)
    params = {k: case[k] for k in ("form", "integrator", "step_size", "friction", "temperature")}
    result = running.run("sghmc", target, params=params, num_chains=num_chains, num_steps=num_steps, seed=130,
                         backend="numpy", initial_position=start)
    assert result.metrics["num_diverged_chains"] == 0
    s0 = scipy.linalg.block_diag(s_xx, np.zeros((d, d)))
    expected = averaged_position_second_moment(p, law, s0, num_steps)
    wrong = {"gradient noise ignored": averaged_position_second_moment(p, law_case(case), s0, num_steps)}
    if case["integrator"] == "euler":
        wrong["target covariance"] = case["temperature"] * np.diag(target.covariance)
    law_check(result.moments.second_moment, expected, wrong, alpha=ALPHA, **STUDENT,
              name=f"NumPy driver {case_name}: exact recursion").assert_passed()


# ---------------------------------------------------------------------------------------------
# 4. Momentum refresh

DECAY = {"kind": "polynomial_decay", "offset": 1.0, "exponent": 0.55}


def polynomial_decay(base, t, offset=1.0, exponent=0.55):
    return base * (offset + t) ** (-exponent)


def optimized_one_step(sampler, target, params, state, draws):
    grad_fn = functools.partial(target.stochastic_grad, draw=draws["gradient"])
    return sampler.optimized_step(state, grad_fn, draws["sampler"], params)[0]


@pytest.mark.parametrize("case_name", list(CASES))
def test_refresh_replaces_momentum_by_scaled_draw(case_name):
    """At a step whose counter is a multiple of L the step equals a refresh-free step started from
    momentum sqrt(h_t T) xi (Chen) or sqrt(T) xi (practical), whatever the old momentum; at other
    steps it equals the refresh-free step from the old momentum. Polynomial-decay schedule (h_t
    from its formula here), noise, beta-hat; both implementations. Deterministic."""
    case, refresh_every = dict(CASES[case_name], noise_estimate=0.05), 3
    target = make_target(case["noise_variance"])
    sampler = samplers.get("sghmc")
    refreshing = sampler_params(sampler, case, refresh_every=refresh_every, schedule=DECAY)
    plain = sampler_params(sampler, case, schedule=DECAY)
    assert set(sampler.draw_spec(target.dim, refreshing)) == {"noise", "refresh"}
    assert set(sampler.draw_spec(target.dim, plain)) == {"noise"}
    rng = np.random.default_rng(140)
    d, temp = target.dim, case["temperature"]
    for counter in (0, 2 * refresh_every, 2 * refresh_every + 1):
        x, old = rng.standard_normal(d), 1e3 * rng.standard_normal(d)
        draws = {"sampler": numpy_draws(rng, sampler.draw_spec(d, refreshing)),
                 "gradient": numpy_draws(rng, target.draw_spec)}
        h_t = polynomial_decay(case["step_size"], counter)
        refreshed = np.sqrt((h_t if case["form"] == "chen" else 1.0) * temp) * draws["sampler"]["refresh"]
        momentum = refreshed if counter % refresh_every == 0 else old
        grad_fn = functools.partial(target.stochastic_grad, draw=draws["gradient"])
        noise_only = {"noise": draws["sampler"]["noise"]}
        expected = sampler.reference_step(sampler.State(x, momentum, counter), grad_fn, noise_only, plain)[0]
        state = sampler.State(x, old, counter)
        reference = sampler.reference_step(state, grad_fn, draws["sampler"], refreshing)[0]
        optimized = jax.jit(functools.partial(optimized_one_step, sampler, target, refreshing))(
            jax.tree.map(jnp.asarray, state), jax.tree.map(jnp.asarray, draws))
        for new, implementation in ((reference, "reference"), (optimized, "optimized")):
            for got, want in ((new.position, expected.position), (new.momentum, expected.momentum)):
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12 * np.abs(want).max(),
                                           err_msg=f"counter {counter}, {implementation}")
            assert int(new.step) == counter + 1


def cyclostationary_law(precision, law, refresh_every, refresh_variance):
    """The periodic law of SGHMC with a refresh before every step whose counter is a multiple of L:
    the covariance before a refresh step solves S = Phi S Phi^T + Q_L (Phi = A^L R, R keeps the
    position and drops the momentum, the refresh adds refresh_variance I to it); returns it and
    the mean over the L phases of the covariance after each step."""
    big_a, big_b, w, _ = linear_recursion(precision, **law)
    q = big_b @ w @ big_b.T
    d = precision.shape[0]
    keep = scipy.linalg.block_diag(np.eye(d), np.zeros((d, d)))
    fresh = scipy.linalg.block_diag(np.zeros((d, d)), refresh_variance * np.eye(d))

    def cycle(s):
        phases = []
        for k in range(refresh_every):
            if k == 0:
                s = keep @ s @ keep.T + fresh
            s = big_a @ s @ big_a.T + q
            phases.append(s)
        return s, phases

    q_cycle, _ = cycle(np.zeros((2 * d, 2 * d)))
    phi = np.linalg.matrix_power(big_a, refresh_every) @ keep
    assert spectral_radius(phi) < 1
    before = scipy.linalg.solve_discrete_lyapunov(phi, q_cycle)
    after, phases = cycle(before)
    np.testing.assert_allclose(after, before, rtol=1e-9, atol=1e-12)
    return (before + before.T) / 2, sum(phases) / refresh_every


@pytest.mark.parametrize("case_name,refresh_every", [("chen-euler", 4), ("practical-splitting", 5)])
def test_refresh_follows_cyclostationary_law(case_name, refresh_every):
    """Chains start at the law before a refresh step (counter 0); t-test of the per-chain average
    of z z^T over NUM_STEPS (a multiple of L) steps against the mean of the L phase laws."""
    case = CASES[case_name]
    target, p = make_target(0.0), targets.get("icg", **TARGET).precision
    law = law_case(case)
    refresh_variance = momentum_variance(case["form"], case["step_size"], case["temperature"])
    before, expected = cyclostationary_law(p, law, refresh_every, refresh_variance)
    assert NUM_STEPS % refresh_every == 0
    params = sampler_params(samplers.get("sghmc"), case, refresh_every=refresh_every)
    estimates = run_from_law("sghmc", target, params, before, NUM_CHAINS, NUM_STEPS, seed=150)
    law_check(estimates, upper(expected), {
        "refresh ignored": upper(stationary_law(p, **law)),
        "continuous law": upper(continuous_law(target, case["form"], case["step_size"], case["temperature"])),
    }, alpha=ALPHA, **STUDENT, name=f"SGHMC {case_name}, refresh every {refresh_every}").assert_passed()


# ---------------------------------------------------------------------------------------------
# 5. Deterministic: the two forms are one chain; the splitting integrator's position law is exact


@pytest.mark.parametrize("integrator", ["euler", "splitting"])
def test_chen_and_practical_forms_are_one_chain(integrator):
    """h = eps^2, alpha = gamma eps, v = -eps r, on the same draws with the injected normal (and
    the refresh normal) negated (r is minus the usual momentum): Euler: the practical position after
    step k is the Chen position after step k + 1 (Chen drifts before its kick, the practical form
    after it; from the zero momentum of ``init`` Chen's first drift is 0); splitting: the same
    step. Both implementations, 300 steps, noise and beta-hat on, 1e-12 relative."""
    eps, gamma, temp, beta, num_steps = 0.6, 1.2, 0.7, 0.3, 300
    target = make_target(1.0)
    sampler = samplers.get("sghmc")
    chen = sampler.Params(step_size=eps**2, friction=gamma * eps, temperature=temp, noise_estimate=beta,
                          form="chen", integrator=integrator)
    practical = sampler.Params(step_size=eps, friction=gamma, temperature=temp, noise_estimate=beta,
                               form="practical", integrator=integrator)
    rng = np.random.default_rng(160)
    d = target.dim
    draws = {"sampler": numpy_draws(rng, sampler.draw_spec(d, chen), (num_steps,)),
             "gradient": numpy_draws(rng, target.draw_spec, (num_steps,))}
    negated = {"sampler": jax.tree.map(np.negative, draws["sampler"]), "gradient": draws["gradient"]}
    x0 = rng.standard_normal(d)

    def path(params, draws, implementation):
        if implementation == "reference":
            state, out = sampler.init(x0, params), []
            for t in range(num_steps):
                draw = jax.tree.map(lambda a, t=t: a[t], draws)
                grad_fn = functools.partial(target.stochastic_grad, draw=draw["gradient"])
                state = sampler.reference_step(state, grad_fn, draw["sampler"], params)[0]
                out.append(np.concatenate([state.position, state.momentum]))
            return np.array(out)

        def one_step(state, draw):
            grad_fn = functools.partial(target.stochastic_grad, draw=draw["gradient"])
            state = sampler.optimized_step(state, grad_fn, draw["sampler"], params)[0]
            return state, jnp.concatenate([state.position, state.momentum])

        state = jax.tree.map(jnp.asarray, sampler.init(jnp.asarray(x0), params))
        return np.asarray(jax.jit(lambda s, dr: jax.lax.scan(one_step, s, dr)[1])(state, draws))

    shift = 1 if integrator == "euler" else 0
    for implementation in ("reference", "optimized"):
        c, r = path(chen, draws, implementation), path(practical, negated, implementation)
        scale = np.abs(c).max()
        np.testing.assert_allclose(r[:num_steps - shift, :d], c[shift:, :d], rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(-eps * r[:, d:], c[:, d:], rtol=0, atol=1e-12 * scale)
        if shift:
            assert np.abs(c[1:, :d] - c[:-1, :d]).max() > 1e-3 * scale  # the shift matters
            np.testing.assert_array_equal(c[0, :d], x0)  # Chen's first step drifts by the zero momentum


STABLE_GRID = {"chen": [0.05, 0.5, 1.0, 1.26], "practical": [0.2, 0.7, 1.1, 1.124]}  # h * lambda_max < 4


@pytest.mark.parametrize("form", ["chen", "practical"])
def test_splitting_position_law_is_exact_on_gaussians(form):
    """A O A B, exact gradients, any stable step (up to h lambda_max = 3.98; 1.26^2 for the
    practical eps), any friction, any temperature: the position block of the Lyapunov solution is
    T Sigma (1e-9 relative); the momentum block is the SDE's (hT or T) I and the cross covariance
    E[x m^T] is -hT/2 I (Chen) or +eps T/2 I (practical): the recorded momentum is taken after the
    full kick, half a kick past BAOAB's. The Euler integrator's position law is off by > 1 %."""
    target = targets.get("icg", **TARGET)
    p, d = target.precision, target.dim
    lam = np.linalg.eigvalsh(p).max()
    for step in STABLE_GRID[form]:
        h = step if form == "chen" else step**2
        assert h * lam < 4
        for friction in (0.05, 0.7, 4.0):
            for temp in (1.0, 0.3):
                law = dict(form=form, integrator="splitting", step=step, friction=friction, temperature=temp)
                s = stationary_law(p, **law)
                scale = np.abs(s).max()  # the solver's rounding: up to 1e-11 relative near the edge
                np.testing.assert_allclose(s[:d, :d], temp * target.covariance, rtol=1e-9, atol=1e-9 * scale)
                mom = momentum_variance(form, step, temp)
                np.testing.assert_allclose(s[d:, d:], mom * np.eye(d), rtol=1e-9, atol=1e-9 * scale)
                cross = (-h * temp / 2 if form == "chen" else step * temp / 2) * np.eye(d)
                np.testing.assert_allclose(s[:d, d:], cross, rtol=1e-9, atol=1e-9 * scale)
    euler = stationary_law(p, **law_case(CASES[f"{form}-euler"]))
    assert np.abs(np.diag(euler[:d, :d]) / np.diag(CASES[f"{form}-euler"]["temperature"] * target.covariance)
                  - 1).max() > 0.01


# ---------------------------------------------------------------------------------------------
# 6. Stability on the 10-d ICG at h = 1e-3 with MAMBA's friction 0.01 (measured, not a speed claim)

STABILITY = dict(step=1e-3, friction=0.01, num_chains=8, num_steps=10_000)


def explicit_euler_paths(target, step, friction, num_chains, num_steps, seed, dtype, temperature=1.0):
    """The explicit-Euler SGHMC recursion (blackjax.sgmcmc.diffusions.sghmc in the Chen form), from
    the target's initial position with zero momentum; max_i |z_t,i| at every step (chains, steps)."""
    d = target.dim
    scale = np.sqrt(2 * friction * step * temperature)

    def chain(key):
        def one_step(z, t):
            x, v = z[:d], z[d:]
            xi = jax.random.normal(jax.random.fold_in(key, t), (d,), dtype)
            x, v = x + v, (1 - friction) * v + step * target.grad_logdensity(x) + scale * xi
            z = jnp.concatenate([x, v]).astype(dtype)
            return z, jnp.max(jnp.abs(z))

        z0 = jnp.concatenate([jnp.asarray(target.initial_position()), jnp.zeros(d)]).astype(dtype)
        return jax.lax.scan(one_step, z0, jnp.arange(num_steps))[1]

    keys = jax.random.split(jax.random.key(seed), num_chains)
    return np.asarray(jax.jit(jax.vmap(chain))(keys))


@pytest.mark.parametrize("dtype", ["float32", pytest.param("float64", marks=pytest.mark.statistical)])
def test_semi_implicit_and_splitting_stable_where_explicit_euler_diverges(dtype):
    """Our integrators: spectral radius < 1 and 0 non-finite chains in 10^4 steps (bench.run in
    ``dtype``). Explicit Euler: spectral radius sqrt(1 - alpha + h lambda_max) = 1.0440 (a complex
    pair), so |z_t| grows like e^{0.0431 t}: e^{431} over 10^4 steps. In float32 it overflows near
    step 2100: every chain non-finite; in float64 it stays finite (about 1e185), and the measured
    growth rate over steps 5000-10000 is log(radius) within 2 %."""
    target = targets.get("icg")
    p, h, alpha = target.precision, STABILITY["step"], STABILITY["friction"]
    lam = np.linalg.eigvalsh(p).max()
    for integrator in ("euler", "splitting"):
        big_a = linear_recursion(p, "chen", integrator, h, alpha)[0]
        assert spectral_radius(big_a) < 1
        result = running.run("sghmc", target, params=dict(step_size=h, friction=alpha, integrator=integrator),
                             num_chains=STABILITY["num_chains"], num_steps=STABILITY["num_steps"], seed=170,
                             dtype=dtype)
        assert result.metrics["num_diverged_chains"] == 0, integrator
        assert np.all(np.isfinite(result.moments.second_moment))
    radius = spectral_radius(linear_recursion(p, "chen", "explicit_euler", h, alpha)[0])
    np.testing.assert_allclose(radius, np.sqrt(1 - alpha + h * lam), rtol=1e-10)
    assert (2 - alpha) ** 2 < 4 * (1 - alpha + h * lam)  # complex pair: |mu|^2 = det = 1 - alpha + h lambda
    sizes = {t: explicit_euler_paths(target, h, alpha, STABILITY["num_chains"], STABILITY["num_steps"], 171, t)
             for t in ("float32", "float64")}
    diverged = ~np.isfinite(sizes["float32"][:, -1])
    assert diverged.sum() > 0 and diverged.all(), diverged
    first = np.argmax(~np.isfinite(sizes["float32"]), axis=1)
    assert np.all((first > 1500) & (first < 3000)), first  # log(float32 max) / log(radius) ~ 2060 + start
    assert np.all(np.isfinite(sizes["float64"]))  # finite in float64, but diverged:
    half = STABILITY["num_steps"] // 2
    rates = (np.log(sizes["float64"][:, -1]) - np.log(sizes["float64"][:, half - 1])) / half
    np.testing.assert_allclose(rates, np.log(radius), rtol=0.02)
    assert np.all(sizes["float64"][:, -1] > 1e150)


def test_explicit_euler_recursion_is_blackjax_sghmc_diffusion():
    """One step of blackjax.sgmcmc.diffusions.sghmc (step eps, friction rate alpha / eps, momentum
    p = v / eps) is the suite's ``integrator="explicit_euler"`` (both implementations) with h = eps^2, on the same
    noise."""
    diffusions = pytest.importorskip("blackjax.sgmcmc.diffusions")
    from blackjax.util import generate_gaussian_noise

    target = targets.get("icg")
    h, alpha = STABILITY["step"], STABILITY["friction"]
    eps = np.sqrt(h)
    rng = np.random.default_rng(172)
    x, v = rng.standard_normal(target.dim), 0.1 * rng.standard_normal(target.dim)
    key = jax.random.key(172)
    grad = target.grad_logdensity(x)
    x_bj, p_bj = diffusions.sghmc(alpha=alpha / eps)(key, jnp.asarray(x), jnp.asarray(v / eps), grad, eps)
    xi = np.asarray(generate_gaussian_noise(key, jnp.asarray(x)))
    sampler = samplers.get("sghmc")
    params = sampler.Params(step_size=h, friction=alpha, integrator="explicit_euler")
    state = sampler.init(x, params)._replace(momentum=v)
    for step in (sampler.reference_step, sampler.optimized_step):
        new = step(state, target.grad_logdensity, {"noise": xi}, params)[0]
        np.testing.assert_allclose(np.asarray(x_bj), np.asarray(new.position), rtol=1e-12)
        np.testing.assert_allclose(eps * np.asarray(p_bj), np.asarray(new.momentum), rtol=1e-12, atol=1e-15)


def test_euler_stability_region():
    """The semi-implicit Euler recursion on a Gaussian with precision lambda is stable iff
    h lambda < 4 - 2 alpha and 0 < alpha < 2 (Chen form; practical: eps^2 lambda < 4 - 2 gamma eps):
    per eigenvalue, trace 2 - alpha - h lambda and determinant 1 - alpha (Jury's conditions). So
    'h lambda < 4 and |1 - alpha| < 1' (the module docstring) is not enough once alpha is not small:
    e.g. alpha = 1, h lambda = 2.9 has spectral radius 1.9. The splitting integrator is stable for
    h lambda < 4 at any friction."""
    for alpha in (0.01, 0.3, 1.0, 1.7):
        for h_lambda in np.linspace(0.05, 3.95, 40):
            one = np.array([[h_lambda]])
            chen = spectral_radius(linear_recursion(one, "chen", "euler", 1.0, alpha)[0])
            practical = spectral_radius(linear_recursion(one, "practical", "euler", 1.0, alpha)[0])
            assert (chen < 1) == (h_lambda < 4 - 2 * alpha), (alpha, h_lambda, chen)
            assert (practical < 1) == (h_lambda < 4 - 2 * alpha), (alpha, h_lambda, practical)
            for friction in (alpha, 5.0):
                assert spectral_radius(linear_recursion(one, "chen", "splitting", 1.0, friction)[0]) < 1
    np.testing.assert_allclose(spectral_radius(linear_recursion(np.array([[2.9]]), "chen", "euler", 1.0, 1.0)[0]),
                               1.9, rtol=1e-12)
