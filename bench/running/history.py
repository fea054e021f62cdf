"""Per-step records of a sampler's state: what the drivers stream away (they keep moments of the
positions only), for the samplers whose state holds adapted quantities worth a plot: SMILE's step
size, Gamma fit and guardrail resets (SMILE appendix E.7, Figs. 8-9), a thermostat, a tuner.

The optimized step runs in one ``lax.scan`` over steps, ``vmap`` over chains, drawing each step's
variates from the chain's key folded with the step number. Memory grows with
``num_steps`` x ``num_chains`` x the recorded fields: record what you need.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from sgbench import samplers, targets as targets_registry
from sgbench.base.draws import jax_draws
from sgbench.samplers._contract import GradientOracle


def state_history(sampler, target, params: dict, *, num_steps: int, num_chains: int = 1, seed: int = 0,
                  initial_position=None, fields=None, dtype: str = "float64") -> dict[str, np.ndarray]:
    """``{field: array (num_steps, num_chains, ...)}``: the state after every step of ``num_chains``
    chains of ``sampler`` (name or Sampler) on ``target`` (name or Target); ``fields`` (default:
    all but the position) names the state fields to keep."""
    sampler = samplers.get(sampler) if isinstance(sampler, str) else sampler
    target = targets_registry.get(target) if isinstance(target, str) else target
    params = sampler.params_for(target, **params)
    fields = [f for f in sampler.State._fields if f != "position"] if fields is None else list(fields)
    unknown = sorted(set(fields) - set(sampler.State._fields))
    if unknown:
        raise ValueError(f"fields {unknown} are not fields of {sampler.name}'s state {sampler.State._fields}")
    if initial_position is None:
        initial_position = target.initial_position()
    positions = jnp.asarray(target.check_positions(initial_position, num_chains), dtype=dtype)
    spec = {"sampler": sampler.draw_spec(target.dim, params), "gradient": target.draw_spec}

    def chain(key, position):
        state = sampler.start(position, params, GradientOracle.exact(target))

        def one_step(state, step):
            draws = jax_draws(jax.random.fold_in(key, step), spec, (), dtype)
            state, _ = sampler.optimized_step(state, GradientOracle(target, draws["gradient"]), draws["sampler"],
                                              params)
            return state, {name: getattr(state, name) for name in fields}

        return jax.lax.scan(one_step, state, jnp.arange(num_steps))[1]

    keys = jax.random.split(jax.random.key(seed), num_chains)
    records = jax.jit(jax.vmap(chain, out_axes=1))(keys, positions)
    return {name: np.asarray(value) for name, value in records.items()}


def history_frame(history: dict[str, np.ndarray]) -> pd.DataFrame:
    """The scalar fields of a :func:`state_history` as a long table: one row per (step, chain)."""
    scalars = {name: value for name, value in history.items() if value.ndim == 2}
    num_steps, num_chains = next(iter(scalars.values())).shape
    index = pd.MultiIndex.from_product([range(num_steps), range(num_chains)], names=["step", "chain"])
    return pd.DataFrame({name: value.reshape(-1) for name, value in scalars.items()}, index=index)
