r"""Held-out sampler ``sgld_diverging``: SGLD with the gradient's sign flipped.

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`):

.. math:: x_{t+1} = x_t - h\,g(x_t) + \sqrt{2hT}\,\xi_t,

a descent on :math:`\log p` (an ascent on the potential :math:`-\log p`).

What is wrong: the drift points away from the mode. On a Gaussian target of precision eigenvalues
:math:`\lambda` each mode grows by :math:`1 + h\lambda` per step: after 4000 steps at h = 0.01 on icg4
(:math:`\lambda` up to 2) by about :math:`e^{79}`, on the linreg preset at h = 1e-3 (:math:`\lambda` up to
29.7) by about :math:`e^{117}`; with more steps or larger ones the squares overflow float64 and the chains
count as diverged. Measured (``bench.run``, 64 chains of 4000 steps from exact draws): icg4 at h = 0.01, no
chain non-finite, r from 5e63 to 5e66; linreg at h = 1e-3, none non-finite, r about 4e99; linreg at
h = 0.01 and both targets at h = 0.1, all 64 chains diverged.

Verdict: FAILED on every target, with divergence counts where the chains overflowed, or as disagreeing
with truth and with the suite's ``sgld`` where they have not yet; never a crash.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

import samplers
from base.arguments import positive_finite


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


def draw_spec(dim, params):
    return {"noise": samplers.Variate("normal", (dim,))}


def reference_step(state, grad_fn, draws, params):
    grad = grad_fn(state.position)
    h, temperature = params.step_size, params.temperature
    position = state.position - h * grad + np.sqrt(2 * h * temperature) * draws["noise"]  # the bug: - h g
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


def optimized_step(state, grad_fn, draws, params):
    grad = grad_fn(state.position)
    h, temperature = params.step_size, params.temperature
    position = state.position - h * grad + jnp.sqrt(2 * h * temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


SAMPLER = samplers.Sampler.from_namespace(
    "sgld_diverging", "held-out bug: SGLD with the gradient's sign flipped", globals())
