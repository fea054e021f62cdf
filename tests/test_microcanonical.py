"""The microcanonical kernel (``sgbench.samplers._microcanonical``, ``sgbench.samplers.mclmc``): the ESH kick is the
paper's B_eps and its kinetic change is eq. 2's term; the deterministic step equals blackjax's
isokinetic integrators; the partial refreshment equals blackjax's on the same normal draw; whole
MCLMC trajectories with refreshment equal blackjax's mclmc kernel's on its own key-split draws; the
energy error of the minimal-norm scheme is second order; the cost; bad input."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from blackjax.mcmc import integrators as blackjax_integrators

from sgbench import samplers, targets
from sgbench.bench.running import run as running
from sgbench.samplers._contract import GradientOracle
from sgbench.samplers._microcanonical import (
    INTEGRATORS,
    integrate,
    optimized_kick,
    optimized_refresh,
    reference_kick,
    reference_refresh,
)

BLACKJAX_INTEGRATORS = {"minimal_norm": blackjax_integrators.isokinetic_mclachlan,
                        "leapfrog": blackjax_integrators.isokinetic_velocity_verlet}


def _unit(rng, dim):
    u = rng.standard_normal(dim)
    return u / np.linalg.norm(u)


@pytest.mark.parametrize("time", [1e-3, 0.3, 5.0])
def test_kick_is_the_papers_esh_map_and_eq_2_term(time):
    """SMILE appendix F.2's B_eps with sinh and cosh, and eq. 2's (d-1) log(cosh + e.u sinh), with
    e = +g/|g| (the sign that turns u up the log density)."""
    rng = np.random.default_rng(0)
    dim = 7
    u, g = _unit(rng, dim), 3.0 * rng.standard_normal(dim)
    e = g / np.linalg.norm(g)
    delta = time * np.linalg.norm(g) / (dim - 1)
    denominator = np.cosh(delta) + e @ u * np.sinh(delta)
    expected = (u + (np.sinh(delta) + e @ u * (np.cosh(delta) - 1)) * e) / denominator
    for kick in (reference_kick, optimized_kick):
        momentum, kinetic = kick(u, g, time)
        np.testing.assert_allclose(momentum, expected, atol=1e-12)
        assert float(kinetic) == pytest.approx((dim - 1) * np.log(denominator), rel=1e-12, abs=1e-12)
    assert reference_kick(u, g, time)[0] @ e > u @ e


def test_kick_from_rest_points_up_the_gradient():
    """Momentum 0 (the start; a guardrail reset) becomes e at the next kick, with kinetic change
    (d-1) log cosh(delta) (eq. 2 at u = 0)."""
    g = np.array([3.0, -4.0, 0.0])
    momentum, kinetic = reference_kick(np.zeros(3), g, 0.4)
    np.testing.assert_allclose(momentum, g / 5.0, atol=1e-15)
    assert kinetic == pytest.approx(2 * np.log(np.cosh(0.4 * 5.0 / 2)), rel=1e-12)


@pytest.mark.parametrize("integrator", sorted(INTEGRATORS))
@pytest.mark.parametrize("step_size", [0.05, 0.7])
def test_deterministic_step_equals_blackjax(integrator, step_size):
    """One step of our scheme against blackjax's isokinetic integrator on the same position,
    momentum, step size and target (float64): positions, momenta, log densities to 1e-10, and the
    energy error: ours is eq. 2's, blackjax reports its negative (kinetic change - delta log p)."""
    target = targets.get("icg")
    rng = np.random.default_rng(5)
    for _ in range(5):
        x, u = 2.0 * rng.standard_normal(target.dim), _unit(rng, target.dim)
        oracle = GradientOracle.exact(target)
        logdensity, gradient = oracle.value_and_grad(x)
        ours = integrate(x, u, logdensity, gradient, oracle, step_size, INTEGRATORS[integrator], reference_kick)
        step = BLACKJAX_INTEGRATORS[integrator](target.logdensity)
        state = blackjax_integrators.IntegratorState(jnp.asarray(x), jnp.asarray(u), jnp.asarray(logdensity),
                                                     jnp.asarray(gradient))
        theirs, kinetic_change = step(state, step_size)
        np.testing.assert_allclose(ours[0], theirs.position, atol=1e-10)
        np.testing.assert_allclose(ours[1], theirs.momentum, atol=1e-10)
        assert ours[2] == pytest.approx(float(theirs.logdensity), abs=1e-10)
        np.testing.assert_allclose(ours[3], theirs.logdensity_grad, atol=1e-10)
        blackjax_energy_change = float(kinetic_change - theirs.logdensity + state.logdensity)
        assert ours[4] == pytest.approx(-blackjax_energy_change, abs=1e-10)


