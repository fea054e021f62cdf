"""Tier 1: reference (NumPy) and optimized (JAX) implementations of every sampler agree on the
same draws, in float64, over 1000 steps (max abs difference <= 1e-10 on the path of positions
and on every field of the final state: adapted step sizes, thermostats, tuners' decisions),
under every step-size schedule, at the hyperparameter sets each sampler's file declares
(``BenchmarkSettings.equivalence``; a sampler that needs a target wrapper sees the icg through it)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.base.draws import numpy_draws
from sgbench.samplers._contract import GradientOracle

NUM_STEPS = 1000
TOLERANCE = 1e-10

TARGETS = [dict(noise="none"), dict(noise="isotropic", noise_variance=256.0)]


def settings() -> list[tuple[str, dict]]:
    """(sampler, hyperparameters) for every registered sampler and every set its file declares for
    this test (``BenchmarkSettings.equivalence``)."""
    return [(name, params) for name in samplers.names() for params in samplers.benchmark_settings(name).equivalence]


def _reference_path(sampler, target, params, position, draws, gradient_draws):
    state = sampler.start(position.copy(), params, GradientOracle.exact(target))
    path = []
    for t in range(NUM_STEPS):
        step_draws = jax.tree.map(lambda v, t=t: v[t], draws)
        grad_draw = {k: v[t] for k, v in gradient_draws.items()}
        state, _ = sampler.reference_step(state, GradientOracle(target, grad_draw), step_draws, params)
        path.append(state.position)
    return np.array(path), state


def _optimized_path(sampler, target, params, position, draws, gradient_draws):
    def one_step(state, inputs):
        step_draws, grad_draw = inputs
        state, _ = sampler.optimized_step(state, GradientOracle(target, grad_draw), step_draws, params)
        return state, state.position

    state = jax.tree.map(jnp.asarray, sampler.start(jnp.asarray(position), params, GradientOracle.exact(target)))
    final, path = jax.jit(lambda s, i: jax.lax.scan(one_step, s, i, length=NUM_STEPS))(state, (draws, gradient_draws))
    return np.asarray(path), final


def assert_implementations_agree(sampler, target, params):
    """Run both implementations for ``NUM_STEPS`` steps on shared draws from a random start and
    assert the agreement of the module docstring; returns the reference's final state."""
    rng = np.random.default_rng(2024)
    draws = numpy_draws(rng, sampler.draw_spec(target.dim, params), (NUM_STEPS,))
    gradient_draws = numpy_draws(rng, target.draw_spec, (NUM_STEPS,))
    position = rng.standard_normal(target.dim)

    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # as the NumPy driver: compared, not warned
        reference, reference_state = _reference_path(sampler, target, params, position, draws, gradient_draws)
    optimized, optimized_state = _optimized_path(sampler, target, params, position, draws, gradient_draws)

    assert optimized.dtype == np.float64
    assert np.all(np.isfinite(reference))
    assert np.max(np.abs(reference - optimized)) <= TOLERANCE
    paths = jax.tree_util.tree_flatten_with_path(reference_state)[0]
    assert len(paths) == len(jax.tree.leaves(optimized_state))
    for (path, ours), theirs in zip(paths, jax.tree.leaves(optimized_state)):
        np.testing.assert_allclose(np.asarray(theirs, dtype=float), np.asarray(ours, dtype=float), rtol=TOLERANCE,
                                   atol=TOLERANCE, err_msg=f"state field {jax.tree_util.keystr(path)}")
    return reference_state


@pytest.mark.parametrize("target_params", TARGETS, ids=lambda p: p["noise"])
@pytest.mark.parametrize("name,params", settings(), ids=str)
def test_reference_and_optimized_agree_on_shared_draws(name, params, target_params):
    sampler = samplers.get(name)
    target = targets.adapted(targets.get("icg", **target_params), samplers.benchmark_settings(name).wrapper)
    assert_implementations_agree(sampler, target, sampler.params_for(target, **params))
