r"""Stochastic gradient Langevin dynamics (SGLD).

Welling & Teh (2011); in the form of eq. (7) of the SGLRW paper
(``seeds/002_f49e4b1a9ef6e505.txt``), written for the log density :math:`\log p = -U`:

.. math:: x_{t+1} = x_t + h\,\widehat{\nabla \log p}(x_t) + \sqrt{2 h T}\,\xi_t,
          \qquad \xi_t \sim \mathcal N(0, I),

with step size :math:`h` and temperature :math:`T` (1 is the posterior).

Discretisation convention: ``convention="standard"`` (default) is the equation above, with
``step_size`` = :math:`h`. ``convention="welling_teh"`` reads ``step_size`` as the
:math:`\epsilon` of Welling & Teh's eq. (4), :math:`x + \tfrac{\epsilon}{2}\nabla\log p +
\sqrt{\epsilon T}\,\xi`, i.e. the same update with :math:`h = \epsilon/2`.

One gradient evaluation per step. On a Gaussian target with a constant step the update is a
linear Gaussian recursion whose stationary covariance solves a discrete Lyapunov equation
(``tests/test_sgld_stationary_law.py``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

import samplers
from samplers._checks import one_of, positive_finite

CONVENTIONS = ("standard", "welling_teh")


@samplers.hyperparameters
class Params:
    """``step_size`` > 0, ``temperature`` > 0, ``convention`` in ``CONVENTIONS``."""

    step_size: float
    temperature: float = 1.0
    convention: str = samplers.static_field("standard")

    def __post_init__(self):
        object.__setattr__(self, "step_size", positive_finite("step_size", self.step_size))
        object.__setattr__(self, "temperature", positive_finite("temperature", self.temperature))
        one_of("convention", self.convention, CONVENTIONS)


class State(NamedTuple):
    position: Any
    step: Any


def init(position, params: Params) -> State:
    return State(position=position, step=0)


def draw_spec(dim: int) -> dict[str, samplers.Variate]:
    return {"noise": samplers.Variate("normal", (dim,))}


def drift_step(params: Params):
    """The :math:`h` of the standard convention for either convention."""
    return params.step_size / 2 if params.convention == "welling_teh" else params.step_size


def reference_step(state: State, grad_fn, draws, params: Params):
    h = drift_step(params)
    grad = grad_fn(state.position)
    position = state.position + h * grad + np.sqrt(2 * h * params.temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


def optimized_step(state: State, grad_fn, draws, params: Params):
    h = drift_step(params)
    grad = grad_fn(state.position)
    position = state.position + h * grad + jnp.sqrt(2 * h * params.temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


SAMPLER = samplers.register(
    samplers.Sampler(
        name="sgld",
        citation="Welling & Teh (2011); eq. (7) of the SGLRW paper",
        Params=Params,
        State=State,
        init=init,
        reference_step=reference_step,
        optimized_step=optimized_step,
        draw_spec=draw_spec,
    )
)
