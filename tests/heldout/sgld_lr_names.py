r"""Held-out sampler ``sgld_lr_names``: a correct SGLD whose hyperparameters have other libraries' names.

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`),
with the step size called ``lr`` (:math:`h`) and the temperature ``temp`` (:math:`T`):

.. math:: x_{t+1} = x_t + \mathrm{lr}\,g(x_t) + \sqrt{2\,\mathrm{lr}\,\mathrm{temp}}\,\xi_t.

What is right: everything; it is the suite's ``sgld`` (standard convention) with ``step_size = lr`` and
``temperature = temp``. What is different: only the names, so a claim of ``sgld`` needs the mapping
``{"lr": "step_size", "temp": "temperature"}`` to run the reference with the same hyperparameters.

Verdict: PASSED when mapped onto ``sgld`` (same law, same bias, on shared draws even the same chain).
Without the mapping a validator cannot run the reference at its settings: bad input (or a refusal naming
the parameters), never a pass or a fail on numbers.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

import samplers
from base.arguments import positive_finite


@samplers.hyperparameters
class Params:
    """``lr`` > 0 (the step size h), ``temp`` > 0 (the temperature T, default 1)."""

    lr: float
    temp: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "lr", positive_finite("lr", self.lr))
        object.__setattr__(self, "temp", positive_finite("temp", self.temp))


class State(NamedTuple):
    position: Any
    step: Any


def init(position, params):
    return State(position, 0)


def draw_spec(dim, params):
    return {"noise": samplers.Variate("normal", (dim,))}


def reference_step(state, grad_fn, draws, params):
    grad = grad_fn(state.position)
    position = state.position + params.lr * grad + np.sqrt(2 * params.lr * params.temp) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


def optimized_step(state, grad_fn, draws, params):
    grad = grad_fn(state.position)
    position = state.position + params.lr * grad + jnp.sqrt(2 * params.lr * params.temp) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


SAMPLER = samplers.Sampler.from_namespace(
    "sgld_lr_names", "Welling & Teh (2011), standard convention, parameters named lr and temp; held out", globals())
