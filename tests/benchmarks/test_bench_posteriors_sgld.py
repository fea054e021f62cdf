"""pytest-benchmark: posteriors' SGLD (torch, CPU; ``sgbench.bench.perf.native_sgld.posteriors_program``: its documented
``sgld.build`` with ``init``/``update`` in a Python loop, the 10 chains as one (10, 10) tensor), per chain-step,
beside ours on the same job (the workload of ``test_bench_samplers.py``), in the group ``icg10-isotropic-sgld``,
over N/100 steps (``NUMPY_STEPS_DIVISOR``, as for our NumPy reference). Skipped without torch and posteriors.
``extra_info`` as in ``test_bench_samplers.py`` plus torch's thread count; timings are never asserted::

    SGBENCH_BENCH_STEPS=100000 python -m pytest tests/benchmarks/test_bench_posteriors_sgld.py \\
        --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.bench.perf import native_sgld
from sgbench.bench.running.config import RunConfig

from .test_bench_samplers import (
    NUM_CHAINS,
    NUM_STEPS,
    NUMPY_STEPS_DIVISOR,
    ROUNDS,
    SEED,
    TARGET,
    TARGET_PARAMS,
    _report,
    _timed,
)

torch = pytest.importorskip("torch")  # the [test] extra; skipped where it is not installed, as tests/test_adapters.py
with warnings.catch_warnings():  # tensordict warns once per posteriors state class (a TensorClass default)
    warnings.simplefilter("ignore", FutureWarning)
    posteriors = pytest.importorskip("posteriors")
    pytest.importorskip("posteriors.sgmcmc.sgld")

STEP_SIZE = samplers.benchmark_settings("sgld").speed["step_size"]
DTYPE = torch.float32


@pytest.fixture(scope="module")
def target():
    return targets.get(TARGET, **TARGET_PARAMS)


def test_posteriors_sgld_step_time(benchmark, target):
    num_steps = max(1, NUM_STEPS // NUMPY_STEPS_DIVISOR)
    run, seconds = _timed(native_sgld.posteriors_program(target, NUM_CHAINS, num_steps, STEP_SIZE, SEED))
    benchmark.group = "icg10-isotropic-sgld"
    params = benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=num_steps, seed=SEED, dtype="float32")  # for _report
    _report(benchmark, seconds, config, 1, implementation=f"posteriors {posteriors.__version__} sgld (torch)",
            chains_as="one (10, 10) parameter tensor", torch_threads=torch.get_num_threads())
    assert params.shape == (NUM_CHAINS, target.dim) and params.dtype == DTYPE
    assert np.all(np.isfinite(params.numpy()))  # it ran (not a timing check)
