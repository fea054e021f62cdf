"""Tier 1: reference (NumPy) and optimized (JAX) implementations of every sampler agree on the
same draws, in float64, over 1000 steps (max abs difference <= 1e-10), under every step-size
schedule."""

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

DECAY = {"kind": "polynomial_decay", "offset": 1.0, "exponent": 0.55}
CYCLES = {"kind": "cyclical", "cycle_length": 300}
SMILE_CYCLES = {"kind": "cyclical", "cycle_length": 200, "final_fraction": 0.02}

# Every registered sampler with the settings its equivalence is checked at.
SETTINGS = {
    "sgld": [
        dict(step_size=1e-3),
        dict(step_size=2e-3, temperature=0.5),
        dict(step_size=2e-3, convention="welling_teh"),
        dict(step_size=5e-3, schedule=DECAY),
        dict(step_size=3e-3, schedule=CYCLES, convention="welling_teh"),
    ],
    "psgld": [
        dict(step_size=1e-3),
        dict(step_size=1e-3, smoothing=0.9, epsilon=1e-3, temperature=0.5, schedule=CYCLES),
        dict(step_size=1e-3, smoothing=1.0, initial_square_average=[1.0, 4.0, 9.0, 16.0] * 2 + [1.0, 1.0]),
    ],
    "sgld_cv": [
        dict(step_size=1e-3),
        dict(step_size=2e-3, temperature=0.3, schedule=DECAY, centre=[0.1] * 10),
    ],
    "csgld": [
        dict(step_size=3e-3, schedule=CYCLES),
        dict(step_size=3e-3, schedule=SMILE_CYCLES, exploration_fraction=1 / 3, temperature=0.5),
    ],
    "clipped_sgld": [
        dict(step_size=1e-3),
        dict(step_size=2e-2, schedule=DECAY, temperature=2.0),  # large steps: the clip is active
    ],
    "sglrw": [
        dict(step_size=1e-3),
        dict(step_size=2e-2, schedule=DECAY, temperature=0.5),  # large steps: the clip is active
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
    params = sampler.params_for(target, **params)
    rng = np.random.default_rng(2024)
    draws = numpy_draws(rng, sampler.draw_spec(target.dim), (NUM_STEPS,))
    gradient_draws = numpy_draws(rng, target.draw_spec, (NUM_STEPS,))
    position = rng.standard_normal(target.dim)

    reference = _reference_path(sampler, target, params, position, draws, gradient_draws)
    optimized = _optimized_path(sampler, target, params, position, draws, gradient_draws)

    assert optimized.dtype == np.float64
    assert np.all(np.isfinite(reference))
    assert np.max(np.abs(reference - optimized)) <= TOLERANCE
