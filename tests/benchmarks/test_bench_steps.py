"""pytest-benchmark benchmarks: ONE step of every registered sampler's optimized (JAX) implementation,
``jit(vmap(optimized_step))`` over 10 chains, float32, on the workload of ``test_bench_samplers.py`` (the
10-d icg with isotropic gradient noise of variance 256, the same hyperparameters, chains at the mean).

What is timed is one call of the compiled step: Python dispatch of the jitted function, the step of 10
chains, and ``block_until_ready`` on its output. The state (``Sampler.start``, as the JAX driver makes it)
and the step's draws (``sgbench.base.draws.jax_draws`` of ``{"sampler": draw_spec(dim, params), "gradient":
target.draw_spec}``, as ``bench/running/jax_driver.py`` draws them) are made for all samplers by one compiled call
before the timed calls, and the step is compiled ahead (``compile_seconds`` in ``extra_info``). Every call
steps from the same state with the same draws. The time is dominated by dispatch (tens of microseconds
against well under one per chain-step inside the driver's scan): this is the hot path's fixed cost per
call, not its throughput, which ``test_sampler_step_time`` measures in the same group
(``icg10-isotropic-<sampler>``).

Enabled, pytest-benchmark calibrates the rounds itself. With the default ``--benchmark-disable`` each runs
once, as a smoke test, compiled at XLA's optimisation level 0 to save compile time (nothing is measured
then). ``extra_info``: microseconds per chain-step (the call's time over 10 chains, from the fastest round)
and per gradient. Timings are reported, never asserted::

    python -m pytest tests/benchmarks/test_bench_steps.py --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.base.draws import jax_draws
from sgbench.bench.running.config import RunConfig
from sgbench.samplers._contract import GradientOracle

from .test_bench_samplers import (
    JAX_DTYPE,
    NUM_CHAINS,
    SEED,
    TARGET,
    TARGET_PARAMS,
    _report,
    _timed,
    gradient_evaluations,
    problem,
)


@pytest.fixture(scope="module")
def target():
    return targets.get(TARGET, **TARGET_PARAMS)


def _start(sampler, target):
    """``start(params, position)``: one chain's state at ``position``, as the JAX driver starts it."""

    def start(params, position):
        return jax.tree.map(jnp.asarray, sampler.start(position, params, GradientOracle.exact(target)))

    return start


@pytest.fixture(scope="module")
def inputs(target):
    """``{name: (problem, states, draws)}`` for every registered sampler: its ``problem`` (parameters as the
    driver's float32 arrays), its 10 chains' start and one step's draws, all made by ONE compiled call (one
    compilation for all samplers, instead of one or more per sampler)."""
    dtype = jnp.dtype(JAX_DTYPE)
    problems = {}
    for name in samplers.names():
        sampler, wrapped, params, positions = problem(name, target)
        params = jax.tree.map(lambda value: jnp.asarray(value, dtype=dtype), params)  # as the driver's grid
        problems[name] = (sampler, wrapped, params, jnp.asarray(positions, dtype=dtype))

    def make(key, arrays):
        made = {}
        for index, (name, (sampler, wrapped, _, _)) in enumerate(problems.items()):
            params, positions = arrays[name]
            spec = {"sampler": sampler.draw_spec(wrapped.dim, params), "gradient": wrapped.draw_spec}
            states = jax.vmap(_start(sampler, wrapped), in_axes=(None, 0))(params, positions)
            made[name] = states, jax_draws(jax.random.fold_in(key, index), spec, (NUM_CHAINS,), dtype)
        return made

    arrays = {name: (params, positions) for name, (_, _, params, positions) in problems.items()}
    made = jax.jit(make)(jax.random.key(SEED), arrays)
    return {name: (problems[name], *made[name]) for name in problems}


class CompiledStep:
    """One step of a sampler on 10 chains from ``states`` with ``draws``, compiled: calling it runs the step
    once. ``quick``: compiled at XLA's optimisation level 0, which compiles faster (for the smoke run, whose
    one call is not a measurement)."""

    def __init__(self, problem, states, draws, quick: bool = False):
        sampler, target, params, _ = problem

        def step(state, draws, params):
            return sampler.optimized_step(state, GradientOracle(target, draws["gradient"]), draws["sampler"], params)

        self.state, self.draws, self.params = states, draws, params
        options = {"xla_backend_optimization_level": 0} if quick else None
        begin = time.perf_counter()
        lowered = jax.jit(jax.vmap(step, in_axes=(0, 0, None))).lower(self.state, self.draws, self.params)
        self._compiled = lowered.compile(compiler_options=options)
        self.compile_seconds = time.perf_counter() - begin

    def __call__(self):
        return jax.block_until_ready(self._compiled(self.state, self.draws, self.params))


@pytest.mark.parametrize("name", samplers.names())
def test_one_step_time(benchmark, target, inputs, name):
    grads_per_step = gradient_evaluations(*problem(name, target)[:3])[1]
    step = CompiledStep(*inputs[name], quick=benchmark.disabled)
    run, seconds = _timed(step) if benchmark.disabled else (step, [])
    benchmark.group = f"icg10-isotropic-{name}"
    state, info = benchmark(run)
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=1, seed=SEED, dtype=JAX_DTYPE)
    _report(benchmark, seconds, config, grads_per_step, backend="jax", sampler=name,
            measured="dispatch + one step of 10 chains", compile_seconds=step.compile_seconds)
    # It did the work (not a timing check): on every chain the gradients one reference step reports, finite
    # positions.
    assert int(np.sum(info.num_grad_evals)) == grads_per_step * NUM_CHAINS
    assert np.all(np.isfinite(np.asarray(state.position)))
