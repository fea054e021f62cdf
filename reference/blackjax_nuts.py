"""NUTS with BlackJAX (Cabezas et al. 2024, "BlackJAX: composable Bayesian inference in JAX"), the
cross-check of ``sgbench.reference.nuts``: Stan-style window adaptation of the step size and a diagonal
mass matrix per chain, then NUTS; chains are vmapped, draws collected with ``lax.scan``."""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.base import provenance
from sgbench.base.arguments import integer_at_least
from sgbench.base.float64 import in_float64_mode
from sgbench.reference.nuts_result import NutsResult, initial_positions


@in_float64_mode
def run_blackjax(target, num_chains: int = 4, num_warmup: int = 1000, num_draws: int = 1000, seed: int = 0,
                 target_accept: float = 0.8, progress: bool = False) -> NutsResult:
    """Same arguments and result as :func:`sgbench.reference.nuts.run_numpyro` (``progress`` is ignored)."""
    import blackjax

    num_chains = integer_at_least("num_chains", num_chains, 1)
    num_warmup = integer_at_least("num_warmup", num_warmup, 1)
    num_draws = integer_at_least("num_draws", num_draws, 1)
    logdensity = target.logdensity

    def one_chain(key, position):
        warm_key, draw_key = jax.random.split(key)
        adaptation = blackjax.window_adaptation(blackjax.nuts, logdensity, target_acceptance_rate=target_accept)
        (state, parameters), _ = adaptation.run(warm_key, position, num_steps=num_warmup)
        step = blackjax.nuts(logdensity, **parameters).step

        def body(state, key):
            state, info = step(key, state)
            return state, (state.position, info.is_divergent, info.energy)

        _, kept = jax.lax.scan(body, state, jax.random.split(draw_key, num_draws))
        return kept

    keys = jax.random.split(jax.random.key(seed), num_chains)
    start = time.perf_counter()
    draws, divergent, energy = jax.block_until_ready(
        jax.jit(jax.vmap(one_chain))(keys, jnp.asarray(initial_positions(target, num_chains, seed))))
    seconds = time.perf_counter() - start
    return NutsResult(np.asarray(draws, dtype=np.float64), np.asarray(divergent, dtype=bool),
                      np.asarray(energy, dtype=np.float64), seconds, "blackjax", provenance.library_version("blackjax"))
