"""What bounds the optimized driver from below: the cost of a step's random numbers alone and of an
empty scan iteration, per chain-step, on the driver's own loop structure (issue 10).

- ``random_numbers``: the driver's draws and nothing else. Per chain and block of
  ``config.block_size`` steps (the run's whole blocks, or one block of a shorter run),
  ``sgbench.base.draws.jax_draws`` draws the block's variates of the
  sampler's and the target's draw specs from ``fold_in(chain key, block)``, exactly as
  ``sgbench.bench.running.jax_driver`` does, and one sum keeps them live; chains are vmapped.
- ``empty_scan``: the driver's inner ``lax.scan`` over a block's steps with a body that does the
  least that the compiler cannot hoist out of the loop: one add per coordinate, the new position
  emitted (and the emitted block summed, so the loop is not removed).

A sampler's per-chain-step time over these gives how close the driver runs to the generator
(``sgbench speed`` reports both ratios). Both are timed like the driver: compiled first, then the
best of ``repeats`` calls.
"""

from __future__ import annotations

import math
import time

import jax
import jax.numpy as jnp

from sgbench.base.draws import jax_draws
from sgbench.bench.running.config import RunConfig


def _blocks(config: RunConfig) -> tuple[int, int]:
    """(number of blocks, steps per block): the driver's whole blocks, or one block of a shorter run."""
    length = min(config.block_size, config.total_steps)
    return config.total_steps // length, length


def random_numbers(sampler, target, params, config: RunConfig):
    """A compiled call drawing every chain's variates of ``config.total_steps`` steps (whole blocks)."""
    spec = {"sampler": sampler.draw_spec(target.dim, params), "gradient": target.draw_spec}
    dtype = jnp.dtype(config.dtype)

    num_blocks, length = _blocks(config)

    def chain(key):
        def block(b, total):
            draws = jax_draws(jax.random.fold_in(key, b), spec, (length,), dtype)
            return total + sum(jnp.sum(v.astype(dtype)) for v in jax.tree.leaves(draws))

        return jax.lax.fori_loop(0, num_blocks, block, jnp.zeros((), dtype))

    keys = jax.random.split(jax.random.key(config.seed), config.num_chains)
    program = jax.jit(jax.vmap(chain)).lower(keys).compile()
    return lambda: jax.block_until_ready(program(keys))


def empty_scan(dim: int, config: RunConfig):
    """A compiled call running every chain's block loop with an empty step (x + 1, emitted)."""
    dtype = jnp.dtype(config.dtype)
    num_blocks, length = _blocks(config)

    def chain(position):
        def block(b, carry):
            position, total = carry
            position, emitted = jax.lax.scan(lambda x, _: (x + 1, x + 1), position, None, length=length)
            return position, total + jnp.sum(emitted)

        return jax.lax.fori_loop(0, num_blocks, block, (position, jnp.zeros((), dtype)))

    positions = jnp.ones((config.num_chains, dim), dtype)
    program = jax.jit(jax.vmap(chain)).lower(positions).compile()
    return lambda: jax.block_until_ready(program(positions))


def best_seconds(call, repeats: int = 3) -> float:
    """The fastest of ``repeats`` timed calls of ``call``."""
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    return min(seconds)


def microseconds_per_chain_step(call, config: RunConfig, repeats: int = 3) -> float:
    """Best of ``repeats`` timed calls of a compiled ``call`` over its whole blocks of chain-steps."""
    return 1e6 * best_seconds(call, repeats) / (config.num_chains * math.prod(_blocks(config)))
