"""The reference driver: NumPy, float64, one chain at a time, a Python loop over steps.

Slow by design and simple enough to read against the papers; the optimized JAX driver is
checked against it. Gradient evaluations are counted by wrapping the oracle.
"""

from __future__ import annotations

import time

import numpy as np

from sgbench.base.draws import numpy_draws
from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.trace import ChainTrace, Checkpoints
from sgbench.reference.metrics import Moments
from sgbench.samplers._contract import GradientOracle


def run_chains(sampler, target, params, config: RunConfig, initial_positions: np.ndarray, progress=None) -> ChainTrace:
    """Run ``config.num_chains`` chains of ``sampler`` with one ``params`` on ``target``;
    ``progress(n)`` (if given) is told the ``n`` chain-steps of each finished chain."""
    start = time.perf_counter()
    seeds = np.random.SeedSequence(config.seed).spawn(config.num_chains)
    traces = []
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # divergence is counted, not warned about
        for c in range(config.num_chains):
            rng = np.random.default_rng(seeds[c])
            traces.append(_run_chain(sampler, target, params, config, initial_positions[c], rng))
            if progress is not None:
                progress(config.total_steps)
    trace = ChainTrace.stack(traces)
    return trace._replace(run_seconds=time.perf_counter() - start)


def _run_chain(sampler, target, params, config, position, rng) -> ChainTrace:
    calls = 0

    def count():
        nonlocal calls
        calls += 1

    state = sampler.start(np.array(position, dtype=np.float64), params, GradientOracle.exact(target, count))
    moments = Moments.empty((), target.dim)
    samples = np.full((config.num_kept, target.dim), np.nan) if config.keep_samples else None
    nonfinite_steps, first_nonfinite = 0, -1
    snapshots = []
    checkpoints = set(config.checkpoint_steps.tolist())
    for t in range(config.total_steps):
        draws = numpy_draws(rng, sampler.draw_spec(target.dim, params))
        gradient_draw = numpy_draws(rng, target.draw_spec)
        state, info = sampler.reference_step(state, GradientOracle(target, gradient_draw, count), draws, params)
        finite = bool(np.all(np.isfinite(state.position)))
        if not finite:
            nonfinite_steps += 1
            first_nonfinite = t if first_nonfinite < 0 else first_nonfinite
        kept = bool(config.is_kept(t)) and bool(info.is_sample)
        moments = moments.update(state.position, np.asarray(kept and finite))
        if samples is not None and bool(config.is_sampled(t)) and bool(info.is_sample):
            samples[(t - config.num_burnin) // config.sample_every] = state.position
        if t + 1 in checkpoints:
            snapshots.append((moments, np.asarray(calls)))
    return ChainTrace(
        moments=moments,
        grad_evals=np.asarray(calls),
        nonfinite_steps=np.asarray(nonfinite_steps),
        first_nonfinite_step=np.asarray(first_nonfinite),
        samples=samples,
        checkpoints=Checkpoints.stack(config.checkpoint_steps, snapshots, axis=0) if snapshots else None,
        compile_seconds=0.0,
        run_seconds=0.0,
        final_state=state,
    )
