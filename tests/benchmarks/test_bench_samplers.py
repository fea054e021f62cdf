"""pytest-benchmark benchmarks: the per-chain-step time of every registered sampler, its optimized
(JAX) implementation beside its NumPy reference, on the 10-d ill-conditioned Gaussian (icg) with
isotropic gradient noise (variance 256), 10 chains, seed 0 (chains start at the mean).

For each sampler in ``samplers.names()`` and each backend:

- ``jax``: the optimized JAX driver in float32, 10 chains x N steps, compilation excluded (compiled
  and run once before the timed rounds);
- ``numpy``: the NumPy reference driver (float64, a Python loop), 10 chains x N/100 steps.

A sampler's hyperparameters are those its file declares for the speed workload (``BenchmarkSettings.speed``,
read by ``bench/perf/speed_workload.py``: step size 1e-2, as in the SGLD speed figure, except the PX and microcanonical
samplers; SGLD-CV's centre is the target's mode, found once by ``Sampler.params_for``; a ``wrapper`` adapts the icg,
as ``single_layer`` does for the samplers that need layer matrices). A registered sampler without settings fails its
own benchmarks with an error that says what to declare: a new sampler must say how it is timed.

The default ``pytest`` run has ``--benchmark-disable`` (pyproject addopts): each benchmarked
function then runs once at a small size, as a smoke test. Sizes come from the environment:

- ``SGBENCH_BENCH_STEPS``: N (default 10_000);
- ``SGBENCH_BENCH_ROUNDS``: timed rounds per benchmark when enabled (default 3).

The full figure (10 chains x 10^6 steps for JAX, x 10^4 for NumPy)::

    SGBENCH_BENCH_STEPS=1000000 python -m pytest tests/benchmarks/test_bench_samplers.py \\
        --benchmark-enable --benchmark-only --benchmark-group-by=group --benchmark-json=PATH

Each benchmark's group is ``icg10-isotropic-<sampler>``, so a sampler's two backends sit side by
side, with its one step (``test_bench_steps.py``) and, for ``sgld``, blackjax's and posteriors' SGLD
(``test_bench_blackjax_sgld.py``, ``test_bench_posteriors_sgld.py``). Chain-steps per second,
microseconds per chain-step (and per gradient evaluation) and the compile time are in each benchmark's
``extra_info``, computed from the fastest round. Timings are reported, never asserted.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.bench.perf.speed_workload import (  # noqa: F401  (the workload, also imported by the other benchmark files)
    BACKENDS,
    JAX_DTYPE,
    NUM_CHAINS,
    NUMPY_STEPS_DIVISOR,
    SEED,
    TARGET,
    TARGET_PARAMS,
    gradient_evaluations,
    problem,
)
from sgbench.bench.running import numpy_driver
from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.jax_driver import CompiledGrid


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
def target():
    return targets.get(TARGET, **TARGET_PARAMS)


def _timed(function):
    """``function`` wrapped to record each call's wall time (used when benchmarks are disabled)."""
    seconds = []

    def wrapper():
        start = time.perf_counter()
        out = function()
        seconds.append(time.perf_counter() - start)
        return out

    return wrapper, seconds


def _report(benchmark, own_seconds, config: RunConfig, grads_per_step: int, **extra):
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
        grads_per_step=grads_per_step,
        microseconds_per_gradient=1e6 * seconds / (chain_steps * grads_per_step),
        **extra,
    )


def _run_jax(sampler, target, params, positions, num_steps):
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=num_steps, seed=SEED, dtype=JAX_DTYPE)
    program = CompiledGrid(sampler, target, [params], config, positions)
    program()  # the first execution, outside the timed rounds
    run, seconds = _timed(lambda: program()[0])
    return config, run, seconds, {"compile_seconds": program.compile_seconds}


def _run_numpy(sampler, target, params, positions, num_steps):
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=num_steps, seed=SEED, backend="numpy")
    run, seconds = _timed(lambda: numpy_driver.run_chains(sampler, target, params, config, positions))
    return config, run, seconds, {}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", samplers.names())
def test_sampler_step_time(benchmark, target, name, backend):
    sampler, target, params, positions = problem(name, target)
    priming, grads_per_step = gradient_evaluations(sampler, target, params)
    if backend == "jax":
        config, run, seconds, extra = _run_jax(sampler, target, params, positions, NUM_STEPS)
    else:
        num_steps = max(1, NUM_STEPS // NUMPY_STEPS_DIVISOR)
        config, run, seconds, extra = _run_numpy(sampler, target, params, positions, num_steps)
    benchmark.group = f"icg10-isotropic-{name}"
    trace = benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    _report(benchmark, seconds, config, grads_per_step, backend=backend, sampler=name, **extra)
    # It did the work (not a timing check): per chain-step the gradients one reference step reports (plus
    # those that prime a cached state), no chain diverged.
    assert int(np.sum(trace.grad_evals)) == (grads_per_step * config.total_steps + priming) * config.num_chains
    assert int(np.sum(trace.nonfinite_steps)) == 0
