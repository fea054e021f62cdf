"""``sgbench speed``: the speed figures of issue 10 as tables and a plot, and where the limit is.

1. ``sampler_table``: every sampler's per-chain-step time on the speed workload (``bench/perf/speed_workload.py``:
   10 chains on the 10-d icg with isotropic noise), JAX driver (float32) and NumPy reference (float64),
   beside two floors measured on the driver's own loop structure (``bench/perf/floors.py``): drawing the
   sampler's random numbers alone, and an empty scan iteration. ``x rng`` is the sampler's time over its
   random-number floor: 1 would be a driver that costs nothing but its random numbers.
2. ``sgld_comparison``: SGLD on the same job by every implementation (``bench/perf/native_sgld.py``): ours
   (JAX driver, NumPy reference), a vectorised NumPy loop, blackjax's and posteriors' own loops.
3. ``sgld_grid``: the SMILE Table 1 cell, SGLD at 22 step sizes (log-spaced 1e-4 to 2e-2) x 10 chains x
   ``steps`` in one compiled, vmapped program, in blocks that fit the caches (``CACHED_BLOCK_NUMBERS``): compile and
   run seconds, and the projection to the table's 48 cells.
4. ``bnn_overhead``: SGLD on the digits ``bnn`` with two hidden layers of 280 units (99 690 parameters,
   minibatch 32): its per-chain-step time beside one stochastic gradient evaluation alone (a compiled scan
   of gradient evaluations), so the sampler's overhead as a fraction of a gradient, and the part of it
   that is the step's 99 690 normal draws.

Times are the best of ``repeats`` runs, compilation excluded, on whatever machine runs the command (the
accelerator JAX uses is in the report's title). Nothing here is asserted.
"""

from __future__ import annotations

import dataclasses
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from sgbench import samplers, targets
from sgbench.base import provenance
from sgbench.base.draws import jax_draws
from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.perf import floors, native_sgld
from sgbench.bench.perf.speed_workload import JAX_DTYPE, NUM_CHAINS, SEED, gradient_evaluations, problem
from sgbench.bench.running import numpy_driver
from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.jax_driver import CompiledGrid, cached_block_size

GRID_STEP_SIZES = np.logspace(-4, np.log10(2e-2), 22)
TABLE1_CELLS = 48
BNN_HIDDEN = 280
BNN_STEPS = 200


def driver_and_floor(sampler, target, params, config: RunConfig, positions, repeats: int) -> tuple[float, float]:
    """µs per chain-step of the JAX driver's run and of its random numbers alone (both compiled first)."""
    program = CompiledGrid(sampler, target, [params], config, positions)
    program()
    driver_us = 1e6 * floors.best_seconds(program, repeats) / (config.num_chains * config.total_steps)
    draws = floors.random_numbers(sampler, target, params, config)
    draws()
    return driver_us, floors.microseconds_per_chain_step(draws, config, repeats)


def sampler_table(names, num_steps: int, numpy_steps: int, repeats: int = 3, progress=print) -> pd.DataFrame:
    """One row per sampler: µs per chain-step (JAX, NumPy), its random-number floor and the ratios."""
    jax_config = RunConfig(num_chains=NUM_CHAINS, num_steps=num_steps, seed=SEED, dtype=JAX_DTYPE)
    numpy_config = RunConfig(num_chains=NUM_CHAINS, num_steps=numpy_steps, seed=SEED, backend="numpy")
    empty = floors.empty_scan(10, jax_config)
    empty()
    empty_us = floors.microseconds_per_chain_step(empty, jax_config, repeats)
    rows = []
    for name in names:
        sampler, target, params, positions = problem(name)
        jax_us, rng_us = driver_and_floor(sampler, target, params, jax_config, positions, repeats)
        numpy_run = functools.partial(numpy_driver.run_chains, sampler, target, params, numpy_config, positions)
        numpy_us = 1e6 * floors.best_seconds(numpy_run, 1) / (NUM_CHAINS * numpy_steps)
        rows.append({"sampler": name, "gradients per step": gradient_evaluations(sampler, target, params)[1],
                     "JAX µs": jax_us, "random numbers µs": rng_us, "x rng": jax_us / rng_us,
                     "x empty scan": jax_us / empty_us, "NumPy µs": numpy_us, "NumPy / JAX": numpy_us / jax_us})
        progress(f"{name}: JAX {jax_us:.3f} µs per chain-step, {jax_us / rng_us:.2f} x its random numbers")
    table = pd.DataFrame(rows).set_index("sampler")
    table.attrs["empty scan µs"] = empty_us
    return table


