r"""Held-out sampler ``sghmc_independent``: SGHMC written from Chen, Fox & Guestrin (2014), "Stochastic
Gradient Hamiltonian Monte Carlo", eq. (15) and section 3.3, with the suite's ``sghmc`` hyperparameter names
and conventions (``step_size``, ``friction``, ``noise_estimate``, ``temperature``, ``form``; Euler only, no
schedule, no momentum refresh), so that it can claim the suite's ``sghmc``.

:math:`g` is the oracle's stochastic gradient of :math:`\log p` (:math:`= -\nabla\tilde U`),
:math:`\xi_t \sim \mathcal N(0, I)`, :math:`T` the temperature, :math:`\hat\beta` ``noise_estimate`` (the
variance of the gradient noise; Chen's :math:`\hat B = \tfrac12\epsilon\hat\beta`).

- ``form="chen"`` (default): section 3.3's momentum form, :math:`v = \epsilon M^{-1} r`, step size
  :math:`h = \epsilon^2 M^{-1}` (``step_size``), per-step friction :math:`\alpha = \epsilon M^{-1} C`
  (``friction``, default 0.01):

  .. math:: \theta_{t+1} = \theta_t + v_t, \qquad
            v_{t+1} = v_t + h\,g(\theta_{t+1}) - \alpha v_t + \sqrt{h(2\alpha T - h\hat\beta)}\,\xi_t;

- ``form="practical"``: eq. (15) itself with :math:`M = I`, step :math:`\epsilon` (``step_size``), friction
  rate :math:`C` (``friction``, default 100):

  .. math:: \theta_{t+1} = \theta_t + \epsilon r_t, \qquad
            r_{t+1} = r_t + \epsilon\,g(\theta_{t+1}) - \epsilon C r_t
                      + \sqrt{\epsilon(2CT - \epsilon\hat\beta)}\,\xi_t.

  The suite's practical form (PX Algorithm 3) kicks the momentum first and moves the position with the new
  momentum; its positions follow the same recursion as these (its momentum after step t is this one's before
  step t + 1, up to sign), so the position chains have the same law (not the same path: the first step
  differs, both starting at rest).

Both momenta start at 0. What is right: everything; the per-step friction must lie in (0, 2) and the injected
variance be >= 0, as the suite requires. It is meant to run at a friction far from 1: ``form="chen"`` with
``friction`` 0.1 (step 0.01) and ``form="practical"`` with ``friction`` 10 (step 0.05), where an error in how
friction enters the noise or the drift would show.

Measured (``bench.run``, from exact draws, 4000 steps; r the relative second-moment error per coordinate):
in the Chen form the chain is the suite's ``sghmc`` draw for draw (the same moments to every printed digit;
friction 0.1, step 0.01, icg4: r 0.085 to 0.11, its heating by the gradient noise). In the practical form,
friction 10, step 0.05, 512 chains each, the two agree within 1.3 standard errors per coordinate (icg4: r
-0.002 to 0.023 here, 0.002 to 0.023 there, SE 0.012 to 0.019; linreg: 0.200 and 0.299 against 0.193 and
0.301, SE 0.004). With ``noise_estimate`` 2 (the icg4 noise variance), friction 0.1, step 0.01, r is within
0.007 of 0 on icg4 (SE 0.004 to 0.005).

Verdict: PASSED (or INCONCLUSIVE where mixing is too slow for the steps given) when it claims ``sghmc`` with
the same hyperparameters, never FAILED: it has the reference's law, its bias included (at
``noise_estimate`` 0 the gradient noise heats it by about :math:`h\beta/(2\alpha)`, which the reference
shares).
"""

from __future__ import annotations

from typing import Any

from sgbench import samplers
from sgbench.base.arguments import finite, one_of, positive_finite
from tests.heldout._langevin import MomentumState, both_backends, draw_spec, momentum_init  # noqa: F401

FORMS = ("chen", "practical")
DEFAULT_FRICTION = {"chen": 0.01, "practical": 100.0}


@samplers.hyperparameters
class Params:
    """``step_size`` > 0; ``friction`` > 0 (per step in the Chen form, a rate in the practical form; default
    0.01 or 100); ``noise_estimate`` >= 0 (default 0); ``temperature`` > 0 (default 1); ``form`` in
    ``FORMS``. The per-step friction (``friction``, or ``friction * step_size``) must lie in (0, 2) and
    ``2 * friction * temperature - step_size * noise_estimate`` must be >= 0."""

    step_size: float
    friction: Any = None
    noise_estimate: float = 0.0
    temperature: float = 1.0
    form: str = samplers.static_field("chen")

    def __post_init__(self):
        one_of("form", self.form, FORMS)
        friction = DEFAULT_FRICTION[self.form] if self.friction is None else self.friction
        object.__setattr__(self, "step_size", positive_finite("step_size", self.step_size))
        object.__setattr__(self, "friction", positive_finite("friction", friction))
        object.__setattr__(self, "temperature", positive_finite("temperature", self.temperature))
        beta = finite("noise_estimate", self.noise_estimate)
        if beta < 0:
            raise ValueError(f"noise_estimate must be a finite number >= 0, got {self.noise_estimate!r}")
        object.__setattr__(self, "noise_estimate", beta)
        per_step = self.friction * (self.step_size if self.form == "practical" else 1.0)
        if not 0 < per_step < 2:
            name = "friction * step_size" if self.form == "practical" else "friction"
            raise ValueError(f"{name} (the per-step friction) must lie in (0, 2), got {per_step!r}")
        if 2 * self.friction * self.temperature - self.step_size * beta < 0:
            raise ValueError("noise_estimate is too large: 2 * friction * temperature - step_size * noise_estimate "
                             f"must be >= 0, got {2 * self.friction * self.temperature - self.step_size * beta!r}")


State, init = MomentumState, momentum_init


def noise_variance(params):
    """The variance injected into the momentum per step: h(2 alpha T - h beta) (Chen form) or
    epsilon(2 C T - epsilon beta) (practical form), the same expression in both parametrisations."""
    h = params.step_size
    return h * (2 * params.friction * params.temperature - h * params.noise_estimate)


def steps(noise_factor=1.0, module=None):
    """``reference_step`` and ``optimized_step`` with the injected variance ``noise_factor * noise_variance``
    (1: this sampler's; another factor is a bug) belonging to ``module`` (default this one)."""

    def step(xp, state, grad_fn, draws, params):
        h, friction = params.step_size, params.friction
        noise = xp.sqrt(noise_factor * noise_variance(params)) * draws["noise"]
        if params.form == "chen":  # section 3.3
            theta = state.position + state.momentum
            momentum = state.momentum + h * grad_fn(theta) - friction * state.momentum + noise
        else:  # eq. (15), M = I
            theta = state.position + h * state.momentum
            momentum = state.momentum + h * grad_fn(theta) - h * friction * state.momentum + noise
        return State(theta, momentum, state.step + 1), samplers.Info(num_grad_evals=1)

    return both_backends(step, module)


reference_step, optimized_step = steps()

SAMPLER = samplers.Sampler.from_namespace(
    "sghmc_independent", "Chen, Fox & Guestrin (2014), eq. (15) and section 3.3; held out", globals())
