"""The optimized driver: JAX, one compiled program, ``vmap`` over a grid of parameters and over
chains, ``lax.scan`` over steps.

Steps run in blocks of ``block_size``: one generator call draws all of the block's random
numbers (one key per chain and block, amortising the generator's per-call cost), an inner ``lax.scan`` runs only the
sampler's steps and emits the block's positions, and the block's statistics are then reduced
vectorised: thinning and burn-in masks, one float64 pass of power sums of the kept finite draws about
the running mean, turned into moments and merged into the running ones
(Chan et al.; skipped for a block that keeps no step, e.g. every block but one in ten at ``thin=10`` and
``block_size=1``), non-finite counts and gradient evaluations. Products with small matrices are fused into the
step when at most ``FEW_PARALLEL_CHAINS`` chains run at once (``sgbench.base.backend.matvec``).
Memory is bounded by one block, whatever the number of steps (unless ``keep_samples`` asks for the thinned
draws); a block over 2^28 numbers is refused with the largest ``block_size`` that fits (many chains in high dimension).
The program runs a range of blocks per call, so a long run is a few calls that report progress.
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.base.backend import fused_products
from sgbench.base.draws import jax_draws
from sgbench.base.float64 import in_float64_mode
from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.sharding import chain_devices, shard_chains
from sgbench.bench.running.trace import ChainTrace, Checkpoints
from sgbench.reference.metrics import Moments
from sgbench.samplers import Variate
from sgbench.samplers._contract import GradientOracle

PROGRESS_UPDATES = 20
BLOCK_NUMBERS_LIMIT = 2**28
# Blocks of at most this many numbers (8 MB of float32) stay in the CPU's caches: on the 2-core machine a block of
# 150 chains x 1000 steps of 10-d SGLD (4.5 x 10^6 numbers) ran 2.9 times slower per step than one of 500 steps
# (docs/performance.md). Callers that pick their block size use it through ``cached_block_size``.
CACHED_BLOCK_NUMBERS = 2**21
# up to this many chains at once, small matrix products are fused (sgbench.base.backend.matvec)
FEW_PARALLEL_CHAINS = 32


class _Carry(NamedTuple):
    state: Any
    moments: Moments
    grad_evals: Any
    nonfinite_steps: Any
    first_nonfinite_step: Any
    samples: Any


class CompiledGrid:
    """The compiled program for one grid of parameters: call it to run (and time) it.

    Every grid point uses the same chain keys (common random numbers across the grid). The chains are split over
    up to ``devices`` local devices (None: all; ``sgbench.bench.running.sharding``), with the same numbers.
    """

    @in_float64_mode
    def __init__(self, sampler, target, params_grid: list, config: RunConfig, initial_positions,
                 devices: int | None = None):
        check_block_memory(sampler, target, params_grid, config)
        dtype = jnp.dtype(config.dtype)
        self.config, self.num_points = config, len(params_grid)
        self._params = jax.tree.map(lambda *values: jnp.asarray(values, dtype=dtype), *params_grid)
        self._keys = jax.random.split(jax.random.key(config.seed), config.num_chains)
        positions = jnp.asarray(initial_positions, dtype=dtype)
        start = time.perf_counter()
        init = functools.partial(_init_chain, sampler, target, config)
        init = jax.jit(jax.vmap(jax.vmap(init, in_axes=(None, 0, 0)), in_axes=(0, None, None)))
        self._carry0 = init(self._params, self._keys, positions)
        # chains split over them (sgbench.bench.running.sharding)
        self.devices = chain_devices(config.num_chains, devices)
        self._keys = shard_chains(self._keys, self.devices, chain_axis=0)
        self._carry0 = shard_chains(self._carry0, self.devices, chain_axis=1)
        blocks = functools.partial(_run_blocks, sampler, target, config)
        scalars = (None, None, None)  # start, stop, finish
        blocks = jax.vmap(jax.vmap(blocks, in_axes=(None, 0, 0, *scalars)), in_axes=(0, None, 0, *scalars))
        shardings = jax.tree.map(lambda leaf: leaf.sharding, self._carry0)  # the carry stays split the same way
        program = jax.jit(blocks, donate_argnums=2, out_shardings=shardings)
        with fused_products(self.num_points * config.num_chains <= FEW_PARALLEL_CHAINS):  # sgbench.base.backend.matvec
            self._compiled = program.lower(self._params, self._keys, self._carry0, 0, 0, False).compile()
        self.compile_seconds = time.perf_counter() - start

    def memory_analysis(self):
        """XLA's buffer sizes of the compiled program (temporaries, outputs)."""
        return self._compiled.memory_analysis()

    @in_float64_mode
    def __call__(self, progress=None) -> list[ChainTrace]:
        """Run the program; one ChainTrace per grid point, each with an equal share of the time.

        The blocks run in about ``PROGRESS_UPDATES`` calls (more with checkpoints); after each,
        ``progress(n)`` (if given) is told the number ``n`` of chain-steps just completed over the
        whole grid, and at checkpoints the running moments are copied to the host.
        """
        carry = shard_chains(jax.tree.map(jnp.copy, self._carry0), self.devices, chain_axis=1)  # an empty array's
        # copy loses its sharding
        snapshots = []
        checkpoints = set(self.config.checkpoint_steps.tolist())
        done = 0
        start = time.perf_counter()
        for first, stop, finish, steps in _segments(self.config):
            carry = jax.block_until_ready(self._compiled(self._params, self._keys, carry, first, stop, finish))
            if steps in checkpoints:
                snapshots.append(jax.tree.map(np.asarray, (carry.moments, carry.grad_evals)))
            if progress is not None:
                progress((steps - done) * self.config.num_chains * self.num_points)
            done = steps
        run_seconds = time.perf_counter() - start
        carry = jax.tree.map(np.asarray, carry)
        running = Checkpoints.stack(self.config.checkpoint_steps, snapshots, axis=2) if snapshots else None
        return [
            ChainTrace(
                moments=Moments(*(field[g] for field in carry.moments)),
                grad_evals=carry.grad_evals[g],
                nonfinite_steps=carry.nonfinite_steps[g],
                first_nonfinite_step=carry.first_nonfinite_step[g],
                samples=carry.samples[g] if self.config.keep_samples else None,
                checkpoints=None if running is None else running.select(g),
                compile_seconds=self.compile_seconds / self.num_points,
                run_seconds=run_seconds / self.num_points,
                final_state=jax.tree.map(lambda leaf, g=g: leaf[g], carry.state),
            )
            for g in range(self.num_points)
        ]


