"""Wrappers: a sampler as its author wrote it, made a sampler of the suite's contract in a few lines.

- :func:`jax_step`: a JAX step ``step(key, state, grad_log_density, **hyperparameters) -> state``, of a position or
  of a state (any pytree holding a flat position), with an optional ``init(position, **hyperparameters)``;
- :func:`optax_pair`: an optax-style ``make(**hyperparameters) -> (init, update)`` pair that turns gradients into
  updates, ``update(gradient, state, position, key=key) -> (updates, state)``, the position moved by
  ``position + updates``.

Each returns an ``AdaptedSampler`` (``sgbench.bench.adapters``) run by the JAX driver, whose hyperparameters are the
author's keyword arguments (those without a default must be given), whose randomness is a JAX key made from the
suite's seeded draws (one per step: runs are reproducible from ``--seed``), and which claims no suite sampler
unless told (``claims=``, with ``translate=`` the reference's hyperparameters). The temperature, if the author's
function has one, is the hyperparameter named ``temperature`` or the one ``temperature=`` names. How to use them:
docs/quickstart.md.
"""

from sgbench.bench.wrappers.jax_step import jax_step
from sgbench.bench.wrappers.optax_pair import optax_pair

__all__ = ["jax_step", "optax_pair"]