def test_partial_refresh_equals_blackjax_on_the_same_draw():
    """u <- (u + nu z)/|u + nu z|, nu = sqrt((exp(2 eps/L) - 1)/d): blackjax's
    partially_refresh_momentum draws z = normal(key, shape); fed the same z, ours agrees."""
    rng = np.random.default_rng(2)
    u = _unit(rng, 9)
    key = jax.random.key(4)
    z = np.asarray(jax.random.normal(key, (9,), dtype=jnp.float64))
    theirs = blackjax_integrators.partially_refresh_momentum(jnp.asarray(u), key, 0.3, 1.7)
    for refresh in (reference_refresh, optimized_refresh):
        np.testing.assert_allclose(refresh(u, 0.3, 1.7, z), theirs, atol=1e-14)
    np.testing.assert_allclose(reference_refresh(u, 0.3, np.inf, z), u, atol=1e-15)


def _energy_drift(step_size, total_time=20.0):
    """Max over a trajectory of |sum of energy errors| of the deterministic dynamics on the icg."""
    target = targets.get("icg")
    rng = np.random.default_rng(8)
    x, u = 3.0 * rng.standard_normal(target.dim), _unit(rng, target.dim)
    oracle = GradientOracle.exact(target)
    logdensity, gradient = oracle.value_and_grad(jnp.asarray(x))

    def one(carry, _):
        x, u, logdensity, gradient, energy = carry
        x, u, logdensity, gradient, error = integrate(x, u, logdensity, gradient, oracle, step_size,
                                                      INTEGRATORS["minimal_norm"], optimized_kick)
        return (x, u, logdensity, gradient, energy + error), energy + error

    steps = int(round(total_time / step_size))
    carry = (jnp.asarray(x), jnp.asarray(u), logdensity, gradient, 0.0)
    _, energy = jax.jit(lambda c: jax.lax.scan(one, c, None, length=steps))(carry)
    return float(jnp.max(jnp.abs(energy)))


def test_minimal_norm_energy_error_is_second_order():
    """Over a fixed time the minimal-norm scheme's energy error scales as step^2 (a second-order
    integrator): the log-log slope over steps 0.0025 to 0.02 on the icg (whose smallest scale is
    0.1) is 2 within 0.2 (measured 1.99-2.0); a first-order error would give 1."""
    steps = np.array([0.0025, 0.005, 0.01, 0.02])
    drifts = np.array([_energy_drift(h) for h in steps])
    slope = np.polyfit(np.log(steps), np.log(drifts), 1)[0]
    assert abs(slope - 2.0) <= 0.2, (slope, drifts)


def test_mclmc_costs_two_gradients_per_step_after_priming():
    """The state caches the gradient at its position: two evaluations per minimal-norm step, one
    with leapfrog, plus one at the start."""
    for integrator, per_step in [("minimal_norm", 2), ("leapfrog", 1)]:
        for backend in ("jax", "numpy"):
            result = running.run("mclmc", "icg", params=dict(step_size=0.1, L=2.0, integrator=integrator),
                                 num_chains=2, num_steps=30, backend=backend)
            np.testing.assert_array_equal(result.trace.grad_evals, [1 + 30 * per_step] * 2)


