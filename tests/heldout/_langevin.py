"""What the held-out SGLD-family samplers share: ``Params`` (``step_size``, ``temperature``), ``State``
(``position``, ``step``), ``init`` (and the SGHMC family's ``MomentumState`` and ``momentum_init``),
``draw_spec`` (one standard-normal variate of the position's shape), and :func:`langevin_steps`, which makes a
module's ``reference_step`` (NumPy) and ``optimized_step`` (JAX) from its update rule written once against an
array namespace ``xp``. :func:`both_backends` does the same for a whole step (the SGHMC modules, whose state has a
momentum).

A module imports the parts it shares into its namespace, so that ``samplers.Sampler.from_namespace(...,
globals())`` finds them, and defines its own update rule, docstring and ``SAMPLER``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.base.arguments import positive_finite


@samplers.hyperparameters
class Params:
    """``step_size`` h > 0, ``temperature`` T > 0 (default 1)."""

    step_size: float
    temperature: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "step_size", positive_finite("step_size", self.step_size))
        object.__setattr__(self, "temperature", positive_finite("temperature", self.temperature))


class State(NamedTuple):
    position: Any
    step: Any


def init(position, params):
    return State(position, 0)


class MomentumState(NamedTuple):
    """The state of the SGHMC-family held-out samplers: position, momentum (0 at the start), step."""

    position: Any
    momentum: Any
    step: Any


def momentum_init(position, params):
    return MomentumState(position, 0 * position, 0)


def draw_spec(dim, params):
    return {"noise": samplers.Variate("normal", (dim,))}


def step_and_temperature(params):
    """``(step_size, temperature)`` of :class:`Params`: what :func:`langevin_steps` passes an update rule."""
    return params.step_size, params.temperature


def both_backends(step, module=None):
    """The contract's two steps from one step written against an array namespace.

    Args:
        step: ``step(xp, state, grad_fn, draws, params) -> (State, Info)``, using ``xp`` for every array function.
        module: the module the steps belong to (default ``step``'s), as their ``__module__``.

    Returns:
        ``(reference_step, optimized_step)``: ``step`` with ``xp`` numpy and jax.numpy.
    """

    def reference_step(state, grad_fn, draws, params):
        return step(np, state, grad_fn, draws, params)

    def optimized_step(state, grad_fn, draws, params):
        return step(jnp, state, grad_fn, draws, params)

    for function in (reference_step, optimized_step):
        function.__module__ = step.__module__ if module is None else module
        function.__qualname__ = function.__name__
    return reference_step, optimized_step


def langevin_steps(update, hyperparameters=step_and_temperature, num_grad_evals=1):
    """``reference_step`` and ``optimized_step`` of a sampler with :class:`State` whose new position is
    ``update(xp, x, grad_fn, noise, *hyperparameters(params))``.

    Args:
        update: the update rule: ``x`` the position, ``grad_fn`` the step's gradient oracle, ``noise`` the
            step's standard-normal draw, then the hyperparameters; returns the new position.
        hyperparameters: ``params`` -> the tuple of hyperparameters ``update`` takes (default
            :func:`step_and_temperature`; a module with other names or more hyperparameters gives its own).
        num_grad_evals: the gradient evaluations ``update`` makes.

    Returns:
        ``(reference_step, optimized_step)``, belonging to ``update``'s module.
    """

    def step(xp, state, grad_fn, draws, params):
        position = update(xp, state.position, grad_fn, draws["noise"], *hyperparameters(params))
        return State(position, state.step + 1), samplers.Info(num_grad_evals=num_grad_evals)

    return both_backends(step, update.__module__)
