"""pytest-benchmark benchmarks: SGLD on the 10-d ill-conditioned Gaussian (icg) with isotropic
gradient noise, 10 chains, step size 1e-2, seed 0.

- the optimized JAX driver in float32, 10 chains x N steps, compilation excluded (compiled and run
  once before the timed rounds);
- the NumPy reference driver (float64), 10 chains x N/100 steps.

The default ``pytest`` run has ``--benchmark-disable`` (pyproject addopts): each benchmarked
function then runs once at a small size, as a smoke test. Sizes come from the environment:

- ``SGBENCH_BENCH_STEPS``: N (default 10_000);
- ``SGBENCH_BENCH_ROUNDS``: timed rounds per benchmark when enabled (default 3).

The full figure (10 chains x 10^6 steps for JAX, x 10^4 for NumPy)::

    SGBENCH_BENCH_STEPS=1000000 python -m pytest tests/benchmarks --benchmark-enable --benchmark-only

(add ``--benchmark-json=PATH`` to keep the numbers). Chain-steps per second, microseconds per
chain-step and the compile time are in each benchmark's ``extra_info``, computed from the
fastest round. Timings are reported, never asserted.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import samplers
import targets
from bench import numpy_driver
from bench.config import RunConfig
from bench.jax_driver import CompiledGrid

NUM_CHAINS = 10
STEP_SIZE = 1e-2
SEED = 0


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        value = int(raw.replace("_", "")) if raw else default
    except ValueError:
        value = 0
    if value < 1:
        raise pytest.UsageError(f"{name} must be a positive integer, got {raw!r}")
    return value


NUM_STEPS = _env_int("SGBENCH_BENCH_STEPS", 10_000)
ROUNDS = _env_int("SGBENCH_BENCH_ROUNDS", 3)


@pytest.fixture(scope="module")
def problem():
    sampler = samplers.get("sgld")
    target = targets.get("icg", dim=10, noise="isotropic")
    params = sampler.params(step_size=STEP_SIZE)
    positions = target.check_positions(target.initial_position(), NUM_CHAINS)
    return sampler, target, params, positions


def _timed(function):
    """``function`` wrapped to record each call's wall time (used when benchmarks are disabled)."""
    seconds = []

    def wrapper():
        start = time.perf_counter()
        out = function()
        seconds.append(time.perf_counter() - start)
        return out

    return wrapper, seconds


def _report(benchmark, own_seconds, config: RunConfig, **extra):
    stats = getattr(benchmark.stats, "stats", None) if benchmark.stats else None
    seconds = stats.min if stats is not None else min(own_seconds)
    chain_steps = config.num_chains * config.total_steps
    benchmark.extra_info.update(
        num_chains=config.num_chains,
        num_steps=config.total_steps,
        dtype=config.dtype,
        chain_steps=chain_steps,
        seconds=seconds,
        chain_steps_per_second=chain_steps / seconds,
        microseconds_per_chain_step=1e6 * seconds / chain_steps,
        **extra,
    )


def test_jax_driver_sgld_icg_float32(benchmark, problem):
    sampler, target, params, positions = problem
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=NUM_STEPS, seed=SEED, dtype="float32")
    program = CompiledGrid(sampler, target, [params], config, positions)
    program()  # the first execution, outside the timed rounds
    run, seconds = _timed(program)
    benchmark.group = "sgld-icg10-isotropic"
    (trace,) = benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    _report(benchmark, seconds, config, backend="jax", compile_seconds=program.compile_seconds)
    # It did the work (not a timing check): one gradient per chain-step, no chain diverged.
    assert int(np.sum(trace.grad_evals)) == NUM_CHAINS * NUM_STEPS
    assert int(np.sum(trace.nonfinite_steps)) == 0


def test_numpy_driver_sgld_icg(benchmark, problem):
    sampler, target, params, positions = problem
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=max(1, NUM_STEPS // 100), seed=SEED, backend="numpy")
    run, seconds = _timed(lambda: numpy_driver.run_chains(sampler, target, params, config, positions))
    benchmark.group = "sgld-icg10-isotropic"
    trace = benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    _report(benchmark, seconds, config, backend="numpy")
    assert int(np.sum(trace.grad_evals)) == NUM_CHAINS * config.num_steps