@pytest.mark.parametrize("bad,message", [
    (dict(step_size=0.0), "step_size"), (dict(step_size=0.1, L=0.0), "L"), (dict(step_size=0.1, L=-2.0), "L"),
    (dict(step_size=0.1, integrator="yoshida"), "integrator"),
])
def test_mclmc_bad_input_names_the_parameter(bad, message):
    with pytest.raises(ValueError, match=message):
        samplers.get("mclmc").params(**bad)


def test_wrappers_refuse_a_sampler_that_caches_its_log_density():
    """PX and the control variate feed their own gradient oracle; MCLMC's cached log density would
    be the unwrapped target's: both wrappers refuse it by name."""
    from sgbench.samplers import control_variates, px
    with pytest.raises(ValueError, match="mclmc"):
        px.px(samplers.get("mclmc"), module=__name__)
    mclmc = samplers.get("mclmc")

    @samplers.hyperparameters
    class Params(control_variates.Centred, mclmc.Params):
        """MCLMC's Params and the control variate's centre."""

    with pytest.raises(ValueError, match="mclmc"):
        control_variates.wrap(mclmc, Params, "mclmc_cv", "none")


def test_mclmc_step_without_refreshment_equals_blackjaxs_kernel():
    """Our whole ``mclmc`` step at L = inf against blackjax's ``mclmc`` kernel (``build_kernel``, whose
    refreshment is the identity at L = inf) on the same state, step size and target, float64."""
    from blackjax.mcmc import mclmc as blackjax_mclmc
    target = targets.get("icg")
    sampler = samplers.get("mclmc")
    params = sampler.params(step_size=0.3)
    kernel = blackjax_mclmc.build_kernel()
    rng = np.random.default_rng(9)
    for _ in range(3):
        x, u = rng.standard_normal(target.dim), _unit(rng, target.dim)
        state = sampler.prime(sampler.init(x, params)._replace(momentum=u), GradientOracle.exact(target))
        ours, info = sampler.reference_step(state, GradientOracle.exact(target), {"refresh": np.zeros((2, 10))}, params)
        theirs_state = blackjax_integrators.IntegratorState(jnp.asarray(x), jnp.asarray(u), state.logdensity,
                                                            jnp.asarray(state.gradient))
        theirs, theirs_info = kernel(jax.random.key(0), theirs_state, target.logdensity, 1.0, jnp.inf, 0.3)
        np.testing.assert_allclose(ours.position, theirs.position, atol=1e-10)
        np.testing.assert_allclose(ours.momentum, theirs.momentum, atol=1e-10)
        assert ours.energy_error == pytest.approx(-float(theirs_info.energy_change), abs=1e-10)
        assert info.num_grad_evals == 2


def _blackjax_mclmc_draws(key, dim):
    """The two standard normal vectors blackjax's ``mclmc`` kernel draws from its step key ``key``:
    ``build_kernel`` splits it in 3 (the kernel's key, then the energy cutoff's and the NaN guard's),
    ``with_isokinetic_maruyama`` splits the kernel's key in 2, and each ``partially_refresh_momentum``
    draws ``normal(key_i, (dim,), float64)`` (scaled by nu there, as ours is)."""
    kernel_key = jax.random.split(key, 3)[0]
    return jnp.stack([jax.random.normal(k, (dim,), dtype=jnp.float64) for k in jax.random.split(kernel_key)])


@pytest.mark.parametrize("integrator,step_size,L", [
    ("minimal_norm", 0.05, 0.5), ("minimal_norm", 0.1, 1.0), ("minimal_norm", 0.3, 0.6), ("leapfrog", 0.2, 3.0)])