def sgld_comparison(num_steps: int, numpy_steps: int, repeats: int = 3, progress=print) -> pd.DataFrame:
    """SGLD on the speed workload by each implementation; µs per chain-step and speed-up of ours (JAX)."""
    sampler, target, params, positions = problem("sgld")
    step_size = params.step_size
    jax_config = RunConfig(num_chains=NUM_CHAINS, num_steps=num_steps, seed=SEED, dtype=JAX_DTYPE)
    numpy_config = RunConfig(num_chains=NUM_CHAINS, num_steps=numpy_steps, seed=SEED, backend="numpy")
    ours = CompiledGrid(sampler, target, [params], jax_config, positions)
    draws = floors.random_numbers(sampler, target, params, jax_config)
    empty = floors.empty_scan(target.dim, jax_config)
    blackjax = native_sgld.blackjax_program(target, NUM_CHAINS, num_steps, step_size, SEED, JAX_DTYPE)
    jobs = {  # implementation -> (call, chain-steps)
        "ours, JAX driver (float32)": (ours, NUM_CHAINS * num_steps),
        "ours, NumPy reference (float64, one chain at a time)": (functools.partial(
            numpy_driver.run_chains, sampler, target, params, numpy_config, positions), NUM_CHAINS * numpy_steps),
        "vectorised NumPy loop (float32, all chains as one array)": (
            native_sgld.numpy_program(target, NUM_CHAINS, numpy_steps, step_size, SEED), NUM_CHAINS * numpy_steps),
        "blackjax sgld in lax.scan, vmapped (float32)": (blackjax, NUM_CHAINS * num_steps),
        "random numbers alone (floor)": (draws, None),
        "empty scan iteration (floor)": (empty, None),
    }
    try:
        jobs["posteriors sgld, torch loop, chains as one tensor (float32)"] = (
            native_sgld.posteriors_program(target, NUM_CHAINS, numpy_steps, step_size, SEED), NUM_CHAINS * numpy_steps)
    except ImportError as error:
        progress(f"posteriors left out: {error}")
    rows = []
    for label, (call, chain_steps) in jobs.items():
        call()  # compiled (where there is anything to compile) and run once, outside the timing
        if chain_steps is None:
            us = floors.microseconds_per_chain_step(call, jax_config, repeats)
        else:
            us = 1e6 * floors.best_seconds(call, repeats if chain_steps == NUM_CHAINS * num_steps else 1) / chain_steps
        rows.append({"implementation": label, "µs per chain-step": us, "chain-steps per s": 1e6 / us})
        progress(f"{label}: {us:.3f} µs per chain-step")
    table = pd.DataFrame(rows).set_index("implementation")
    table["time / ours (JAX)"] = table["µs per chain-step"] / table["µs per chain-step"].iloc[0]
    return table


def sgld_grid(num_steps: int, progress=print) -> dict:
    """SGLD at the 22 step sizes x 10 chains x ``num_steps`` in one program; wall seconds and projection."""
    sampler, target, _, positions = problem("sgld")
    grid = [sampler.params(step_size=float(h)) for h in GRID_STEP_SIZES]
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=num_steps, seed=SEED, dtype=JAX_DTYPE,
                       block_size=cached_block_size(sampler, target, grid, NUM_CHAINS))
    start = time.perf_counter()
    program = CompiledGrid(sampler, target, grid, config, positions)
    compiled = time.perf_counter()
    traces = program()
    run = time.perf_counter() - compiled
    wall = compiled - start + run
    chain_steps = len(grid) * NUM_CHAINS * num_steps
    diverged = int(sum(np.sum(np.asarray(trace.nonfinite_steps) > 0) for trace in traces))
    progress(f"SGLD grid: {len(grid)} step sizes x {NUM_CHAINS} chains x {num_steps} steps in {wall:.1f} s")
    return {"step sizes": len(grid), "chains": NUM_CHAINS, "steps": num_steps, "compile s": compiled - start,
            "run s": run, "wall s": wall, "µs per chain-step": 1e6 * run / chain_steps,
            "chains diverged": diverged, f"projected {TABLE1_CELLS} cells, minutes": TABLE1_CELLS * wall / 60}


