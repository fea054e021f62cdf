"""NUTS with NumPyro (Phan, Pradhan & Jankowiak 2019, "Composable effects for flexible and
accelerated probabilistic programming in NumPyro"; Hoffman & Gelman 2014) on a target's log
density: the gold-standard sampler of the stored references. Step size and a diagonal mass matrix
are adapted during warmup (Stan's windowed scheme); chains run vectorized in one program."""

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
def run_numpyro(target, num_chains: int = 4, num_warmup: int = 1000, num_draws: int = 1000, seed: int = 0,
                target_accept: float = 0.8, progress: bool = False) -> NutsResult:
    """``num_chains`` (>= 1) NUTS chains of ``num_warmup`` (>= 1) adaptation steps and ``num_draws``
    (>= 1) kept draws each on ``target.logdensity``."""
    from numpyro.infer import MCMC, NUTS

    num_chains = integer_at_least("num_chains", num_chains, 1)
    num_warmup = integer_at_least("num_warmup", num_warmup, 1)
    num_draws = integer_at_least("num_draws", num_draws, 1)
    kernel = NUTS(potential_fn=lambda x: -target.logdensity(x), target_accept_prob=target_accept)
    mcmc = MCMC(kernel, num_warmup=num_warmup, num_samples=num_draws, num_chains=num_chains,
                chain_method="vectorized", progress_bar=progress)
    start = time.perf_counter()
    init = jnp.asarray(initial_positions(target, num_chains, seed))
    mcmc.run(jax.random.key(seed), init_params=init if num_chains > 1 else init[0],
             extra_fields=("diverging", "energy"))
    draws = np.asarray(mcmc.get_samples(group_by_chain=True), dtype=np.float64)
    seconds = time.perf_counter() - start
    extra = mcmc.get_extra_fields(group_by_chain=True)
    return NutsResult(draws.reshape(num_chains, num_draws, -1),
                      np.asarray(extra["diverging"], dtype=bool).reshape(num_chains, num_draws),
                      np.asarray(extra["energy"], dtype=np.float64).reshape(num_chains, num_draws),
                      seconds, "numpyro", provenance.library_version("numpyro"))
