r"""Scale-adapted SGHMC (SGHMC-SA).

Springenberg, Klein, Falkner & Hutter (2016), "Bayesian optimization with robust Bayesian neural
networks", NeurIPS 29, section 3 (BOHAMIANN's sampler): Chen et al.'s (2014) SGHMC with a diagonal
mass matrix :math:`M^{-1} = \mathrm{diag}(\hat V^{-1/2})` estimated during a burn-in, friction
chosen so that :math:`\epsilon M^{-1} C = \alpha I` ("momentum decay") and the gradient-noise
estimate :math:`\hat B` taken from the same :math:`\hat V`. It is the main SGHMC baseline of the
SMILE paper (``seeds/000``, section 2.2; its ResNet-18 runs use step size 0.001, momentum decay
0.05 and 5000 warm-up steps).

Source of the equations. The paper's text was not available here; the equations, their numbers
and the constants below are those of the implementations by the authors' group, which cite the
paper's equations line by line: the PyTorch ``AdaptiveSGHMC`` of ``automl/pybnn`` (comments "Eq 8",
"Eq 9 left/right", "Eq 10 left/right"), pysgmcmc's samplers (M. Freidank, same group; "Equation
10: variance of normal sample") and the Theano sampler that pysgmcmc keeps as its reference
implementation (``tests/optimizers/reference_implementation/theano_mcmc.py``). Where they differ
it is said below which one is followed.

Per coordinate (all operations elementwise), step :math:`t = 0, 1, \dots` with the stochastic
gradient of the log density :math:`\hat g_t = \widehat{\nabla\log p}(\theta_t) = -\nabla\tilde U(\theta_t)`,
step size :math:`\epsilon_t` (the schedule at step :math:`t`), momentum decay :math:`\alpha`,
temperature :math:`T`, burn-in length :math:`B` and :math:`\xi_t \sim \mathcal N(0, I)`:

.. math::
    M^{-1}_t = 1 / \big(\sqrt{\hat V_t + \delta} + \delta\big)
    \quad\text{(the preconditioner } \hat V^{-1/2}\text{, from } \hat V \text{ before this step's update)},

    \text{burn-in steps } (t < B)\text{:}\quad r_t = 1/(\tau_t + 1),\qquad
    \tau_{t+1} = 1 + \tau_t\,\big(1 - \bar g_t^2 / (\hat V_t + \delta)\big) \quad\text{(eq. 9, left)},

    \bar g_{t+1} = (1 - r_t)\,\bar g_t + r_t\,\hat g_t \quad\text{(eq. 9, right)},\qquad
    \hat V_{t+1} = (1 - r_t)\,\hat V_t + r_t\,\hat g_t^2 \quad\text{(eq. 8)};

    \text{later steps } (t \ge B)\text{:}\quad (\tau, \bar g, \hat V)_{t+1} = (\tau, \bar g, \hat V)_t;

    \sigma_t^2 = \max\big(2\epsilon_t^2\,\alpha\,T\,M^{-1}_t - \epsilon_t^4,\; 10^{-16}\big)
    \quad\text{(eq. 10's noise, clipped as in the implementations)},

    v_{t+1} = v_t + \epsilon_t^2 M^{-1}_t\,\hat g_t - \alpha\,v_t + \sigma_t\,\xi_t
    \quad\text{(eq. 10, right)}, \qquad
    \theta_{t+1} = \theta_t + v_{t+1} \quad\text{(eq. 10, left)},

with :math:`\delta = 10^{-16}` (the Theano code's guard). The lines of ``reference_step`` and
``optimized_step`` are these, in this order.

Where eq. 10 comes from: Chen et al.'s SGHMC with mass :math:`M`, friction :math:`C` and noise
estimate :math:`\hat B`, rewritten for :math:`v = \epsilon M^{-1} r`, is
:math:`\Delta\theta = v`, :math:`\Delta v = -\epsilon^2 M^{-1}\nabla\tilde U - \epsilon M^{-1} C v
+ \mathcal N(0, 2\epsilon^3 M^{-1} C M^{-1} - \epsilon^4 M^{-1}\hat B M^{-1})`; with
:math:`M^{-1} = \hat V^{-1/2}`, :math:`\epsilon M^{-1} C = \alpha I` and :math:`\hat B = \hat V`
the noise covariance is :math:`2\epsilon^2\alpha M^{-1} - \epsilon^4 I`.

Design decisions, and what they follow:

- Parametrisation: ``step_size`` is the paper's :math:`\epsilon` (pybnn's and pysgmcmc's ``lr``,
  the SMILE paper's "step size 0.001"), not :math:`\epsilon^2`: the gradient is multiplied by
  :math:`\epsilon^2 M^{-1}` and the noise variance is :math:`O(\epsilon^2)`, so this sampler is the
  Chen form of ``samplers.sghmc`` with per-coordinate step :math:`h = \epsilon^2 M^{-1}`, friction
  :math:`\alpha` and noise estimate :math:`\hat\beta = \hat V` (:math:`h^2\hat V = \epsilon^4`).
  The published constants (0.001, pybnn's default 0.01) are values of :math:`\epsilon`, so they
  can be passed unchanged. A schedule scales :math:`\epsilon` (pysgmcmc's step-size schedules do).
- Gradient convention: ``grad_fn`` returns the gradient of the LOG DENSITY, :math:`\hat g =
  -\nabla\tilde U` (minibatch gradients already scaled by N/B: the implementations' ``scale_grad``
  is 1 here and their :math:`\epsilon/\sqrt{N}` rescaling, which only undoes a mean loss, does not
  apply). The kick is therefore :math:`+\epsilon^2 M^{-1}\hat g`. :math:`\hat V` and :math:`\tau`
  see only squares and are sign-blind, but :math:`\bar g` is not: the paper averages
  :math:`\nabla\tilde U` starting from 1, so the average of :math:`\hat g` kept here starts from
  :math:`-1`, which makes every step the paper's step exactly (``tests/test_sghmc_sa.py`` compares
  with a transcription in the paper's own convention).
- Integrator (the order, as eq. 10 and all three implementations do it): the momentum first, with the
  gradient at the CURRENT position, friction with the old momentum, and the noise; then the
  position moves with the NEW momentum. (``samplers.sghmc``'s Chen form moves the position with
  the old momentum and then kicks with the gradient at the new position; on the same draws the two
  give the same sequence of positions shifted by one step, so their stationary position laws are
  the same.) One gradient evaluation per step.
- Burn-in: during the first ``burn_in_steps`` steps (:math:`t < B`) :math:`\tau`, :math:`\bar g`,
  :math:`\hat V` adapt (eqs. 8-9, the adaptive window of Schaul et al. 2013); afterwards they are
  frozen, as in the Theano code (whose sampling updates leave them unchanged) and in pybnn
  (``iteration <= num_burn_in_steps``), so the preconditioner is constant,
  :math:`M^{-1} = \hat V_B^{-1/2}`, and on a Gaussian target the chain is then a linear
  recursion. :math:`M^{-1}_t` is computed from :math:`\hat V_t` before the step's update, as in the
  Theano code (where all updates of a step read the old values; pybnn reads the updated one, which
  only changes the burn-in steps). ``burn_in_steps = 0`` switches the adaptation off (pybnn).
  Burn-in positions are not posterior samples: ``Info.is_sample`` is ``step >= burn_in_steps``
  (the step that produced the position), so the drivers leave them out of the moments and the
  kept samples. The position is updated during burn-in too (as in all three implementations).
- Initial values (all three implementations): momentum :math:`v_0 = 0`, :math:`\tau_0 = 1`,
  :math:`\hat V_0 = 1`, the average of :math:`\nabla\tilde U` at 1 (so :math:`\bar g_0 = -1` for
  :math:`\hat g`). ``initial_square_average`` sets :math:`\hat V_0` (default 1: the paper); with it
  :math:`\bar g_0 = -\sqrt{\hat V_0}`, which keeps :math:`\bar g^2 \le \hat V` (both are averages
  with the same weights), hence :math:`1 \le \tau_t \le 1 + t` and :math:`r_t \in [1/(t+2), 1/2]`.
  With ``burn_in_steps = 0`` it fixes the preconditioner at :math:`\hat V_0^{-1/2}` (the frozen
  case the exact-law tests use).
- Noise variance: eq. 10's :math:`2\epsilon^2\alpha M^{-1} - \epsilon^4` (pybnn and pysgmcmc; the
  Theano code omits :math:`-\epsilon^4`), with :math:`T` on the friction's part only:
  :math:`2\epsilon^2\alpha T M^{-1} - \epsilon^4`. The :math:`\epsilon^4 = h^2\hat V` term
  subtracts the gradient noise's own contribution to the momentum, which does not scale with
  :math:`T`; so, as for ``samplers.sghmc`` (:math:`h(2\alpha T - h\hat\beta)`), the momentum's
  stationary law is :math:`\mathcal N(0, hT)` and the position's :math:`p^{1/T}` in the small-step
  limit (PX eq. 8). Since :math:`\hat V` is the uncentred second moment, the :math:`-\epsilon^4`
  term over-corrects where the gradient's mean dominates its noise; with exact gradients the
  stationary variances come out low by about :math:`\epsilon^2\sqrt{\hat V}/(2\alpha T)` relative
  (e.g. 3 % on the 10-d ICG at :math:`\epsilon = 0.03`, computed in ``tests/test_sghmc_sa.py``).
  A negative variance (:math:`\epsilon^2 > 2\alpha T M^{-1}`, i.e. a large step
  or a large :math:`\hat V`) cannot be rejected when the parameters are made, because
  :math:`M^{-1}` changes during burn-in; it is clipped to :math:`10^{-16}`, as all three
  implementations do (``max(., 1e-16)``): the chain then runs with (almost) no injected noise.
  ``tests/test_sghmc_sa.py`` checks the clipped step exactly.
- Not included: pysgmcmc's extra noise-estimate term :math:`-2\epsilon^3 M^{-2}\hat B` (0 in the
  paper and in every implementation's default).

Hyperparameters: ``step_size`` :math:`\epsilon > 0`, ``momentum_decay`` :math:`\alpha \in (0, 1)`
(default 0.05: pybnn's, pysgmcmc's and the SMILE paper's value), ``burn_in_steps`` >= 0 (a
compile-time constant; default 3000, pybnn's and pysgmcmc's default), ``initial_square_average``
:math:`\hat V_0 > 0` (number or vector; default 1), ``temperature``, ``schedule``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

import samplers
from samplers._benchmarks import CYCLES, DECAY
from base.arguments import in_interval, integer_at_least, number_or_vector, vector_length_matches
from samplers._contract import static_field
from samplers._langevin import LangevinParams, draw_spec  # noqa: F401  (part of SAMPLER)

GUARD = 1e-16  # delta: the Theano code's guard in sqrt(V + delta) + delta and g^2 / (V + delta)
NOISE_FLOOR = 1e-16  # the implementations' clip of the injected noise variance: max(variance, 1e-16)
DEFAULT_BURN_IN_STEPS = 3000  # pybnn's and pysgmcmc's num_burn_in_steps


@samplers.hyperparameters
class Params(LangevinParams):
    """``LangevinParams`` (``step_size`` is the paper's :math:`\\epsilon`); ``momentum_decay``
    :math:`\\alpha` in (0, 1) (default 0.05), ``burn_in_steps`` >= 0 (default 3000),
    ``initial_square_average`` :math:`\\hat V_0` > 0 (number or vector, default 1)."""

    momentum_decay: float = 0.05
    burn_in_steps: int = static_field(DEFAULT_BURN_IN_STEPS)
    initial_square_average: Any = 1.0

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "momentum_decay", in_interval("momentum_decay", self.momentum_decay, 0.0, 1.0,
                                                               low_open=True, high_open=True))
        object.__setattr__(self, "burn_in_steps", integer_at_least("burn_in_steps", self.burn_in_steps, 0))
        object.__setattr__(self, "initial_square_average",
                           number_or_vector("initial_square_average", self.initial_square_average, 0.0,
                                            minimum_open=True))


class State(NamedTuple):
    """The state of an SGHMC-SA chain (eqs. 8-10; every field but ``step`` of shape (dim,)).

    Attributes:
        position: theta.
        momentum: v (eq. 10).
        step: the step counter t, from which the schedule and the burn-in read.
        tau: the adaptive window (eq. 9, left).
        grad_average: the average of the log-density gradient (eq. 9, right).
        square_average: the average of the squared gradient (eq. 8).
    """

    position: Any
    momentum: Any  # v (eq. 10), stationary law N(0, eps^2 M^-1 T) per coordinate
    step: Any
    tau: Any  # the adaptive window (eq. 9, left)
    grad_average: Any  # g-bar: the average of the log-density gradient (eq. 9, right)
    square_average: Any  # V-hat: the average of the squared gradient (eq. 8)


def init(position, params: Params) -> State:
    """The chain at ``position`` with the initial values of the module docstring: momentum 0, tau 1, the
    square average at ``initial_square_average`` and the gradient average at minus its square root.

    Args:
        position: the chain's starting point, shape (dim,).
        params: validated Params.

    Returns:
        the chain's State.

    Raises:
        ValueError: ``initial_square_average`` is a vector whose length is not the position's dimension.
    """
    vector_length_matches("initial_square_average", params.initial_square_average, position)
    square_average = params.initial_square_average + 0 * position
    return State(position=position, momentum=0 * position, step=0, tau=1 + 0 * position,
                 grad_average=-(square_average**0.5), square_average=square_average)


def reference_step(state: State, grad_fn, draws, params: Params):
    """One step, the paper's equations line by line (NumPy, float64, one chain).

    Args:
        state: the chain's State (position, momentum, step, tau, grad_average, square_average).
        grad_fn: GradientOracle bound to this step's minibatch or noise draw (or any callable x -> gradient of
            the log density, shape (dim,)); called once.
        draws: this step's variates, keyed as draw_spec gives them (``noise``, a standard normal vector of
            shape (dim,)).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` 1 and ``is_sample``
        ``step >= burn_in_steps``.
    """
    eps = params.step_size_at(state.step, np)
    alpha, temp = params.momentum_decay, params.temperature
    grad = grad_fn(state.position)
    minv = 1 / (np.sqrt(state.square_average + GUARD) + GUARD)
    tau, grad_average, square_average = state.tau, state.grad_average, state.square_average
    if state.step < params.burn_in_steps:
        rate = 1 / (state.tau + 1)
        tau = 1 + state.tau * (1 - state.grad_average**2 / (state.square_average + GUARD))  # eq. 9, left
        grad_average = (1 - rate) * state.grad_average + rate * grad  # eq. 9, right
        square_average = (1 - rate) * state.square_average + rate * grad**2  # eq. 8
    variance = np.maximum(2 * eps**2 * alpha * temp * minv - eps**4, NOISE_FLOOR)
    momentum = state.momentum + eps**2 * minv * grad - alpha * state.momentum + np.sqrt(variance) * draws["noise"]
    position = state.position + momentum
    new_state = State(position, momentum, state.step + 1, tau, grad_average, square_average)
    return new_state, samplers.Info(num_grad_evals=1, is_sample=state.step >= params.burn_in_steps)


def optimized_step(state: State, grad_fn, draws, params: Params):
    """The same step in JAX (jit- and vmap-able); the burn-in branch is a select.

    Args:
        state: the chain's State (position, momentum, step, tau, grad_average, square_average).
        grad_fn: GradientOracle bound to this step's minibatch or noise draw (or any callable x -> gradient of
            the log density, shape (dim,)); called once.
        draws: this step's variates, keyed as draw_spec gives them (``noise``, a standard normal vector of
            shape (dim,)).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` 1 and ``is_sample``
        ``step >= burn_in_steps``.
    """
    eps = params.step_size_at(state.step, jnp)
    alpha, temp = params.momentum_decay, params.temperature
    grad = grad_fn(state.position)
    minv = 1 / (jnp.sqrt(state.square_average + GUARD) + GUARD)
    adapting = state.step < params.burn_in_steps
    rate = 1 / (state.tau + 1)
    tau = jnp.where(adapting, 1 + state.tau * (1 - state.grad_average**2 / (state.square_average + GUARD)), state.tau)
    grad_average = jnp.where(adapting, (1 - rate) * state.grad_average + rate * grad, state.grad_average)
    square_average = jnp.where(adapting, (1 - rate) * state.square_average + rate * grad**2, state.square_average)
    variance = jnp.maximum(2 * eps**2 * alpha * temp * minv - eps**4, NOISE_FLOOR)
    momentum = state.momentum + eps**2 * minv * grad - alpha * state.momentum + jnp.sqrt(variance) * draws["noise"]
    position = state.position + momentum
    new_state = State(position, momentum, state.step + 1, tau, grad_average, square_average)
    return new_state, samplers.Info(num_grad_evals=1, is_sample=state.step >= params.burn_in_steps)


# Its burn-in adapts the preconditioner and friction (not averaged in the gate). With exact gradients and
# on linreg its chains are heavy-tailed (excess kurtosis of a per-chain statistic 10.7 and 11 in the
# design runs).
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.05},
        linreg={"step_size": 5e-3},
        heavy_tailed=("icg4_exact", "linreg"),
        num_burnin=500,
    ),
    equivalence=(
        dict(step_size=0.05, burn_in_steps=300),
        dict(step_size=0.1, momentum_decay=0.1, burn_in_steps=500, temperature=0.5, schedule=DECAY),
        dict(step_size=0.05, burn_in_steps=0, initial_square_average=[1.0, 4.0, 9.0, 16.0] * 2 + [100.0, 0.25],
             schedule=CYCLES),
    ),
    speed={"step_size": 1e-2},
    asv={"icg": {"step_size": 1e-2}, "rosenbrock": {"step_size": 1e-2}, "linreg": {"step_size": 1e-3},
         "bnn": {"step_size": 1e-3}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "sghmc_sa", "Springenberg et al. (2016), section 3, eqs. 8-10 (scale-adapted SGHMC; SMILE's baseline)", globals()))
