"""What the Langevin-family samplers share: the base hyperparameters (step size, temperature,
step-size schedule) with the step size at a step of the counter held in the state, that state
(position and counter), its ``init`` and the one normal vector a step draws."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from sgbench.base.arguments import positive_finite
from sgbench.samplers._contract import Variate, hyperparameters
from sgbench.samplers.schedules import Constant, as_schedule


@hyperparameters
class LangevinParams:
    """``step_size`` > 0 (the base :math:`h` of the schedule), ``temperature`` > 0 (1 is the
    posterior; :math:`T < 1` the cold posteriors :math:`p^{1/T}` of the PX paper, section 5.2.2),
    ``schedule``: a ``sgbench.samplers.schedules`` schedule, its name, or ``{"kind": name, **fields}``."""

    step_size: float
    temperature: float = 1.0
    schedule: Any = Constant()

    def __post_init__(self):
        object.__setattr__(self, "step_size", positive_finite("step_size", self.step_size))
        object.__setattr__(self, "temperature", positive_finite("temperature", self.temperature))
        object.__setattr__(self, "schedule", as_schedule(self.schedule))

    def step_size_at(self, step, xp=np):
        """:math:`h_t`: the schedule at step ``step`` of the base step size.

        Args:
            step: the step counter t (a state's ``step``).
            xp: ``numpy`` or ``jax.numpy``, the array library of the schedule's arithmetic.

        Returns:
            the step size at step t, a number or a 0-d array.
        """
        return self.schedule(self.step_size, step, xp)


class State(NamedTuple):
    """The state of a Langevin-family chain (SGLD and its variants).

    Attributes:
        position: the chain's position, shape (dim,).
        step: the step counter t, from which the schedule reads the step size.
    """

    position: Any
    step: Any


def init(position, params) -> State:
    """The chain at ``position`` with its step counter at 0.

    Args:
        position: the chain's starting point, shape (dim,).
        params: validated Params (not read).

    Returns:
        the chain's State.
    """
    return State(position=position, step=0)


def draw_spec(dim: int, params=None) -> dict[str, Variate]:
    """The variates of one step: one standard normal vector, ``noise``.

    Args:
        dim: the target's dimension.
        params: validated Params (not read).

    Returns:
        ``{"noise": Variate("normal", (dim,))}``.
    """
    return {"noise": Variate("normal", (dim,))}
