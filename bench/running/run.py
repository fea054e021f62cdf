"""``bench.run`` and ``bench.run_grid``: run a sampler on a target and score it against truth."""

from __future__ import annotations

import dataclasses

import jax

from sgbench import samplers, targets
from sgbench.base.float64 import in_float64_mode
from sgbench.bench.running import batched_driver, jax_driver, numpy_driver
from sgbench.bench.running.config import RunConfig, dividing_block_size
from sgbench.bench.running.result import RunResult, params_dict
from sgbench.bench.running.scoring import score, score_predictions


def _resolve(sampler, target, target_params):
    """The Sampler and Target named or given; TypeError naming the argument that is neither."""
    sampler = samplers.get(sampler) if isinstance(sampler, str) else sampler
    if not isinstance(sampler, samplers.Sampler):
        raise TypeError(f"sampler must be a registered name ({', '.join(samplers.names()[:4])}, ...) or a "
                        f"samplers.Sampler, got {type(sampler).__name__} {sampler!r}")
    if isinstance(target, str):
        target = targets.get(target, **(target_params or {}))
    elif not isinstance(target, targets.Target):
        raise TypeError(f"target must be a registered name ({', '.join(targets.names()[:4])}, ...) or a "
                        f"targets.Target, got {type(target).__name__} {target!r}")
    elif target_params:
        raise ValueError("target_params is only accepted with a target name, not a Target object")
    return sampler, target


def _as_params(sampler, target, params):
    if isinstance(params, dict):
        return sampler.params_for(target, **params)
    if not isinstance(params, sampler.Params):
        raise TypeError(f"params must be a dict or {sampler.name}.Params, got {type(params).__name__}")
    return params


@in_float64_mode
def run_grid(sampler, target, *, params_grid, num_chains=10, num_steps=10_000, seed=0,
             backend="jax", target_params=None, initial_position=None, progress=None, devices=None,
             **config) -> list[RunResult]:
    """Run ``sampler`` (name or Sampler) on ``target`` (name or Target) for every element of
    ``params_grid`` (dicts or Params differing only in numeric fields); one result each.

    The JAX backend runs the whole grid in one compiled, vmapped call. ``initial_position``
    (shape (dim,) or (num_chains, dim)) defaults to the sampler's own starting points where it
    has them (MILE's deep ensemble), else to the target's. ``progress(n)``, if given, is
    called as chain-steps complete (``n`` at a time). ``devices``: the JAX backend splits the chains over up
    to this many local devices (None: all of them; ``sgbench.bench.running.sharding``; the numbers do not depend on
    it). Further keyword arguments are
    :class:`sgbench.bench.running.config.RunConfig` fields (num_burnin, thin, dtype, keep_samples, block_size).
    It runs in JAX's 64-bit mode (``sgbench.base.float64``), so the numbers do not depend on the caller's setting.
    """
    sampler, target = _resolve(sampler, target, target_params)
    grid = [_as_params(sampler, target, p) for p in params_grid]
    if not grid:
        raise ValueError("params_grid must hold at least one parameter setting")
    first = jax.tree.structure(grid[0])
    for p in grid[1:]:
        differing = [f.name for f in dataclasses.fields(p)
                     if jax.tree.structure(getattr(p, f.name)) != jax.tree.structure(getattr(grid[0], f.name))
                     or (f.name not in p.leaf_names and getattr(p, f.name) != getattr(grid[0], f.name))]
        if differing or jax.tree.structure(p) != first:
            raise ValueError("params_grid elements may differ only in numeric fields, not in " + ", ".join(differing))
    if backend == "batched" and getattr(sampler, "backend", None) != "batched":
        raise ValueError(f"backend 'batched' runs only a sampler whose step is elementwise over chains (an adapter "
                         f"built with backend='batched'); {sampler.name} is not one: use 'jax' or 'numpy'")
    chosen = config.get("block_size") is not None
    config = RunConfig(num_chains=num_chains, num_steps=num_steps, seed=seed, backend=backend, **config)
    if backend == "jax" and not chosen:  # the default block, shrunk to what fits (many chains in high dimension)
        fits = jax_driver.largest_block_size(sampler, target, grid, num_chains)
        if config.block_size > fits:
            config = dataclasses.replace(config, block_size=dividing_block_size(config.total_steps, most=fits))
    if initial_position is None:
        initial_position = (target.initial_position() if sampler.initial_positions is None
                            else sampler.initial_positions(target, num_chains, seed))
    positions = target.check_positions(initial_position, num_chains)
    if backend == "jax":
        traces = jax_driver.run_grid(sampler, target, grid, config, positions, progress, devices)
    else:
        driver = numpy_driver if backend == "numpy" else batched_driver
        traces = [driver.run_chains(sampler, target, p, config, positions, progress) for p in grid]
    results = []
    for p, trace in zip(grid, traces):
        metrics, curves = score(trace, target.truth)
        metrics.update(score_predictions(trace, target))
        results.append(RunResult(sampler=sampler.name, params=params_dict(p), target=target.name,
                                 target_params=dict(target.params), config=config, trace=trace,
                                 metrics=metrics, curves=curves))
    return results


def run(sampler, target, *, params, num_chains=10, num_steps=10_000, seed=0, backend="jax",
        target_params=None, initial_position=None, progress=None, **config) -> RunResult:
    """Run one parameter setting; see :func:`run_grid`. Returns a :class:`RunResult` with
    ``moments``, ``metrics``, ``diagnostics`` and ``timings``."""
    return run_grid(sampler, target, params_grid=[params], num_chains=num_chains, num_steps=num_steps,
                    seed=seed, backend=backend, target_params=target_params,
                    initial_position=initial_position, progress=progress, **config)[0]