def bnn_overhead(num_steps: int = BNN_STEPS, repeats: int = 3, progress=print) -> dict:
    """SGLD's per-chain-step time on the ~10^5-parameter digits bnn against one stochastic gradient alone."""
    target = targets.get("bnn", task="classification", hidden=(BNN_HIDDEN, BNN_HIDDEN))
    sampler = samplers.get("sgld")
    params = sampler.params(step_size=1e-5)
    positions = target.check_positions(target.initial_position(), NUM_CHAINS)
    # one step per block: a block of 10^6 numbers per step leaves the cache (measured: 940 µs per
    # chain-step at block_size 1, 1900 at 8, 2700 at 64)
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=num_steps, seed=SEED, dtype=JAX_DTYPE, block_size=1)
    step_us, rng_us = driver_and_floor(sampler, target, params, config, positions, repeats)
    keys = jax.random.split(jax.random.key(SEED + 1), NUM_CHAINS)
    x0 = jnp.asarray(positions, JAX_DTYPE)

    def gradients(x, key):  # the same draws the driver makes for the gradient, one evaluation per step
        draws = jax_draws(key, target.draw_spec, (num_steps,), JAX_DTYPE)
        return jax.lax.scan(lambda x, draw: (x + 1e-9 * target.stochastic_grad(x, draw), None), x, draws)[0]

    compiled = jax.jit(jax.vmap(gradients)).lower(x0, keys).compile()
    call = lambda: jax.block_until_ready(compiled(x0, keys))  # noqa: E731
    call()
    gradient_us = 1e6 * floors.best_seconds(call, repeats) / (NUM_CHAINS * num_steps)
    overhead = (step_us - gradient_us) / gradient_us
    progress(f"bnn d={target.dim}: SGLD {step_us:.1f} µs per chain-step, gradient {gradient_us:.1f} µs, "
             f"overhead {100 * overhead:.1f} % (random numbers {rng_us:.1f} µs)")
    return {"parameters": target.dim, "chains": NUM_CHAINS, "steps": num_steps,
            "SGLD µs per chain-step": step_us, "one stochastic gradient µs": gradient_us,
            "random numbers µs": rng_us, "overhead, fraction of a gradient": overhead,
            "random numbers, fraction of a gradient": rng_us / gradient_us}


def figure(sampler_rows: pd.DataFrame, sgld_rows: pd.DataFrame) -> bytes:
    """PNG: µs per chain-step (log scale) of every sampler beside its random-number floor, and of every
    SGLD implementation."""
    from matplotlib.ticker import NullFormatter

    fig, (left, right) = subplots(1, 2, figsize=(12, 0.3 * max(len(sampler_rows), len(sgld_rows)) + 2))
    y = np.arange(len(sampler_rows))
    left.barh(y - 0.2, sampler_rows["JAX µs"], height=0.4, label="sampler (JAX driver)")
    left.barh(y + 0.2, sampler_rows["random numbers µs"], height=0.4, label="its random numbers alone")
    left.set_yticks(y, sampler_rows.index)
    left.invert_yaxis()
    left.set_xscale("log")
    low, high = left.get_xlim()  # a short log range: ticks at 1, 2, 5 x 10^k
    ticks = [m * 10.0**k for k in range(-4, 3) for m in (1, 2, 5) if low <= m * 10.0**k <= high]
    left.set_xticks(ticks, [f"{t:g}" for t in ticks])
    left.xaxis.set_minor_formatter(NullFormatter())
    left.set_xlabel("µs per chain-step")
    left.legend(loc="lower right", fontsize=8)
    y = np.arange(len(sgld_rows))
    right.barh(y, sgld_rows["µs per chain-step"], color="tab:green")
    right.set_yticks(y, [label.split(" (")[0] for label in sgld_rows.index], fontsize=8)
    right.invert_yaxis()
    right.set_xscale("log")
    right.set_xlabel("SGLD, µs per chain-step")
    fig.tight_layout()
    return png_bytes(fig, dpi=90)


@dataclasses.dataclass
class SpeedReport:
    """The figures of one ``sgbench speed`` run."""

    samplers: pd.DataFrame
    sgld: pd.DataFrame
    grid: dict | None
    bnn: dict | None
    machine: str

    def write(self, path) -> object:
        """The HTML page (tables and the figure) at ``path``; returns its path."""
        from sgbench.bench.html import write_page

        tables = {"SGLD on the speed workload, every implementation": self.sgld.reset_index(),
                  "Every sampler: µs per chain-step and the random-number floor "
                  f"(empty scan iteration: {self.samplers.attrs['empty scan µs']:.4f} µs)": self.samplers.reset_index()}
        if self.grid is not None:
            tables["SGLD step-size grid (one SMILE Table 1 cell)"] = pd.DataFrame([self.grid])
        if self.bnn is not None:
            tables["Sampler overhead on the digits bnn (about 10^5 parameters)"] = pd.DataFrame([self.bnn])
        return write_page(path, "sgmcmc-bench speed", self.machine, True, tables,
                          {"Per-chain-step times": figure(self.samplers, self.sgld)},
                          notes="10 chains on the 10-d icg with isotropic gradient noise (variance 256); compile "
                                "excluded; best of repeated runs. Nothing here is asserted.")


def measure(names, num_steps: int, numpy_steps: int, grid_steps: int | None, bnn: bool, repeats: int = 3,
            progress=print) -> SpeedReport:
    """All of the figures; ``grid_steps`` None or ``bnn`` False leaves those parts out."""
    return SpeedReport(
        samplers=sampler_table(names, num_steps, numpy_steps, repeats, progress),
        sgld=sgld_comparison(num_steps, numpy_steps, repeats, progress),
        grid=None if grid_steps is None else sgld_grid(grid_steps, progress),
        bnn=bnn_overhead(repeats=repeats, progress=progress) if bnn else None,
        machine=provenance.accelerator_summary())
