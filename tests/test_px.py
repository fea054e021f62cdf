"""PX-SGMCMC (``sgbench.samplers.px``, ``px_sgld``, ``px_sghmc``): the expansion, its chain rule, Lemma 3.1,
the mapped-back samples, bad input, the low-rank option, and mode hopping on the 25-mode mixture.

Conventions as in ``tests/test_langevin_exact_laws.py``: deterministic checks have false-failure
rate 0 (their tolerances are float64 rounding, 1e-10 to 1e-12 relative, or a stated truncation
error); the one statistical assertion states its rate and the calibration behind it. Runtimes were
measured on the shared 2-core CPU machine of the session that wrote them (other jobs running):
the default (non-statistical) part, 20 tests, 22-36 s wall in all (imports and JAX compilations
included); ``test_mixture_mode_hopping`` 45 s.

Tests (what; false-failure rate; what it detects; time):

1. ``test_expansion_00_is_the_base_sampler`` [sghmc practical, friction 100; sgld]: the digits BNN
   (one hidden layer of 8), 1000 steps on shared draws, both implementations: PX with expansion
   (0, 0) equals the base sampler, max abs difference <= 1e-10 (measured: 0 in NumPy, 2e-16 in JAX).
   Rate 0. Detects a layout that does not put (V, a) where (W, b) are, misaligned draws, a prior
   not removed or not added back, a wrong friction vector. 2-3 s each.
   ``test_reference_and_optimized_agree_on_bnn`` [px_sgld, px_sghmc, px_sgld (2, 1) low rank 2]:
   the tier-1 equivalence of ``tests/test_equivalence.py`` on the BNN, 300 steps, <= 1e-10 (measured
   <= 6e-15). PX-SGLD uses step 3e-5: at 1e-4 the expanded BNN chain is chaotic (rounding differences
   grow x10 every ~20 steps, 2e-6 by step 300), which would test the dynamics, not the code.
   Rate 0. 2-4 s each. ``test_friction_groups``: friction on V, a and expanded_friction on P, Q.
2. ``test_lemma_3_1_gradient_flow_is_preconditioned`` [(1, 0), (0, 1), (1, 1), (2, 1): e = 2, 2,
   3, 4]: under the gradient flow of the factors driven by the hand-written chain rule, the
   derivative of X = vec(W_1 ... W_e) (Richardson-extrapolated central differences of RK4 steps) is
   -P_X grad F with Lemma 3.1's P_X, and the e = 2 formula as printed equals the general sum.
   Relative tolerance 1e-7 (measured 1e-12, and 8e-9 for e = 4). Rate 0. Detects transposes, a wrong
   factor order, a missing term. < 0.1 s. ``test_expanded_gradient_matches_jax_grad_on_bnn`` (6
   expansions, full and low rank): the expanded stochastic gradient (prior removal, J^T, expanded
   prior) against jax.grad of an independent composition of eq. (9), 1e-10 relative. Rate 0. 1.5-4 s
   each (one compile).
3. ``test_mapped_back_samples_go_through_the_predictive_pipeline``: smoke test (stated purpose in its
   docstring): ``bench.run(keep_samples=True)`` samples of SGHMC and PX-SGHMC on the digits BNN give
   finite predictive metrics of the same kinds (accuracy, NLL, ECE, LPPD, ensemble ambiguity), and
   the mapped-back position equals W(theta) of the base state at every step (NumPy exactly, JAX to
   1e-12). Rate 0. 2 s.
4. ``test_mode_counting_and_the_single_layer_adapter`` (deterministic, 0.6 s) and
   ``test_mixture_mode_hopping`` (statistical; below).
5. ``test_bad_input``: a target without layers (icg: the message names it, what is needed and
   ``sgbench.targets.single_layer``), bad expansions (negative: ValueError; non-integer: TypeError, as the suite's
   other integer checks), expanded_friction <= 0 or unstable, vector friction without
   expanded_friction, a base with target-dependent parameters. Rate 0. < 0.1 s.
6. ``test_low_rank_factors``: diag(d) + U L^T factors, their parameter count, the exact start, the
   mapped-back W against an independent composition (the chain rule with low-rank factors is in 2).
   Rate 0. < 0.1 s.

Mode hopping on the 2-d mixture of 25 Gaussians (section 5.1; ``targets.get("gmm", extra_dims=0,
component_variance=0.03)`` wrapped by ``sgbench.targets.single_layer``, prior N(0, 1) on v and the P's,
expansion (3, 0): x = P_3 P_2 P_1 v), single chains from the origin, 10^5 steps each, samples
thinned by 10, a mode visited when a sample lies within 3 component standard deviations
(0.52) of its centre; SGLD step 1e-3, SGHMC practical form step 0.02 friction 50 (per-step friction
1). The calibration runs behind ``test_mixture_mode_hopping``'s rate (328 SGLD chains: 8 with seed 0, 64 with
seed 1, 256 with seed 2; 72 SGHMC chains; 320 PX-SGLD chains) were made with an earlier code version; today's
counts are the reproduction's, generated from its record in docs/reproductions.md
(``sgbench reproduce px-modes --scale paper``: 64 chains, seed 0; the 8 chains of the test:
``python -m pytest tests/test_px.py -m statistical -s``).
The expansion lets every sampler leave the origin's mode, where the base samplers stay. It also
makes the chains stiffer as the expanded matrices grow (the preconditioner of Lemma 3.1 scales with
their singular values): PX-SGLD diverged at step 5e-3 and PX-SGHMC at 0.05 within 2 x 10^4 steps, where
SGLD and SGHMC are stable; with table 11's friction ratio (P, Q friction 1/100 of V's) about half of the
PX-SGHMC chains diverge on this toy, with equal friction none do (the reproduction's record). The paper's
own toy run is HMC (10 leapfrog steps of 0.05, Metropolis-corrected), which this does not reproduce.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special

from sgbench import samplers, targets
from sgbench.base.draws import numpy_draws
from sgbench.bench.reproduce.px_modes import (
    MIXTURE,
    MODE_RADIUS,
    PX_SGLD,
    SGHMC,
    SGLD,
    mixture_centres,
    mode_counts,
    modes_visited,
)
from sgbench.bench.running import run as running
from sgbench.reference import metrics
from sgbench.samplers import px

TOLERANCE = 1e-10  # reference vs optimized, expansion (0, 0) vs base: float64 rounding over the run
GRAD_TOLERANCE = 1e-10  # hand-written chain rule vs jax.grad, relative to the gradient's max-norm


@functools.cache
def digits(hidden=(8,)):
    """The digits BNN (MILE's classification default) with one small hidden layer: fast steps."""
    return targets.get("bnn", task="classification", hidden=hidden)


def run_paths(sampler, target, params, num_steps, seed=2024, position=None):
    """(reference path, optimized path, final reference state, final optimized state) on shared draws."""
    rng = np.random.default_rng(seed)
    draws = numpy_draws(rng, sampler.draw_spec(target.dim, params), (num_steps,))
    gradient_draws = numpy_draws(rng, target.draw_spec, (num_steps,))
    position = target.initial_position() if position is None else position

    state, reference = sampler.init(np.array(position, dtype=np.float64), params), []
    for t in range(num_steps):
        grad_fn = functools.partial(target.stochastic_grad, draw={k: v[t] for k, v in gradient_draws.items()})
        state, _ = sampler.reference_step(state, grad_fn, {k: v[t] for k, v in draws.items()}, params)
        reference.append(state.position)

    def one_step(s, inputs):
        step_draws, grad_draw = inputs
        s, _ = sampler.optimized_step(s, lambda x: target.stochastic_grad(x, grad_draw), step_draws, params)
        return s, s.position

    start = jax.tree.map(jnp.asarray, sampler.init(jnp.asarray(position, dtype=jnp.float64), params))
    final, optimized = jax.jit(lambda s, i: jax.lax.scan(one_step, s, i))(start, (draws, gradient_draws))
    return np.array(reference), np.asarray(optimized), state, final


# ------------------------------------------------------------------------------------------------
# 1. Expansion (0, 0) is the base sampler


@pytest.mark.parametrize("base,params", [
    ("sghmc", dict(step_size=1e-3, form="practical", friction=100.0)),
    ("sgld", dict(step_size=1e-4)),
], ids=["sghmc", "sgld"])
def test_expansion_00_is_the_base_sampler(base, params):
    """Same draws, 1000 steps, both implementations: PX with expansion (0, 0) and the default
    prior (the target's) is the base sampler up to rounding (the target's prior gradient is removed
    and the same one added back)."""
    target, base = digits(), samplers.get(base)
    wrapped = px.px(base, (0, 0), module=__name__)
    base_params, px_params = base.params_for(target, **params), wrapped.params_for(target, **params)
    assert wrapped.draw_spec(target.dim, px_params) == base.draw_spec(target.dim, base_params)
    ref_base, opt_base, _, _ = run_paths(base, target, base_params, 1000)
    ref_px, opt_px, _, _ = run_paths(wrapped, target, px_params, 1000)
    assert np.all(np.isfinite(ref_base)) and np.max(np.abs(ref_base - ref_base[0])) > 0.1  # it moved
    assert np.max(np.abs(ref_px - ref_base)) <= TOLERANCE
    assert np.max(np.abs(opt_px - opt_base)) <= TOLERANCE


# ------------------------------------------------------------------------------------------------
# Reference and optimized implementations agree (what tests/test_equivalence.py checks on icg)


@pytest.mark.parametrize("name,params", [
    ("px_sgld", dict(step_size=3e-5)),
    ("px_sghmc", dict(step_size=1e-3)),
    ("px_sgld", dict(step_size=3e-5, expansion=(2, 1), low_rank=2, prior_scale=0.5)),
], ids=["px_sgld", "px_sghmc", "px_sgld_lowrank"])
def test_reference_and_optimized_agree_on_bnn(name, params):
    """300 steps on shared draws, float64: max abs difference <= 1e-10; the chains move."""
    sampler, target = samplers.get(name), digits()
    params = sampler.params_for(target, **params)
    reference, optimized, _, _ = run_paths(sampler, target, params, 300)
    assert optimized.dtype == np.float64 and np.all(np.isfinite(reference))
    assert np.max(np.abs(reference - reference[0])) > 0.01
    assert np.max(np.abs(reference - optimized)) <= TOLERANCE


def test_friction_groups():
    """The base's per-coordinate friction: ``friction`` on V and a (the first ``dim`` coordinates,
    the target's layout), ``expanded_friction`` (default friction / 100, table 11) on P and Q."""
    sampler, target = samplers.get("px_sghmc"), digits()
    params = sampler.params_for(target, step_size=1e-3)
    assert params.friction == 100.0 and params.expanded_friction == 1.0
    friction = px.base_params(params, np).friction
    n_in, hidden, n_out = 64, 8, 10
    expected_expanded = (hidden**2 + n_in**2) + (n_out**2 + hidden**2)  # (P, Q) of each layer
    assert friction.shape == (target.dim + expected_expanded,) == (px.expanded_dim(params),)
    assert np.all(friction[:target.dim] == 100.0) and np.all(friction[target.dim:] == 1.0)
    params = sampler.params_for(target, step_size=1e-3, friction=50.0, expanded_friction=3.0)
    friction = px.base_params(params, jnp).friction
    assert np.all(friction[:target.dim] == 50.0) and np.all(friction[target.dim:] == 3.0)
    assert isinstance(px.base_params(params, np), samplers.get("sghmc").Params)


# ------------------------------------------------------------------------------------------------
# 2. Lemma 3.1 and the chain rule


def _factors(theta, lay):
    """The layer's matrices in the paper's orientation, read from ``theta`` independently of
    ``sgbench.samplers.px.forward``: (P_1..P_c, V, Q_1..Q_d, a) per layer."""
    out = []
    for slot in lay.layers:
        def matrix(f):
            p, k, s = f.size, f.rank, f.start
            if k == 0:
                return theta[s:s + p * p].reshape(p, p)
            u, low = theta[s + p:s + p + p * k].reshape(p, k), theta[s + p + p * k:s + p + 2 * p * k].reshape(p, k)
            return jnp.diag(theta[s:s + p]) + u @ low.T
        v = theta[slot.weights:slot.weights + slot.n_in * slot.n_out].reshape(slot.n_in, slot.n_out).T
        a = None if slot.bias is None else theta[slot.bias:slot.bias + slot.n_out]
        out.append(([matrix(f) for f in slot.left], v, [matrix(f) for f in slot.right], a))
    return out


def _compose(theta, lay):
    """(W, b) flat in the target's layout from eq. (9) written out: W = P_c ... P_1 V Q_1 ... Q_d."""
    pieces = []
    for left, v, right, a in _factors(theta, lay):
        w = v
        for p in left:
            w = p @ w
        for q in right:
            w = w @ q
        pieces.append(w.T.reshape(-1))
        if a is not None:
            for p in left:
                a = p @ a
            pieces.append(a)
    return jnp.concatenate(pieces)


def _lemma_preconditioner(factors):
    """P_X of Lemma 3.1 for X = W_1 ... W_e: sum_j W_{j+1:e}^T W_{j+1:e} (x) W_{1:j-1} W_{1:j-1}^T."""
    def prod(ms, size):
        out = np.eye(size)
        for m in ms:
            out = out @ m
        return out
    rows, cols = factors[0].shape[0], factors[-1].shape[1]
    total = 0
    for j in range(len(factors)):
        left = prod(factors[:j], rows)
        right = prod(factors[j + 1:], factors[j].shape[1]) if j + 1 < len(factors) else np.eye(cols)
        total = total + np.kron(right.T @ right, left @ left.T)
    return total


def _single_layer_params(expansion, n_in, n_out, low_rank=0):
    return px.px(samplers.get("sgld"), expansion, module=__name__).params(
        step_size=1e-3, layers=((n_in, n_out, False),), prior_scale=1.0, target_prior_precision=0.0, low_rank=low_rank)


@pytest.mark.parametrize("expansion", [(1, 0), (0, 1), (1, 1), (2, 1)], ids=str)
def test_lemma_3_1_gradient_flow_is_preconditioned(expansion):
    """Lemma 3.1 (appendix A.1, eqs. 20-23): under the gradient flow dW_i = -grad_{W_i} F dt of the
    factors (driven by the hand-written chain rule ``sgbench.samplers.px.pullback``), X = vec(W_1 ... W_e)
    moves as dX/dt = -P_X grad_X F, with vec column-major (our flat W, row-major (in, out), is
    vec of the paper's out x in matrix). Cases e = 2 (P V and V Q: P_X = W_2^T W_2 (x) I +
    I (x) W_1 W_1^T), e = 3 and e = 4 (the general sum). The derivative is the Richardson
    extrapolation of central differences of RK4 steps of dt = 1e-4 and 2e-4 (measured error 1e-12
    for e <= 3, 8e-9 for e = 4; plain central differences have 1e-8 to 4e-5, the O(dt^2) term):
    relative tolerance 1e-7. Deterministic (random matrices from a fixed seed). Detects a wrong
    chain rule (transposes, factor order, a missing term) and a wrong P_X."""
    n_out, n_in = 3, 2  # X is 3 x 2 in the paper's orientation
    params = _single_layer_params(expansion, n_in, n_out)
    lay = px.layout(params.layers, params.expansion)
    rng = np.random.default_rng(31)
    theta = rng.normal(0.0, 0.8, lay.expanded_dim)
    for f in lay.layers[0].left + lay.layers[0].right:  # identity + noise keeps the flow tame
        theta[f.start:f.start + f.length] = (np.eye(f.size) + 0.4 * rng.normal(size=(f.size, f.size))).reshape(-1)
    weights = rng.normal(size=n_in * n_out)

    def grad_f(x):  # F(x) = log sum exp(c . x) + sum(x^4) / 4
        return scipy.special.softmax(weights * x) * weights + x**3

    def velocity(th):
        x, cache = px.forward(th, params, np)
        return -px.pullback(th, cache, grad_f(x), params, np)

    def rk4(th, dt):
        k1 = velocity(th)
        k2 = velocity(th + dt / 2 * k1)
        k3 = velocity(th + dt / 2 * k2)
        k4 = velocity(th + dt * k3)
        return th + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def central(dt):
        return (px.forward(rk4(theta, dt), params, np)[0] - px.forward(rk4(theta, -dt), params, np)[0]) / (2 * dt)

    x_now = px.forward(theta, params, np)[0]
    derivative = (4 * central(1e-4) - central(2e-4)) / 3  # Richardson: truncation O(dt^4)
    left, v, right, _ = _factors(theta, lay)[0]
    factors = [np.asarray(m) for m in [*left[::-1], v, *right]]  # W_1 = P_c, ..., V, ..., W_e = Q_d
    assert len(factors) == sum(expansion) + 1
    x_paper = np.linalg.multi_dot(factors) if len(factors) > 1 else factors[0]
    np.testing.assert_allclose(x_paper.reshape(-1, order="F"), x_now, rtol=1e-12, atol=1e-12)
    predicted = -_lemma_preconditioner(factors) @ grad_f(x_now)
    assert np.max(np.abs(derivative - predicted)) <= 1e-7 * np.max(np.abs(predicted))
    if len(factors) == 2:  # the e = 2 case as printed in the lemma
        w1, w2 = factors
        printed = np.kron(w2.T @ w2, np.eye(w1.shape[0])) + np.kron(np.eye(w2.shape[1]), w1 @ w1.T)
        np.testing.assert_allclose(printed, _lemma_preconditioner(factors), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("expansion,low_rank", [((1, 1), 0), ((2, 3), 0), ((3, 0), 0), ((0, 0), 0), ((1, 1), 2),
                                                ((2, 1), 1)], ids=str)
def test_expanded_gradient_matches_jax_grad_on_bnn(expansion, low_rank):
    """The stochastic gradient of the expanded log density (``expanded_grad_fn``: the driver's
    gradient of the log posterior at W(theta), the target's prior removed, J^T by hand, the
    expanded prior added) equals jax.grad of log-likelihood(W(theta)) + log N(theta; 0, s^2 I) with
    W(theta) composed here from eq. (9) independently (one fixed minibatch, scaled by N/B; biases
    included; full and low-rank factors). NumPy implementation; the JAX one equals it on shared
    draws (``test_reference_and_optimized_agree_on_bnn``). Relative tolerance 1e-10 of the
    gradient's max-norm: deterministic. Detects any error in the chain rule, the prior removal or
    the expanded prior."""
    target = digits((5, 4))
    sampler = px.px(samplers.get("sgld"), expansion, module=__name__)
    params = sampler.params_for(target, step_size=1e-3, prior_scale=0.7, low_rank=low_rank)
    lay = px.layout(params.layers, params.expansion, params.low_rank)
    rng = np.random.default_rng(7)
    theta = rng.normal(0.0, 0.5, lay.expanded_dim)
    indices = rng.integers(0, target.num_data, target.noise.batch_size)
    scale = target.num_data / target.noise.batch_size
    np.testing.assert_allclose(px.forward(theta, params, np)[0], np.asarray(_compose(jnp.asarray(theta), lay)),
                               rtol=1e-12, atol=1e-12)

    def log_density(th, idx, weight):
        prior = -0.5 * jnp.sum(th**2) / params.prior_scale**2
        return weight * target.log_likelihood(_compose(th, lay), idx) + prior

    expected = np.asarray(jax.jit(jax.grad(functools.partial(log_density, idx=indices, weight=scale)))(theta))
    got = px.expanded_grad_fn(lambda x: target.stochastic_grad(x, {"indices": indices}), params, np)(theta)
    assert np.max(np.abs(got - expected)) <= GRAD_TOLERANCE * np.max(np.abs(expected))


# ------------------------------------------------------------------------------------------------
# 6. The low-rank option


def test_low_rank_factors():
    """``low_rank`` k: every expanded matrix is diag(d) + U L^T (U, L: p x k), p(1 + 2k) numbers;
    the start (d = 1, U = L = 0) maps back to the given position exactly; the mapped-back W is
    eq. (9) with those matrices (checked against a composition written here; the chain rule with
    low-rank factors is in ``test_expanded_gradient_matches_jax_grad_on_bnn``). Deterministic."""
    target = digits((5, 4))
    sampler = samplers.get("px_sghmc")
    params = sampler.params_for(target, step_size=1e-3, low_rank=2)
    full = sampler.params_for(target, step_size=1e-3)
    sizes = [(5, 64), (4, 5), (10, 4)]  # (out, in) per layer
    assert px.expanded_dim(full) == target.dim + sum(o * o + i * i for o, i in sizes)
    assert px.expanded_dim(params) == target.dim + sum(o * 5 + i * 5 for o, i in sizes)
    x0 = target.initial_position()
    state = sampler.init(x0, params)
    assert np.array_equal(state.position, x0) and state.base.position.shape == (px.expanded_dim(params),)
    lay = px.layout(params.layers, params.expansion, params.low_rank)
    factor = lay.layers[0].left[0]
    theta0 = state.base.position
    assert np.array_equal(theta0[factor.start:factor.start + factor.size], np.ones(5))
    assert np.array_equal(theta0[factor.start + 5:factor.start + factor.length], np.zeros(20))
    theta = np.random.default_rng(3).normal(size=lay.expanded_dim)
    np.testing.assert_allclose(px.forward(theta, params, np)[0], np.asarray(_compose(jnp.asarray(theta), lay)),
                               rtol=1e-12, atol=1e-12)
    p_matrix = np.asarray(px._factor(theta, factor, np))
    u = theta[factor.start + 5:factor.start + 15].reshape(5, 2)
    low = theta[factor.start + 15:factor.start + 25].reshape(5, 2)
    np.testing.assert_allclose(p_matrix, np.diag(theta[factor.start:factor.start + 5]) + u @ low.T, rtol=1e-14)


# ------------------------------------------------------------------------------------------------
# 3. Mapped-back samples through the predictive metrics


def _predictive_metrics(target, samples):
    """The classification metrics of ``sgbench.reference.metrics`` on the test split for draws (chains,
    draws, dim): the pipeline for BNN samples (softmax of ``predict``'s logits)."""
    features, labels = target.splits["test"]
    flat = samples.reshape(-1, target.dim)
    log_probs = np.stack([scipy.special.log_softmax(np.asarray(target.predict(x, features)), axis=-1) for x in flat])
    return {
        "accuracy": metrics.accuracy(labels, log_probs=log_probs),
        "nll": metrics.nll(labels, log_probs=log_probs),
        "ece": metrics.ece(labels, log_probs=log_probs),
        "lppd": metrics.categorical_lppd(labels, log_probs=log_probs),
        "ensemble_ambiguity": metrics.ensemble_ambiguity(log_probs=log_probs),
    }


def test_mapped_back_samples_go_through_the_predictive_pipeline():
    """Smoke test (deterministic, fixed seeds). Purpose: PX samples reach the drivers as the target's
    own parameters, so everything downstream of ``bench.run`` (kept samples, moments, gradient
    counts, the predictive metrics used for BNN samples) works unchanged. SGHMC and PX-SGHMC on the
    digits BNN, ``bench.run`` with ``keep_samples`` (NumPy driver, 2 chains x 200 steps, thinned to
    10 draws each): finite metrics of the same kinds, in their ranges, the gradient count of one
    per step; and the mapped-back position equals W(theta) of the base state at every step of a
    run of both implementations (NumPy: exactly; JAX: to 1e-12). Detects a position in the wrong
    layout or orientation, a stale position, and a driver that does not handle the nested state."""
    target = digits()
    results = {}
    for name, params in [("sghmc", dict(step_size=1e-3, form="practical", friction=100.0)),
                         ("px_sghmc", dict(step_size=1e-3))]:
        run = running.run(name, target, params=params, num_chains=2, num_steps=200, thin=20, keep_samples=True,
                          seed=5, backend="numpy")
        assert run.trace.samples.shape == (2, 10, target.dim) and np.all(np.isfinite(run.trace.samples))
        assert np.all(run.trace.grad_evals == 200)
        results[name] = _predictive_metrics(target, run.trace.samples)
    assert results["sghmc"].keys() == results["px_sghmc"].keys()
    for values in results.values():
        assert all(math.isfinite(v) for v in values.values())
        assert 0 <= values["accuracy"] <= 1 and values["nll"] >= 0 and 0 <= values["ece"] <= 1
        assert values["ensemble_ambiguity"] >= 0

    sampler = samplers.get("px_sghmc")
    params = sampler.params_for(target, step_size=1e-3)
    rng = np.random.default_rng(0)
    state = sampler.init(target.initial_position(), params)
    jax_step = jax.jit(lambda s, d, g: sampler.optimized_step(s, lambda x: target.stochastic_grad(x, g), d, params)[0])
    jax_state = jax.tree.map(jnp.asarray, state)
    for _ in range(20):
        draws = numpy_draws(rng, sampler.draw_spec(target.dim, params))
        gradient_draw = numpy_draws(rng, target.draw_spec)
        grad_fn = functools.partial(target.stochastic_grad, draw=gradient_draw)
        state, _ = sampler.reference_step(state, grad_fn, draws, params)
        assert np.array_equal(state.position, px.forward(state.base.position, params, np)[0])
        jax_state = jax_step(jax_state, draws, gradient_draw)
        mapped = np.asarray(px.forward(np.asarray(jax_state.base.position), params, np)[0])
        assert np.max(np.abs(np.asarray(jax_state.position) - mapped)) <= 1e-12


# ------------------------------------------------------------------------------------------------
# 5. Bad input


def test_bad_input():
    """Clear errors (deterministic): a target without layer matrices (names the target, what is
    needed and the adapter), bad expansions, frictions and low ranks, parameters built without the
    target, a base with target-dependent parameters, a doubly wrapped target."""
    sghmc = samplers.get("px_sghmc")
    icg = targets.get("icg")
    with pytest.raises(ValueError, match=r"layer matrices.*'icg' has none.*targets\.single_layer\(target\)"):
        sghmc.params_for(icg, step_size=1e-3)
    with pytest.raises(ValueError, match="layer matrices"):
        running.run("px_sgld", "icg", params=dict(step_size=1e-3), num_chains=1, num_steps=2, backend="numpy")
    for expansion, error in [((-1, 0), ValueError), ((1, -2), ValueError), ((1.5, 0), TypeError),
                             ((True, 0), TypeError), ((1,), ValueError), ("11", ValueError), (2, ValueError)]:
        with pytest.raises(error, match="expansion"):
            sghmc.params(step_size=1e-3, expansion=expansion)
        with pytest.raises(error, match="expansion"):
            px.px(samplers.get("sgld"), expansion, module=__name__)
    for value in (0.0, -1.0, math.inf, [1.0, -1.0]):
        with pytest.raises(ValueError, match="expanded_friction"):
            sghmc.params(step_size=1e-3, expanded_friction=value)
    with pytest.raises(ValueError, match="expanded_friction .*friction \\* step_size"):  # Euler: per-step friction < 2
        sghmc.params(step_size=0.01, friction=100.0, expanded_friction=300.0)
    with pytest.raises(ValueError, match="expanded_friction is required"):
        sghmc.params(step_size=1e-3, friction=[100.0, 50.0])
    with pytest.raises(ValueError, match="friction"):
        sghmc.params(step_size=1e-3, friction=0.0)
    with pytest.raises(ValueError, match="low_rank"):
        sghmc.params(step_size=1e-3, low_rank=-1)
    with pytest.raises(ValueError, match="prior_scale"):
        sghmc.params(step_size=1e-3, prior_scale=0.0)
    with pytest.raises(ValueError, match="params_for"):  # no layers without the target
        sghmc.init(np.zeros(10), sghmc.params(step_size=1e-3))
    with pytest.raises(ValueError, match="layers"):
        sghmc.params(step_size=1e-3, layers=((0, 3, True),))
    target = digits()
    with pytest.raises(ValueError, match="target_prior_precision"):
        sghmc.params_for(target, step_size=1e-3, target_prior_precision=4.0)
    params = sghmc.params_for(target, step_size=1e-3, friction=np.full(target.dim, 100.0), expanded_friction=[1.0, 2.0])
    with pytest.raises(ValueError, match="expanded_friction has length 2"):
        sghmc.init(target.initial_position(), params)
    with pytest.raises(ValueError, match="dimension"):
        sghmc.init(np.zeros(target.dim + 1), sghmc.params_for(target, step_size=1e-3))
    with pytest.raises(ValueError, match="prepare"):
        px.px(samplers.get("sgld_cv"), module=__name__)
    with pytest.raises(ValueError, match="no parameter 'fricton'"):
        px.px(samplers.get("sghmc"), module=__name__, fricton=1.0)
    with pytest.raises(TypeError, match="single_layer"):
        targets.single_layer(targets.single_layer(icg))
    with pytest.raises(ValueError, match="prior_scale"):
        targets.single_layer(icg, prior_scale=-1.0)


@pytest.mark.parametrize("name,base,friction", [("px_sgld", "sgld", False), ("px_sghmc", "sghmc", True)])
def test_params_fields_defaults_and_pickling(name, base, friction):
    """A PX sampler's Params: the base's fields (PX-SGHMC's defaults form "practical" and friction 100), then the
    expansion's; its class is its module's ``Params`` (the module passed to ``px``), so a value pickles to an
    equal one of the same class (the gate and Dask pickle them), and ``dataclasses.replace`` re-validates it."""
    import dataclasses
    import pickle

    sampler, base_params = samplers.get(name), samplers.get(base).Params
    Params = sampler.Params
    assert Params.__module__ == f"sgbench.samplers.{name}" and Params.__qualname__ == "Params"
    assert Params.base_class is base_params and issubclass(Params, base_params)
    expansion_fields = ["expansion", "layers", "prior_scale", "target_prior_precision", "low_rank"]
    assert [f.name for f in dataclasses.fields(Params)] == [
        *(f.name for f in dataclasses.fields(base_params)), *expansion_fields, *(["expanded_friction"] * friction)]
    statics = {f.name for f in dataclasses.fields(Params) if f.metadata.get("static")}
    assert {"expansion", "layers", "low_rank"} <= statics and not {"prior_scale", "expanded_friction"} & statics
    defaults = {f.name: f.default for f in dataclasses.fields(Params)}
    assert defaults["expansion"] == (1, 1) and defaults["low_rank"] == 0 and defaults["layers"] is None
    if friction:
        assert defaults["form"] == "practical" and defaults["friction"] == 100.0
    params = sampler.params(step_size=1e-3, layers=((2, 3, True),), prior_scale=1.0, target_prior_precision=0.5)
    copy = pickle.loads(pickle.dumps(params))
    assert type(copy) is Params and repr(copy) == repr(params)
    assert dataclasses.replace(params, low_rank=2).low_rank == 2
    with pytest.raises(ValueError, match="prior_scale"):
        dataclasses.replace(params, prior_scale=-1.0)


# ------------------------------------------------------------------------------------------------
# 4. The 25-mode mixture (section 5.1)

def test_mode_counting_and_the_single_layer_adapter():
    """The mode counter on hand-placed points, and the adapter (deterministic): the wrapped mixture
    is the same target (density, gradient, truth, start) with one 1 x 2 layer and no prior of its
    own, so a base sampler runs on it exactly as on the mixture, and PX (3, 0) sees section 5.1's
    x = P_3 P_2 P_1 v with 2 x 2 matrices: 2 + 3 * 4 expanded coordinates."""
    gmm = targets.get("gmm", **MIXTURE)
    centres, sd = mixture_centres(gmm), math.sqrt(MIXTURE["component_variance"])
    assert centres.shape == (25, 2)
    points = np.array([[0.0, 0.0], [0.1, -0.1], [2.0 + 2.9 * sd, 0.0], [2.0 + 3.1 * sd, 0.0], [-4.0, 4.0],
                       [np.nan, 0.0], [1.0, 1.0]])
    assert modes_visited(points, centres, MODE_RADIUS * sd) == 3
    assert modes_visited(points[5:], centres, MODE_RADIUS * sd) == 0
    wrapped = targets.single_layer(gmm)
    x = np.array([0.3, -1.7])
    assert wrapped.dim == 2 and wrapped.logdensity(x) == gmm.logdensity(x)
    assert np.array_equal(wrapped.grad_logdensity(x), gmm.grad_logdensity(x))
    assert wrapped.truth is gmm.truth and np.array_equal(wrapped.initial_position(), np.zeros(2))
    assert np.array_equal(wrapped.grad_log_prior(x), np.zeros(2))
    sampler = px.px(samplers.get("sghmc"), (3, 0), module=__name__, form="practical")
    params = sampler.params_for(wrapped, step_size=0.02, friction=50.0)
    assert params.layers == ((1, 2, False),) and params.prior_scale == 1.0 and params.target_prior_precision == 0.0
    assert px.expanded_dim(params) == 2 + 3 * 4
    ref, opt, _, _ = run_paths(samplers.get("sgld"), gmm, samplers.get("sgld").params(step_size=1e-3), 50)
    ref_w, opt_w, _, _ = run_paths(samplers.get("sgld"), wrapped, samplers.get("sgld").params(step_size=1e-3), 50)
    assert np.array_equal(ref, ref_w) and np.array_equal(opt, opt_w)


@pytest.mark.statistical
def test_mixture_mode_hopping():
    """Section 5.1: SGLD/SGHMC and their PX versions (expansion (3, 0), prior N(0, 1) on v and the
    P's) on the 2-d mixture of 25 Gaussians (variance 0.03), 8 single chains each of 10^5 steps
    from the origin, samples thinned by 10; a mode counts as visited when a sample lies within 3
    component standard deviations of its centre. The counts are printed (``-s``). Asserted: the base
    samplers never diverge (none of the 328 SGLD and 72 SGHMC calibration chains of the module
    docstring did), and PX-SGLD visits more modes in total than SGLD.
    Unless at least 6 of the 8 PX-SGLD chains visit <= 3 modes, PX-SGLD's total is
    >= 3 * 4 + 5 = 17, which SGLD's 8 chains would have to reach (9 hops; in the calibration runs
    one of 320 SGLD chains visited a second mode, none a third). A PX-SGLD chain visited <= 3
    modes in 23 of 320 calibration chains (0.072; 95 % upper bound 0.106), so the false-failure
    rate is about 28 * 0.072^6 = 4e-6 (< 5e-5 at the upper bound). Power: detects an expansion
    that does not change the dynamics (PX-SGLD equal to SGLD in law), and a broken mode counter."""
    counts = mode_counts(num_chains=8, num_steps=100_000, seed=0)
    for label, run in counts.items():
        print(f"{label:32s} modes per chain {run.modes} (total {sum(run.modes)}), diverged chains "
              f"{sum(run.diverged)}")
    assert not any(counts[SGLD].diverged) and not any(counts[SGHMC].diverged)
    assert sum(counts[PX_SGLD].modes) > sum(counts[SGLD].modes)
