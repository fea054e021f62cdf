"""Per-chain-step time against the number of chains: where a GPU overtakes a CPU (issue 46).

Each of ``SAMPLERS`` runs the speed workload (``bench/perf/speed_workload.py``: the 10-d icg with isotropic
gradient noise, float32, the sampler's ``speed`` hyperparameters) at each chain count, all chains started at the
mean, for :func:`steps_for` steps: about ``budget`` chain-steps a run, at least ``MIN_STEPS`` steps, so that every
run does about the same work. Random numbers are drawn in blocks that fit the caches and divide the steps
(``cached_block_size``, ``dividing_block_size``). Times are ``sgbench.bench.perf.speed.driver_and_floor``'s: the
JAX driver's µs per chain-step and that of its random numbers alone, compiled first, best of ``repeats`` runs.
"""

from __future__ import annotations

import pandas as pd

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.perf.speed import driver_and_floor
from sgbench.bench.perf.speed_workload import JAX_DTYPE, SEED, problem
from sgbench.bench.running.config import RunConfig, dividing_block_size
from sgbench.bench.running.jax_driver import cached_block_size

SAMPLERS = ("sgld", "sghmc", "mclmc", "smile")
CHAIN_COUNTS = (10, 1_000, 100_000)
# 10^6, not 10^7: the projection of docs/performance.md puts 10 chains on a GPU at 25-150 µs a step, so 10^7
# chain-steps would be 10^6 steps and up to 150 s a run, 10 minutes for the four samplers' runs at 10 chains alone
BUDGET = 10**6
MIN_STEPS = 100


def steps_for(num_chains: int, budget: int = BUDGET) -> int:
    """Steps per run at ``num_chains`` chains: ``budget // num_chains``, at least ``MIN_STEPS``."""
    return max(MIN_STEPS, budget // num_chains)


def measure(names=SAMPLERS, chain_counts=CHAIN_COUNTS, budget: int = BUDGET, repeats: int = 3,
            progress=print, on_row=None) -> pd.DataFrame:
    """One row per sampler and chain count: chains, steps, block size, µs per chain-step (the driver's and its
    random numbers'), chain-steps per second and the ratio to the random numbers.

    Args:
        names: registered samplers with ``speed`` settings.
        chain_counts: the chain counts.
        budget: chain-steps per run (:func:`steps_for`).
        repeats: timed runs of each, the best kept.
        progress: told one line per run.
        on_row: called with the table so far after each row (the CLI writes it, so an interruption keeps it).

    Returns:
        the table.
    """
    rows = []
    for name in names:
        sampler, target, params, _ = problem(name)
        for chains in chain_counts:
            steps = steps_for(chains, budget)
            block = dividing_block_size(steps, cached_block_size(sampler, target, [params], chains))
            config = RunConfig(num_chains=chains, num_steps=steps, seed=SEED, dtype=JAX_DTYPE, block_size=block)
            positions = target.check_positions(target.initial_position(), chains)
            driver_us, rng_us = driver_and_floor(sampler, target, params, config, positions, repeats)
            rows.append({"sampler": name, "chains": chains, "steps": steps, "block size": block,
                         "µs per chain-step": driver_us, "chain-steps per s": 1e6 / driver_us,
                         "random numbers µs": rng_us, "x rng": driver_us / rng_us})
            progress(f"{name}, {chains} chains x {steps} steps: {driver_us:.4f} µs per chain-step "
                     f"({1e6 / driver_us:.3g} chain-steps per s)")
            if on_row is not None:
                on_row(pd.DataFrame(rows))
    return pd.DataFrame(rows)


def figure(table: pd.DataFrame) -> bytes:
    """PNG: µs per chain-step against chains, log-log, one line per sampler."""
    fig, axes = subplots(1, 1, figsize=(7, 4.5))
    for name, rows in table.groupby("sampler", sort=False):
        axes.plot(rows["chains"], rows["µs per chain-step"], marker="o", label=name)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xticks(sorted(set(table["chains"])), [f"{c:,}" for c in sorted(set(table["chains"]))])
    axes.set_xlabel("chains")
    axes.set_ylabel("µs per chain-step")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=8)
    fig.tight_layout()
    return png_bytes(fig, dpi=90)