def test_mclmc_trajectory_with_refreshment_equals_blackjaxs_kernel(integrator, step_size, L):
    """60 steps of blackjax's ``mclmc`` at finite L, driven as a user would (``blackjax.mclmc``,
    ``init`` with one key, ``step`` with each of ``jax.random.split(key, 60)``), against our
    ``reference_step`` and jitted ``optimized_step`` fed the normal draws blackjax's refreshments
    consumed (``_blackjax_mclmc_draws``), on rosenbrock (d = 10, non-Gaussian, curvature 20 across
    the banana), float64: at every step positions, momenta, log densities and gradients to 1e-10 and our energy
    error against minus blackjax's ``energy_change``.

    The same Markov chain, draw for draw: blackjax 1.7.1's ``with_isokinetic_maruyama`` is ours,
    half refreshment (time h/2, u <- (u + nu z)/|u + nu z|, nu = sqrt((exp(h/L) - 1)/d), z its
    first draw), the isokinetic scheme, the other half refreshment (its second draw); no re-bracketing.
    What differs is outside the step: blackjax's ``init`` draws a uniform unit momentum where ours
    starts at rest and its first half refreshment makes z/|z| (the same law), so ours starts at
    blackjax's momentum; blackjax's energy cutoff and NaN guard (the other two keys) are inactive here
    (``desired_energy_var_max_ratio`` inf; a finite path). The tolerance is for rounding only
    (blackjax differentiates the log density with ``jax.grad``, ours has the analytic gradient;
    measured <= 3e-14 over 60 steps). That the noise matters: the same start with zero draws (no
    refreshment) ends more than 0.3 away."""
    import blackjax
    num_steps = 60
    target = targets.get("rosenbrock")
    sampler = samplers.get("mclmc")
    params = sampler.params(step_size=step_size, L=L, integrator=integrator)
    oracle = GradientOracle.exact(target)
    x = target.initial_position() + 0.1 * np.random.default_rng(3).standard_normal(target.dim)
    algorithm = blackjax.mclmc(target.logdensity, L=L, step_size=step_size,
                               integrator=BLACKJAX_INTEGRATORS[integrator])
    init_key, run_key = jax.random.split(jax.random.key(11))
    theirs_start = algorithm.init(jnp.asarray(x), init_key)
    keys = jax.random.split(run_key, num_steps)

    def theirs_one(state, key):
        state, info = algorithm.step(key, state)
        return state, (state, info)

    _, (theirs, theirs_info) = jax.jit(lambda s, k: jax.lax.scan(theirs_one, s, k))(theirs_start, keys)
    draws = np.asarray(jax.vmap(lambda key: _blackjax_mclmc_draws(key, target.dim))(keys))
    start = sampler.prime(sampler.init(x, params)._replace(momentum=np.asarray(theirs_start.momentum)), oracle)

    def ours_one(state, draw):
        state = sampler.optimized_step(state, oracle, {"refresh": draw}, params)[0]
        return state, state

    ours_scan = jax.jit(lambda s, d: jax.lax.scan(ours_one, s, d)[1])
    optimized = ours_scan(jax.tree.map(jnp.asarray, start), jnp.asarray(draws))
    reference, state = [], start
    for draw in draws:
        state = sampler.reference_step(state, oracle, {"refresh": draw}, params)[0]
        reference.append(state)
    for ours in (jax.tree.map(lambda *leaves: np.stack(leaves), *reference), optimized):
        np.testing.assert_allclose(ours.position, theirs.position, rtol=0, atol=1e-10)
        np.testing.assert_allclose(ours.momentum, theirs.momentum, rtol=0, atol=1e-10)
        np.testing.assert_allclose(ours.logdensity, theirs.logdensity, rtol=0, atol=1e-10)
        np.testing.assert_allclose(ours.gradient, theirs.logdensity_grad, rtol=0, atol=1e-10)
        np.testing.assert_allclose(ours.energy_error, -theirs_info.energy_change, rtol=0, atol=1e-10)
    no_refreshment = ours_scan(jax.tree.map(jnp.asarray, start), jnp.zeros_like(draws))
    assert np.abs(np.asarray(no_refreshment.position[-1]) - np.asarray(theirs.position[-1])).max() > 0.3
