"""pytest-benchmark: blackjax's own SGLD (``sgbench.bench.perf.native_sgld.blackjax_program``: ``blackjax.sgld`` in
``lax.scan`` with its own key splitting, vmapped over chains, one ``jit``), per chain-step, beside ours on the
same job (the workload of ``test_bench_samplers.py``: the 10-d icg with isotropic gradient noise of variance 256,
10 chains from the mean, step size 1e-2, float32), in the group ``icg10-isotropic-sgld``. Sizes: N =
``SGBENCH_BENCH_STEPS``, rounds ``SGBENCH_BENCH_ROUNDS``. ``extra_info`` as in ``test_bench_samplers.py``;
timings are never asserted::

    SGBENCH_BENCH_STEPS=100000 python -m pytest tests/benchmarks -k "sgld and not cv" \\
        --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import blackjax
import jax.numpy as jnp
import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.bench.perf import native_sgld
from sgbench.bench.running.config import RunConfig

from .test_bench_samplers import JAX_DTYPE, NUM_CHAINS, NUM_STEPS, ROUNDS, SEED, TARGET, TARGET_PARAMS, _report, _timed

STEP_SIZE = samplers.benchmark_settings("sgld").speed["step_size"]


@pytest.fixture(scope="module")
def target():
    return targets.get(TARGET, **TARGET_PARAMS)


def test_blackjax_sgld_step_time(benchmark, target):
    program = native_sgld.blackjax_program(target, NUM_CHAINS, NUM_STEPS, STEP_SIZE, SEED, JAX_DTYPE)
    program()  # the first execution, outside the timed rounds
    run, seconds = _timed(program)
    benchmark.group = "icg10-isotropic-sgld"
    positions = benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=NUM_STEPS, seed=SEED, dtype=JAX_DTYPE)
    _report(benchmark, seconds, config, 1, implementation=f"blackjax {blackjax.__version__} sgld")
    assert positions.shape == (NUM_CHAINS, target.dim) and positions.dtype == jnp.dtype(JAX_DTYPE)
    assert np.all(np.isfinite(np.asarray(positions)))  # it ran (not a timing check)
