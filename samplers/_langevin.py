r"""What the Langevin-family samplers share: the base hyperparameters (step size, temperature,
step-size schedule) with the step size at a step of the counter held in the state, that state
(position and counter), its ``init``, the one normal vector a step draws, and the exact law of their
step on a Gaussian target (:func:`langevin_recursion`, :func:`langevin_law`; ``sgbench.samplers._linear_law``)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from sgbench.base.arguments import positive_finite
from sgbench.samplers._contract import Variate, hyperparameters
from sgbench.samplers._linear_law import LangevinStep, LinearLaw
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


def langevin_recursion(precision, step, temperature=1.0, noise_covariance=None, preconditioner=1.0):
    r"""One SGLD step (standard convention) :math:`x' = x + hG(-Px + e) + \sqrt{2hTG}\,\xi` on
    :math:`\mathcal N(0, P^{-1})` with gradient noise :math:`e \sim \mathcal N(0, V)` and a fixed
    diagonal preconditioner :math:`G` (1 for SGLD; pSGLD frozen at :math:`1/(\sqrt{\nu_0}+\varepsilon)`).

    Args:
        precision: P, (d, d).
        step: h (Welling & Teh's :math:`\epsilon` is :math:`h = \epsilon/2`).
        temperature: T.
        noise_covariance: V, (d, d); None for exact gradients (or a control variate that cancels
            additive noise).
        preconditioner: G, a number or a (d,) vector.

    Returns:
        (A, Q) with :math:`A = I - hGP`, :math:`Q = h^2 G V G + 2hT\,\mathrm{diag}(G)`.
    """
    p = np.asarray(precision, dtype=np.float64)
    d = p.shape[0]
    g = np.broadcast_to(np.asarray(preconditioner, dtype=np.float64), (d,))
    q = np.diag(2 * step * temperature * g)
    if noise_covariance is not None:
        q = q + (step**2 * g)[:, None] * np.asarray(noise_covariance) * g  # h^2 G V G, G diagonal
    return np.eye(d) - (step * g)[:, None] * p, q


def langevin_law(precision, step, temperature=1.0, noise_covariance=None, preconditioner=1.0) -> LinearLaw:
    r"""The :class:`LinearLaw` of SGLD's step :math:`x' = x + hG\hat g(x) + \sqrt{2hTG}\,\xi` on the oracle's own
    gradient: :func:`langevin_recursion`'s (A, Q), with its :class:`LangevinStep`; it reads the gradient once, at the
    current position, so it also holds under position-dependent (minibatch) noise with :math:`V = E[V(x_t)]`.

    Args:
        precision: P, (d, d).
        step: h, in the standard convention.
        temperature: T.
        noise_covariance: V, (d, d), or None for exact gradients.
        preconditioner: G, a number or a (d,) vector.

    Returns:
        the LinearLaw.
    """
    transition, covariance = langevin_recursion(precision, step, temperature, noise_covariance, preconditioner)
    return LinearLaw(transition, covariance, langevin=LangevinStep(step, temperature, preconditioner),
                     position_dependent_noise=True)
