r"""Held-out sampler ``lm_langevin``: the Leimkuhler-Matthews method (Leimkuhler & Matthews 2013, "Rational
construction of stochastic numerical methods for molecular sampling"; the high-friction limit of BAOAB), a correct
scheme of second order in the invariant law that the suite does not have, with an optional correction for the
gradient noise.

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)` drawn at
step t and kept for the next, :math:`\xi_0` drawn at the first step, :math:`\hat\beta` ``noise_estimate``):

.. math:: x_{t+1} = x_t + h\,g(x_t) + s\,(\xi_t + \xi_{t+1}), \qquad s^2 = \frac{Th}2 - \frac{h^2\hat\beta}4.

What is right: with exact gradients it is exact on every Gaussian (the ARMA(1,1) recursion :math:`x' = ax + s(\xi +
\xi')`, :math:`a = 1 - h\lambda`, has variance :math:`2s^2(1 + a)/(1 - a^2) = T/\lambda`) and of second order in the
invariant law on smooth targets. Gradient noise of variance V adds :math:`h^2V` per step, an O(h) heating (r =
:math:`hV/(2 - h\lambda)` along an eigenvector of precision :math:`\lambda`); :math:`\hat\beta = V` leaves
:math:`\lambda h^2V/(2(2 - h\lambda))`, O(:math:`h^2`). Both are consistent (the bias vanishes as :math:`h \to 0`).

Exact (``python -m tests.heldout._decisive_laws``; the augmented state :math:`(x, \xi_t)`): icg_stiff (Sigma
eigenvalues 0.25 to 4, gradient-noise variance 16) at h = 0.1: with :math:`\hat\beta` = 16, r = +0.011 to +0.094,
then +0.003 to +0.021 (h/2), +0.001 to +0.005 (h/4), under 0.0012 (h/8): O(:math:`h^2`); with :math:`\hat\beta` =
0: +0.81 to +0.89, +0.40 to +0.42, +0.20 to +0.21, +0.100 to +0.101: O(h).

Measured (``tests.heldout._decisive_measure``, chains from mu + 2(x - mu), warm-up = scored steps): icg_stiff at h =
0.1 (256 chains, 8000 steps): :math:`\hat\beta` = 16: +0.014, +0.034, +0.058, +0.096 (SE 0.003 to 0.007);
:math:`\hat\beta` = 0: +0.83 to +0.90 (SE 0.006 to 0.012). gmm (gradient noise 2, :math:`\hat\beta` = 2, 128
chains; mixture coordinates, then the normal one) at h = 0.3: +0.036, +0.039, +0.050 (SE 0.001 to 0.003); h = 0.15
(16 000 steps): +0.005, +0.004, +0.015; h = 0.075 (32 000): -0.001, +0.002, +0.005: about :math:`h^2`; at h = 0.1:
under 0.008.

Verdict: PASSED without a claim (it claims no suite sampler) wherever the budget resolves the ladder: its error
vanishes with the step, as :math:`h^2` with the noise correction, as h without. Never FAILED.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sgbench import samplers
from sgbench.base.arguments import finite, positive_finite
from tests.heldout._langevin import both_backends


@samplers.hyperparameters
class Params:
    """``step_size`` h > 0, ``temperature`` T > 0 (default 1), ``noise_estimate`` beta >= 0 (default 0), the
    gradient-noise variance per coordinate, with ``T h / 2 - h^2 beta / 4 >= 0``."""

    step_size: float
    temperature: float = 1.0
    noise_estimate: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "step_size", positive_finite("step_size", self.step_size))
        object.__setattr__(self, "temperature", positive_finite("temperature", self.temperature))
        beta = finite("noise_estimate", self.noise_estimate)
        if beta < 0:
            raise ValueError(f"noise_estimate must be a finite number >= 0, got {self.noise_estimate!r}")
        object.__setattr__(self, "noise_estimate", beta)
        if noise_scale_squared(self) < 0:
            raise ValueError("noise_estimate is too large: temperature * step_size / 2 - step_size**2 * "
                             f"noise_estimate / 4 must be >= 0, got {noise_scale_squared(self)!r}")


def noise_scale_squared(params):
    """s^2 = T h / 2 - h^2 beta / 4: each of the two normals' variance in the step."""
    h = params.step_size
    return params.temperature * h / 2 - h**2 * params.noise_estimate / 4


class State(NamedTuple):
    position: Any
    previous: Any  # the normal drawn at the previous step (xi_n)
    step: Any


def init(position, params):
    return State(position, 0 * position, 0)


def draw_spec(dim, params):
    return {"noise": samplers.Variate("normal", (dim,)), "first": samplers.Variate("normal", (dim,))}


def step(xp, state, grad_fn, draws, params):
    h = params.step_size
    previous = xp.where(state.step == 0, draws["first"], state.previous)  # xi_0 at the first step
    noise = draws["noise"]
    position = state.position + h * grad_fn(state.position) + xp.sqrt(noise_scale_squared(params)) * (
        previous + noise)
    return State(position, noise, state.step + 1), samplers.Info(num_grad_evals=1)


reference_step, optimized_step = both_backends(step)

SAMPLER = samplers.Sampler.from_namespace(
    "lm_langevin", "Leimkuhler & Matthews (2013), the BAOAB limit method; held out", globals())
