"""pytest-benchmark: our ``mclmc`` beside blackjax's ``mclmc`` kernel, per chain-step, on the 10-d
icg without gradient noise, 10 chains, float32, the same step size and L (blackjax's kernel as its
documentation runs it: ``jax.lax.scan`` over keys, ``jax.vmap`` over chains, inside one ``jit``).
Both make two gradient evaluations per step; blackjax also splits keys and checks energy and NaNs
each step. Sizes from ``SGBENCH_BENCH_STEPS`` (default 10_000) and ``SGBENCH_BENCH_ROUNDS``, as in
``test_bench_samplers.py``. Timings are reported in ``extra_info``, never asserted::

    SGBENCH_BENCH_STEPS=100000 python -m pytest tests/benchmarks/test_bench_blackjax_mclmc.py \\
        --benchmark-enable --benchmark-only --benchmark-group-by=group
"""

from __future__ import annotations

import blackjax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.jax_driver import CompiledGrid

from .test_bench_samplers import NUM_STEPS, ROUNDS, _report, _timed

NUM_CHAINS = 10
STEP_SIZE = 0.1
L = 3.0


@pytest.fixture(scope="module")
def target():
    return targets.get("icg", noise="none")


def _blackjax_program(target, num_steps):
    """10 chains of blackjax's mclmc from the target's initial position: (run, final positions)."""
    logdensity = lambda x: target.logdensity(x)  # noqa: E731
    sampler = blackjax.mclmc(logdensity, L=L, step_size=STEP_SIZE)
    position = jnp.asarray(target.initial_position() + 0.1, dtype=jnp.float32)

    def chain(key):
        init_key, run_key = jax.random.split(key)
        state = sampler.init(position, init_key)

        def one_step(state, step_key):
            state, _ = sampler.step(step_key, state)
            return state, None

        return jax.lax.scan(one_step, state, jax.random.split(run_key, num_steps))[0].position

    keys = jax.random.split(jax.random.key(0), NUM_CHAINS)
    program = jax.jit(jax.vmap(chain)).lower(keys).compile()
    return lambda: jax.block_until_ready(program(keys))


@pytest.mark.parametrize("implementation", ["ours", "blackjax"])
def test_mclmc_step_time_against_blackjax(benchmark, target, implementation):
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=NUM_STEPS, seed=0, dtype="float32")
    if implementation == "ours":
        sampler = samplers.get("mclmc")
        params = sampler.params(step_size=STEP_SIZE, L=L)
        positions = target.check_positions(target.initial_position() + 0.1, NUM_CHAINS)
        program = CompiledGrid(sampler, target, [params], config, positions)
        program()
        run, seconds = _timed(lambda: program()[0].moments.mean)
    else:
        program = _blackjax_program(target, NUM_STEPS)
        program()
        run, seconds = _timed(program)
    benchmark.group = "icg10-mclmc-vs-blackjax"
    result = benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    _report(benchmark, seconds, config, 2, implementation=implementation)
    assert np.all(np.isfinite(np.asarray(result)))  # it ran (not a timing check)
