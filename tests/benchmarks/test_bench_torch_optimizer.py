"""pytest-benchmark: a torch optimizer through the suite (``sgbench.bench.wrappers.torch_optimizer``: an SGLD
``torch.optim.Optimizer``, all chains as the rows of one float64 tensor, the batched driver) beside the same method in
JAX (the suite's ``sgld``, JAX driver, float64, compilation excluded), as ``sgbench validate`` runs them: its default
256 chains on its icg target (the 10-d ill-conditioned Gaussian with its default gradient noise), step 0.02, in the
group ``validate-icg-256-sgld``. The torch run takes N/10 steps (``SGBENCH_BENCH_STEPS``, default 10 000). Chain-steps
per second are in each benchmark's ``extra_info``; timings are never asserted::

    SGBENCH_BENCH_STEPS=20000 python -m pytest tests/benchmarks/test_bench_torch_optimizer.py \\
        --benchmark-enable --benchmark-only --benchmark-group-by=group
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.base.float64 import in_float64_mode
from sgbench.bench.running import batched_driver
from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.jax_driver import CompiledGrid

from .test_bench_samplers import NUM_STEPS, ROUNDS, SEED, _report, _timed

torch = pytest.importorskip("torch")
from sgbench.bench.wrappers import torch_optimizer  # noqa: E402

CHAINS = 256  # sgbench validate's default
STEP_SIZE = 0.02
GROUP = "validate-icg-256-sgld"


class SGLD(torch.optim.Optimizer):
    """x' = x - lr grad(-log p) + sqrt(2 lr) xi, as a torch user writes it."""

    def __init__(self, params, lr):
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                p.add_(-group["lr"] * p.grad + math.sqrt(2 * group["lr"]) * torch.randn_like(p))


@pytest.fixture(scope="module")
def target():
    return targets.get("icg")


def _positions(target):
    return np.asarray(target.check_positions(target.initial_position(), CHAINS), dtype=np.float64)


def test_torch_optimizer_through_the_batched_driver(benchmark, target):
    sampler = torch_optimizer(SGLD, step_size="lr")
    config = RunConfig(num_chains=CHAINS, num_steps=max(1, NUM_STEPS // 10), seed=SEED, dtype="float64")
    params = sampler.params(step_size=STEP_SIZE)
    run, seconds = _timed(lambda: batched_driver.run_chains(sampler, target, params, config, _positions(target)))
    benchmark.group = GROUP
    trace = benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    _report(benchmark, seconds, config, 1, implementation="torch.optim.Optimizer SGLD via torch_optimizer",
            torch_threads=torch.get_num_threads())
    assert np.all(np.isfinite(trace.moments.mean))  # it ran (not a timing check)


def test_the_suites_sgld_through_the_jax_driver(benchmark, target):
    config = RunConfig(num_chains=CHAINS, num_steps=NUM_STEPS, seed=SEED, dtype="float64")
    sgld = samplers.get("sgld")
    compiled = in_float64_mode(CompiledGrid)(sgld, target, [sgld.params(step_size=STEP_SIZE)], config,
                                             _positions(target))
    program = in_float64_mode(compiled)
    program()  # compiled and run once outside the timed rounds
    run, seconds = _timed(lambda: program()[0])
    benchmark.group = GROUP
    benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    _report(benchmark, seconds, config, 1, implementation="the suite's sgld, JAX driver (float64)",
            compile_seconds=compiled.compile_seconds)
