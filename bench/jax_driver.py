"""The optimized driver: JAX, one ``jit``, ``vmap`` over a grid of parameters and over chains,
``lax.scan`` over steps.

Random numbers are drawn ``block_size`` steps at a time (one key per chain and block), which
amortises the generator's per-call cost; an inner scan then runs the block's steps. Thinning,
burn-in and the streaming float64 moments live inside the scan, so memory does not grow with the
number of steps (unless ``keep_samples`` asks for the thinned draws). Gradient evaluations are
summed from each step's ``Info``; non-finite positions are counted per chain, never raised.
"""

from __future__ import annotations

import functools
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bench.config import RunConfig
from bench.draws import jax_draws
from bench.trace import ChainTrace
from reference.metrics import Moments


class _Carry(NamedTuple):
    state: Any
    moments: Moments
    grad_evals: Any
    nonfinite_steps: Any
    first_nonfinite_step: Any
    samples: Any


def run_grid(sampler, target, params_grid: list, config: RunConfig, initial_positions) -> list[ChainTrace]:
    """Run ``config.num_chains`` chains for every element of ``params_grid`` (same static
    fields, numeric fields stacked into one vmapped axis); one ChainTrace per grid point.
    Every grid point uses the same chain keys (common random numbers across the grid)."""
    dtype = jnp.dtype(config.dtype)
    stacked = jax.tree.map(lambda *values: jnp.asarray(values, dtype=dtype), *params_grid)
    keys = jax.random.split(jax.random.key(config.seed), config.num_chains)
    positions = jnp.asarray(initial_positions, dtype=dtype)
    chain = functools.partial(_run_chain, sampler, target, config)
    run = jax.jit(jax.vmap(jax.vmap(chain, in_axes=(None, 0, 0)), in_axes=(0, None, None)))

    start = time.perf_counter()
    compiled = run.lower(stacked, keys, positions).compile()
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    carry = jax.block_until_ready(compiled(stacked, keys, positions))
    run_seconds = time.perf_counter() - start

    carry = jax.tree.map(np.asarray, carry)
    share = len(params_grid)
    return [
        ChainTrace(
            moments=Moments(*(field[g] for field in carry.moments)),
            grad_evals=carry.grad_evals[g],
            nonfinite_steps=carry.nonfinite_steps[g],
            first_nonfinite_step=carry.first_nonfinite_step[g],
            samples=carry.samples[g] if config.keep_samples else None,
            compile_seconds=compile_seconds / share,
            run_seconds=run_seconds / share,
        )
        for g in range(share)
    ]


def _run_chain(sampler, target, config: RunConfig, params, key, position):
    dim, dtype = target.dim, position.dtype
    spec = {"sampler": sampler.draw_spec(dim), "gradient": target.draw_spec}
    state = jax.tree.map(jnp.asarray, sampler.init(position, params))
    samples = jnp.full((config.num_kept if config.keep_samples else 0, dim), jnp.nan, dtype)
    carry = _Carry(state, Moments.empty((), dim, jnp), jnp.int64(0), jnp.int64(0), jnp.int64(-1), samples)

    def one_step(carry: _Carry, inputs):
        t, draws = inputs
        grad_fn = functools.partial(target.stochastic_grad, draw=draws["gradient"])
        state, info = sampler.optimized_step(carry.state, grad_fn, draws["sampler"], params)
        finite = jnp.all(jnp.isfinite(state.position))
        kept = config.is_kept(t)
        samples = carry.samples
        if config.keep_samples:
            index = jnp.clip((t - config.num_burnin) // config.thin, 0, config.num_kept - 1)
            samples = samples.at[index].set(jnp.where(kept, state.position, samples[index]))
        return _Carry(
            state=state,
            moments=carry.moments.update(state.position, kept & finite),
            grad_evals=carry.grad_evals + info.num_grad_evals,
            nonfinite_steps=carry.nonfinite_steps + (~finite),
            first_nonfinite_step=jnp.where((carry.first_nonfinite_step < 0) & ~finite, t, carry.first_nonfinite_step),
            samples=samples,
        ), None

    def block(carry, block_index, length):
        block_key = jax.random.fold_in(key, block_index)
        draws = {
            part: jax_draws(jax.random.fold_in(block_key, i), part_spec, (length,), dtype)
            for i, (part, part_spec) in enumerate(spec.items())
        }
        steps = block_index * config.block_size + jnp.arange(length)
        return jax.lax.scan(one_step, carry, (steps, draws))[0]

    num_blocks, remainder = divmod(config.total_steps, config.block_size)
    # fori_loop carries the block index: no array scales with the number of blocks.
    carry = jax.lax.fori_loop(0, num_blocks, lambda b, c: block(c, b, config.block_size), carry)
    if remainder:
        carry = block(carry, num_blocks, remainder)
    return carry
