r"""Held-out sampler ``sghmc_refresh_mass``: Chen et al. (2014) SGHMC (Chen form, semi-implicit Euler, the
suite's ``sghmc`` defaults and names) with a momentum refresh every L steps that draws the momentum with mass 1.5:
an order-one bug.

Update (Chen form: :math:`v` the momentum in position units, step :math:`h`, per-step friction :math:`\alpha`,
:math:`\hat\beta` ``noise_estimate``, :math:`\xi_t, \zeta_t \sim \mathcal N(0, I)`; the momentum starts at 0):

.. math:: v_t \leftarrow \sqrt{1.5\,hT}\,\zeta_t \ \text{ if } t \equiv 0 \pmod L, \qquad
          \theta_{t+1} = \theta_t + v_t, \qquad
          v_{t+1} = v_t + h\,g(\theta_{t+1}) - \alpha v_t + \sqrt{h(2\alpha T - h\hat\beta)}\,\xi_t.

What is wrong: the momentum's stationary law is :math:`N(0, hT)` (the suite's refresh, ``refresh_variance``); a
refresh from :math:`N(0, 1.5hT)` kicks the chain with kinetic energy of temperature 1.5 T every L steps. Nothing
else differs from the suite's ``sghmc`` with ``refresh_every`` L.

Exact (``python -m tests.heldout._decisive_laws``: the periodic recursion of (theta, v), its cycle's fixed point,
averaged over the L recorded phases): icg at h = 0.01, friction 0.1, L = 10: r = +0.388 to +0.407; the suite's
(refresh :math:`N(0, hT)`): +0.102 to +0.109, relative difference +0.259 to +0.269. At h/2, h/4, h/8 (friction
fixed): +0.379 to +0.389, +0.375 to +0.380, +0.373 to +0.375 (the suite's +0.084 to +0.087, +0.075 to +0.077, +0.071
to +0.072). Order one; note that the suite's own chain with a refresh every L steps also keeps an error as h -> 0
at fixed L and per-step friction (+0.07 here): with a refresh the momentum's Euler friction is an O(1)
discretisation whose error the refresh passes to the positions.

Measured (``tests.heldout._decisive_measure``, icg, 256 chains, 8000 steps after 8000, from mu + 2(x - mu)): h =
0.01, friction 0.1, L = 10: +0.398 to +0.412 (SE 0.006 to 0.010); the suite's ``sghmc`` at the same settings: +0.111
to +0.112 (SE 0.005 to 0.008).

Verdict: FAILED claiming ``sghmc`` with the same hyperparameters (+0.26 relative to the reference, held to truth by
its exact law on icg); FAILED without a claim too (its error tends to +0.37, not 0).
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.base.arguments import finite, integer_at_least, positive_finite
from tests.heldout._langevin import MomentumState, both_backends, momentum_init  # noqa: F401

REFRESH_MASS = 1.5  # the bug: the refresh draws v ~ N(0, 1.5 h T), the stationary law's N(0, h T) with mass 1.5


@samplers.hyperparameters
class Params:
    """``step_size`` h > 0, per-step ``friction`` alpha in (0, 2) (default 0.1), ``noise_estimate`` beta >= 0
    (default 0) with 2 alpha T - h beta >= 0, ``temperature`` T > 0 (default 1), ``refresh_every`` L >= 1 (a
    compile-time constant, default 10)."""

    step_size: float
    friction: float = 0.1
    noise_estimate: float = 0.0
    temperature: float = 1.0
    refresh_every: int = samplers.static_field(10)

    def __post_init__(self):
        object.__setattr__(self, "step_size", positive_finite("step_size", self.step_size))
        object.__setattr__(self, "friction", positive_finite("friction", self.friction))
        object.__setattr__(self, "temperature", positive_finite("temperature", self.temperature))
        integer_at_least("refresh_every", self.refresh_every, 1)
        beta = finite("noise_estimate", self.noise_estimate)
        if beta < 0:
            raise ValueError(f"noise_estimate must be a finite number >= 0, got {self.noise_estimate!r}")
        object.__setattr__(self, "noise_estimate", beta)
        if not 0 < self.friction < 2:
            raise ValueError(f"friction (the per-step friction) must lie in (0, 2), got {self.friction!r}")
        if 2 * self.friction * self.temperature - self.step_size * beta < 0:
            raise ValueError("noise_estimate is too large: 2 * friction * temperature - step_size * noise_estimate "
                             "must be >= 0")


State, init = MomentumState, momentum_init


def draw_spec(dim, params):
    return {"noise": samplers.Variate("normal", (dim,)), "refresh": samplers.Variate("normal", (dim,))}


def step(xp, state, grad_fn, draws, params):
    h, alpha, temperature = params.step_size, params.friction, params.temperature
    refreshed = xp.sqrt(REFRESH_MASS * h * temperature) * draws["refresh"]
    momentum = xp.where(state.step % params.refresh_every == 0, refreshed, state.momentum)
    position = state.position + momentum
    noise = xp.sqrt(h * (2 * alpha * temperature - h * params.noise_estimate)) * draws["noise"]
    momentum = momentum + h * grad_fn(position) - alpha * momentum + noise
    return State(position, momentum, state.step + 1), samplers.Info(num_grad_evals=1)


reference_step, optimized_step = both_backends(step)

SAMPLER = samplers.Sampler.from_namespace(
    "sghmc_refresh_mass", "held-out bug: Chen et al. (2014) SGHMC whose refresh draws the momentum with mass 1.5",
    globals())
