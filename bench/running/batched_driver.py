"""The batched driver: float64, all chains in one eager step, a Python loop over steps.

For a sampler whose step is elementwise over a leading chain axis (an adapter with ``backend="batched"``,
``sgbench.bench.adapters._adapted``: posteriors' SGLD, SGLRW, SGHMC and BAOA, whose torch updates map every
coordinate on its own). Each step calls the sampler's ``reference_step`` once, on the states of all chains, with:

- the draws of ``draw_spec`` with a leading chain axis, from one generator seeded by the run's seed (a sampler whose
  randomness comes from its library's generator seeds it from them);
- an oracle whose value and gradient at positions of shape (chains, dim) are each chain's own, from its own draw of
  the target's randomness (``jax.vmap`` of the target's stochastic log density, compiled once per run).

The statistics are the NumPy driver's (``numpy_driver``), per chain; a chain that diverged does not touch the others.
Gradient evaluations are counted per call of the oracle, one per chain.
"""

from __future__ import annotations

import time

import jax
import numpy as np

from sgbench.base.draws import numpy_draws
from sgbench.base.float64 import in_float64_mode
from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.trace import ChainTrace, Checkpoints
from sgbench.reference.metrics import Moments

PROGRESS_EVERY = 100  # steps between progress reports


class ChainsOracle:
    """The log density of ``target`` at one step for a batch of chains: chain ``c`` sees its own ``draw[c]``
    (None, at the start: the exact density). ``evaluations`` counts the evaluations (each one of every chain)."""

    def __init__(self, target):
        self.target, self.draw, self.evaluations = target, None, 0
        self._exact = jax.jit(jax.vmap(lambda x: (target.logdensity(x), target.grad_logdensity(x))))
        self._stochastic = jax.jit(jax.vmap(lambda x, d: (target.stochastic_logdensity(x, d),
                                                          target.stochastic_grad(x, d))))

    def value_and_grad(self, x):
        """(log densities (chains,), gradients (chains, dim)) at positions ``x`` (chains, dim): one evaluation."""
        self.evaluations += 1
        value, gradient = self._exact(x) if self.draw is None else self._stochastic(x, self.draw)
        return np.asarray(value), np.asarray(gradient)

    def __call__(self, x):
        """The gradients at positions ``x`` (chains, dim)."""
        return self.value_and_grad(x)[1]


@in_float64_mode
def run_chains(sampler, target, params, config: RunConfig, initial_positions: np.ndarray, progress=None) -> ChainTrace:
    """Run ``config.num_chains`` chains of ``sampler`` with one ``params`` on ``target``, all at once (module
    docstring); ``progress(n)`` (if given) is told the chain-steps done, every ``PROGRESS_EVERY`` steps."""
    start = time.perf_counter()
    rng = np.random.default_rng(config.seed)
    chains, dim = config.num_chains, target.dim
    oracle = ChainsOracle(target)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # divergence is counted, not warned about
        state = sampler.start(np.array(initial_positions, dtype=np.float64), params, oracle)
        moments = Moments.empty((chains,), dim)
        samples = np.full((chains, config.num_kept, dim), np.nan) if config.keep_samples else None
        nonfinite_steps = np.zeros(chains, dtype=np.int64)
        first_nonfinite = np.full(chains, -1, dtype=np.int64)
        snapshots = []
        checkpoints = set(config.checkpoint_steps.tolist())
        for t in range(config.total_steps):
            draws = numpy_draws(rng, sampler.draw_spec(dim, params), leading=(chains,))
            oracle.draw = numpy_draws(rng, target.draw_spec, leading=(chains,))
            state, info = sampler.reference_step(state, oracle, draws, params)
            position = np.asarray(state.position)
            finite = np.all(np.isfinite(position), axis=-1)
            first_nonfinite = np.where(~finite & (first_nonfinite < 0), t, first_nonfinite)
            nonfinite_steps += ~finite
            kept = bool(config.is_kept(t)) and bool(info.is_sample)
            moments = moments.update(position, finite & kept)
            if samples is not None and bool(config.is_sampled(t)) and bool(info.is_sample):
                samples[:, (t - config.num_burnin) // config.sample_every] = position
            if t + 1 in checkpoints:
                snapshots.append((moments, np.full(chains, oracle.evaluations)))
            if progress is not None and ((t + 1) % PROGRESS_EVERY == 0 or t + 1 == config.total_steps):
                progress(chains * ((t % PROGRESS_EVERY) + 1))
    return ChainTrace(
        moments=moments,
        grad_evals=np.full(chains, oracle.evaluations),
        nonfinite_steps=nonfinite_steps,
        first_nonfinite_step=first_nonfinite,
        samples=samples,
        checkpoints=Checkpoints.stack(config.checkpoint_steps, snapshots, axis=1) if snapshots else None,
        compile_seconds=0.0,
        run_seconds=time.perf_counter() - start,
        final_state=type(state)(*(np.full(chains, field) if np.ndim(field) == 0 else field for field in state)),
    )
