r"""Held-out sampler ``frozen``: an SGLD step that computes its update and then returns the old position.

Update:

.. math:: x_{t+1} = x_t,

although the step evaluates the gradient :math:`g(x_t)` and consumes a normal draw :math:`\xi_t`, as SGLD's
:math:`x_t + h\,g(x_t) + \sqrt{2hT}\,\xi_t` would (the bug: the new position is computed and dropped).

What is wrong: the chain never moves. Started at exact draws of the target it keeps them forever, so at
temperature 1 its moments agree with truth as well as the starting draws do, and a check of moments
alone would pass it (measured: 512 chains of 4000 steps on icg4 from exact draws, mean error within 0.06
standard deviations and r within 0.053 of 0, all within 1.4 standard errors).

Verdict: FAILED ("does not move") on every target, with or without a claim: a sampler whose position never
changes samples nothing but its start, whatever the moments of that start.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

import samplers
from base.arguments import positive_finite


@samplers.hyperparameters
class Params:
    """``step_size`` > 0 and ``temperature`` > 0 (default 1), as SGLD's; neither changes the position."""

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


def draw_spec(dim, params):
    return {"noise": samplers.Variate("normal", (dim,))}


def reference_step(state, grad_fn, draws, params):
    grad = grad_fn(state.position)
    h, temperature = params.step_size, params.temperature
    proposed = state.position + h * grad + np.sqrt(2 * h * temperature) * draws["noise"]
    del proposed  # the bug: the update is computed, then dropped
    return State(np.array(state.position), state.step + 1), samplers.Info(num_grad_evals=1)


def optimized_step(state, grad_fn, draws, params):
    grad = grad_fn(state.position)
    h, temperature = params.step_size, params.temperature
    proposed = state.position + h * grad + jnp.sqrt(2 * h * temperature) * draws["noise"]
    del proposed
    return State(state.position, state.step + 1), samplers.Info(num_grad_evals=1)


SAMPLER = samplers.Sampler.from_namespace("frozen", "held-out bug: SGLD that returns its old position", globals())