def _numbers_per_step(sampler, target, params) -> int:
    """Random numbers drawn plus coordinates emitted by one step of one chain."""
    spec = {"sampler": sampler.draw_spec(target.dim, params), "gradient": target.draw_spec}
    return target.dim + sum(math.prod(v.shape) for v in jax.tree.leaves(spec, is_leaf=lambda v: isinstance(
        v, Variate)))


def largest_block_size(sampler, target, params_grid: list, num_chains: int, limit: int | None = None) -> int:
    """The largest ``block_size`` whose block holds at most ``limit`` numbers for this grid and chains (at least 1).

    ``limit``: ``BLOCK_NUMBERS_LIMIT`` (None, the memory bound; :func:`check_block_memory` refuses a grid whose
    single step does not fit), or ``CACHED_BLOCK_NUMBERS`` (:func:`cached_block_size`)."""
    parallel = len(params_grid) * num_chains * _numbers_per_step(sampler, target, params_grid[0])
    return max(1, (BLOCK_NUMBERS_LIMIT if limit is None else limit) // parallel)


def cached_block_size(sampler, target, params_grid: list, num_chains: int, most: int = 1024) -> int:
    """The largest ``block_size`` up to ``most`` whose block of this grid and chains holds at most
    ``CACHED_BLOCK_NUMBERS`` numbers: the fastest blocks on a CPU (docs/performance.md)."""
    return min(most, largest_block_size(sampler, target, params_grid, num_chains, CACHED_BLOCK_NUMBERS))


def check_block_memory(sampler, target, params_grid: list, config: RunConfig) -> None:
    """Refuse a block that cannot fit: one block holds grid points x chains x block steps x (random numbers
    plus coordinates per step) numbers at once (its draws and its emitted positions); over
    ``BLOCK_NUMBERS_LIMIT`` (2^28, 1 GiB of float32 each) the error names the largest ``block_size`` that fits."""
    per_step = _numbers_per_step(sampler, target, params_grid[0])
    parallel = len(params_grid) * config.num_chains
    numbers = parallel * min(config.block_size, config.total_steps) * per_step
    if parallel * per_step > BLOCK_NUMBERS_LIMIT:  # not even one step fits: no block_size helps
        raise ValueError(
            f"num_chains={config.num_chains} is too many here: one step of {len(params_grid)} grid points x "
            f"{config.num_chains} chains x {per_step} random numbers and coordinates per step holds "
            f"{parallel * per_step:.3g} numbers, over the JAX driver's limit of 2^28; num_chains must be an integer "
            f"in [1, {max(1, BLOCK_NUMBERS_LIMIT // (len(params_grid) * per_step))}] here")
    if numbers > BLOCK_NUMBERS_LIMIT:
        raise ValueError(
            f"block_size={config.block_size} makes one block hold {numbers:.3g} numbers ({len(params_grid)} grid "
            f"points x {config.num_chains} chains x {config.block_size} steps x {per_step} random numbers and "
            f"coordinates per step), over the JAX driver's limit of 2^28; block_size must be an integer in "
            f"[1, {largest_block_size(sampler, target, params_grid, config.num_chains)}] here")


def _segments(config: RunConfig) -> list[tuple[int, int, bool, int]]:
    """``(first_block, stop_block, finish, steps_done)`` of each call: about ``PROGRESS_UPDATES``
    calls over the full blocks, also cut at every checkpoint, then one call (``finish``) for the
    final short block if there is one."""
    num_blocks, remainder = divmod(config.total_steps, config.block_size)
    per_call = max(1, -(-num_blocks // PROGRESS_UPDATES))
    stops = set(range(per_call, num_blocks, per_call)) | {num_blocks}
    stops |= {int(s) // config.block_size for s in config.checkpoint_steps if s <= num_blocks * config.block_size}
    segments, first = [], 0
    for stop in sorted(stops - {0}):
        segments.append((first, stop, False, stop * config.block_size))
        first = stop
    if remainder:
        segments.append((num_blocks, num_blocks, True, config.total_steps))
    return segments


def run_grid(sampler, target, params_grid: list, config: RunConfig, initial_positions,
             progress=None, devices: int | None = None) -> list[ChainTrace]:
    """Compile and run ``config.num_chains`` chains for every element of ``params_grid`` (same
    static fields; numeric fields stacked into one vmapped axis), split over up to ``devices`` devices."""
    return CompiledGrid(sampler, target, params_grid, config, initial_positions, devices)(progress)


def _init_chain(sampler, target, config: RunConfig, params, key, position) -> _Carry:
    priming_evals = []  # counted as traced: ``prime`` makes a fixed number of evaluations
    state = sampler.start(position, params, GradientOracle.exact(target, lambda: priming_evals.append(1)))
    return _Carry(
        state=jax.tree.map(jnp.asarray, state),
        moments=Moments.empty((), target.dim, jnp),
        grad_evals=jnp.int64(len(priming_evals)), nonfinite_steps=jnp.int64(0), first_nonfinite_step=jnp.int64(-1),
        samples=jnp.full((config.num_kept if config.keep_samples else 0, target.dim), jnp.nan, position.dtype),
    )


def _run_blocks(sampler, target, config: RunConfig, params, key, carry: _Carry, start, stop, finish) -> _Carry:
    """Blocks ``start`` to ``stop`` (exclusive) of one chain, then the final short block of
    ``total_steps % block_size`` steps if ``finish``. Block ``b`` draws from ``fold_in(key, b)``,
    so the stream does not depend on how the blocks are split into calls."""
    dtype = carry.state.position.dtype
    spec = {"sampler": sampler.draw_spec(target.dim, params), "gradient": target.draw_spec}

    constant_info = {}  # Info fields that are Python constants: counted outside the loop

    def one_step(state, draws):
        state, info = sampler.optimized_step(state, GradientOracle(target, draws["gradient"]), draws["sampler"], params)
        outputs = {}
        for field in ("num_grad_evals", "is_sample"):
            value = getattr(info, field)
            if isinstance(value, (bool, int, np.bool_, np.integer)):
                constant_info[field] = value
            else:
                outputs[field] = value
        return state, (state.position, outputs)

    def block(carry: _Carry, block_index, length):
        draws = jax_draws(jax.random.fold_in(key, block_index), spec, (length,), dtype)
        # length: a deterministic sampler on an exact-gradient target draws nothing
        state, (positions, outputs) = jax.lax.scan(one_step, carry.state, draws, length=length)
        grad_evals = jnp.sum(outputs["num_grad_evals"]) if "num_grad_evals" in outputs else (
            length * constant_info["num_grad_evals"])
        is_sample = jnp.asarray(outputs["is_sample"], bool) if "is_sample" in outputs else jnp.full(
            length, bool(constant_info["is_sample"]))
        steps = block_index * config.block_size + jnp.arange(length)
        finite = jnp.all(jnp.isfinite(positions), axis=-1)
        kept = config.is_kept(steps) & is_sample
        first_bad = jnp.where(finite.all(), -1, steps[jnp.argmin(finite)])
        samples = carry.samples
        if config.keep_samples:
            sampled = config.is_sampled(steps) & is_sample
            index = jnp.where(sampled, (steps - config.num_burnin) // config.sample_every, config.num_kept)
            samples = samples.at[index].set(positions, mode="drop")

        def with_block(moments):
            return moments.merge(Moments.of_shifted_sums(positions, kept & finite, moments.mean))

        if "is_sample" in outputs:  # a flag per chain: every block is reduced
            moments = with_block(carry.moments)
        else:  # the same steps are kept in every chain: a block that keeps none (burn-in, thinning) skips its
            # reduction, which at d = 10^5 costs more than a gradient (docs/performance.md)
            moments = jax.lax.cond(jnp.any(kept), with_block, lambda unchanged: unchanged, carry.moments)
        return _Carry(
            state=state,
            moments=moments,
            grad_evals=carry.grad_evals + grad_evals,
            nonfinite_steps=carry.nonfinite_steps + jnp.sum(~finite),
            first_nonfinite_step=jnp.where(carry.first_nonfinite_step < 0, first_bad, carry.first_nonfinite_step),
            samples=samples,
        )

    # The block index is carried by the loop: no array scales with the number of blocks. A run shorter than one
    # block has no full block, so none is traced (a huge block_size would otherwise be traced, though never run).
    if config.total_steps >= config.block_size:
        carry = jax.lax.fori_loop(start, stop, lambda b, c: block(c, b, config.block_size), carry)
    remainder = config.total_steps % config.block_size
    if remainder:
        carry = jax.lax.cond(finish, lambda c: block(c, stop, remainder), lambda c: c, carry)
    return carry
