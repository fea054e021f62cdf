"""The batched driver (``sgbench.bench.running.batched_driver``): all chains in one step, for a sampler whose step
is elementwise over chains. It keeps the NumPy driver's statistics chain by chain, gives every chain its own
gradient draw, and runs only the samplers built for it."""

from __future__ import annotations

import numpy as np
import pytest

from sgbench import targets
from sgbench.base.draws import numpy_draws
from sgbench.bench.adapters._adapted import AdaptedSampler
from sgbench.bench.running import run as running
from sgbench.bench.running.batched_driver import ChainsOracle
from sgbench.samplers._contract import GradientOracle, Info, hyperparameters
from sgbench.samplers._langevin import State, init


@hyperparameters
class AscentParams:
    """``step_size`` h of the gradient ascent x + h grad log p(x)."""

    step_size: float


def ascent_step(state: State, grad_fn, draws, params: AscentParams):
    return State(state.position + params.step_size * grad_fn(state.position), state.step + 1), Info(num_grad_evals=1)


ASCENT = AdaptedSampler.build(name="toy:ascent", citation="gradient ascent, elementwise over chains", library="toy",
                              backend="batched", step=ascent_step, Params=AscentParams, State=State, init=init,
                              draw_spec=lambda dim, params=None: {})


def test_a_deterministic_sampler_gives_what_the_numpy_driver_gives_chain_by_chain():
    """Without draws, on exact gradients, both drivers compute the same chains: the moments, the kept samples, the
    checkpoints, the gradient counts, and a chain that overflows at its first step is diverged alone."""
    start = np.random.default_rng(0).normal(size=(3, 10))
    start[1] = 1e307
    options = dict(params={"step_size": 1e-3}, num_chains=3, num_steps=300, num_burnin=20, thin=3, keep_samples=True,
                   num_checkpoints=4, initial_position=start)
    batched = running.run(ASCENT, "icg", backend="batched", **options)
    one_by_one = running.run(ASCENT, "icg", backend="numpy", **options)
    for got, expected in zip(batched.moments, one_by_one.moments):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(batched.samples, one_by_one.samples, rtol=1e-12)
    np.testing.assert_allclose(batched.trace.checkpoints.moments.mean_sq, one_by_one.trace.checkpoints.moments.mean_sq,
                               rtol=1e-12)
    for key in ("grad_evals", "diverged", "nonfinite_steps", "first_nonfinite_step"):
        assert batched.diagnostics[key] == one_by_one.diagnostics[key], key
    assert batched.diagnostics["diverged"] == [False, True, False]
    assert batched.trace.final_state.step.tolist() == [320] * 3


def test_each_chain_sees_its_own_gradient_draw():
    target = targets.get("icg", noise="isotropic", noise_variance=256.0)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, target.dim))
    oracle = ChainsOracle(target)
    oracle.draw = numpy_draws(rng, target.draw_spec, leading=(4,))
    values, gradients = oracle.value_and_grad(x)
    for c in range(4):
        one = GradientOracle(target, {k: v[c] for k, v in oracle.draw.items()})
        value, gradient = one.value_and_grad(x[c])
        np.testing.assert_allclose(values[c], value, rtol=1e-12)
        np.testing.assert_allclose(gradients[c], gradient, rtol=1e-12)
    assert not np.allclose(gradients[0], gradients[1])  # the draws differ, so the noisy gradients do
    assert oracle.evaluations == 1


def test_a_sampler_not_built_for_it_is_refused_naming_the_backend():
    with pytest.raises(ValueError, match="backend 'batched' runs only a sampler whose step is elementwise"):
        running.run("sgld", "icg", params={"step_size": 1e-3}, num_chains=2, num_steps=10, backend="batched")
    with pytest.raises(ValueError, match="dtype must be 'float64' for the batched backend"):
        running.run(ASCENT, "icg", params={"step_size": 1e-3}, num_chains=2, num_steps=10, backend="batched",
                    dtype="float32")
