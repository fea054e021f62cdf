"""Tier 1: reference (NumPy) and optimized (JAX) implementations of every sampler agree on the
same draws, in float64, over 1000 steps (max abs difference <= 1e-10)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import samplers
import targets
from samplers._draws import numpy_draws

NUM_STEPS = 1000
TOLERANCE = 1e-10

# Every registered sampler with the settings its equivalence is checked at.
SETTINGS = {
    "sgld": [
        dict(step_size=1e-3),
        dict(step_size=2e-3, temperature=0.5),
        dict(step_size=2e-3, convention="welling_teh"),
    ],
}
TARGETS = [dict(noise="none"), dict(noise="isotropic", noise_variance=256.0)]


def test_every_sampler_has_equivalence_settings():
    assert sorted(SETTINGS) == samplers.names()


def _reference_path(sampler, target, params, position, draws, gradient_draws):
    state = sampler.init(position.copy(), params)
    path = []
    for t in range(NUM_STEPS):
        step_draws = {k: v[t] for k, v in draws.items()}
        grad_draw = {k: v[t] for k, v in gradient_draws.items()}
        grad_fn = functools.partial(target.stochastic_grad, draw=grad_draw)
        state, _ = sampler.reference_step(state, grad_fn, step_draws, params)
        path.append(state.position)
    return np.array(path)


def _optimized_path(sampler, target, params, position, draws, gradient_draws):
    def one_step(state, inputs):
        step_draws, grad_draw = inputs
        state, _ = sampler.optimized_step(state, lambda x: target.stochastic_grad(x, grad_draw), step_draws, params)
        return state, state.position

    state = jax.tree.map(jnp.asarray, sampler.init(jnp.asarray(position), params))
    return np.asarray(jax.jit(lambda s, i: jax.lax.scan(one_step, s, i)[1])(state, (draws, gradient_draws)))


@pytest.mark.parametrize("target_params", TARGETS, ids=lambda p: p["noise"])
@pytest.mark.parametrize("name,params", [(n, p) for n, ps in SETTINGS.items() for p in ps], ids=str)
def test_reference_and_optimized_agree_on_shared_draws(name, params, target_params):
    sampler, target = samplers.get(name), targets.get("icg", **target_params)
    params = sampler.params(**params)
    rng = np.random.default_rng(2024)
    draws = numpy_draws(rng, sampler.draw_spec(target.dim), (NUM_STEPS,))
    gradient_draws = numpy_draws(rng, target.draw_spec, (NUM_STEPS,))
    position = rng.standard_normal(target.dim)

    reference = _reference_path(sampler, target, params, position, draws, gradient_draws)
    optimized = _optimized_path(sampler, target, params, position, draws, gradient_draws)

    assert optimized.dtype == np.float64
    assert np.all(np.isfinite(reference))
    assert np.max(np.abs(reference - optimized)) <= TOLERANCE
