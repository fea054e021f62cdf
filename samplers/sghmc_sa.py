r"""Scale-adapted SGHMC (SGHMC-SA).

Springenberg, Klein, Falkner & Hutter (2016), "Bayesian optimization with robust Bayesian neural
networks", NeurIPS 29, section 3, eqs. 8-10 (as the implementations of the authors' group, pybnn's
``AdaptiveSGHMC`` and pysgmcmc, cite them); the main SGHMC baseline of the SMILE paper
(section 2.2). Per coordinate, with :math:`\hat g_t = \widehat{\nabla\log p}(\theta_t)`, step size
:math:`\epsilon_t`, momentum decay :math:`\alpha`, temperature :math:`T`, burn-in length :math:`B`,
:math:`\delta = 10^{-16}` and :math:`\xi_t \sim \mathcal N(0, I)`:

.. math::
    M^{-1}_t = 1 / \big(\sqrt{\hat V_t + \delta} + \delta\big), \qquad
    \sigma_t^2 = \max\big(2\epsilon_t^2\,\alpha\,T\,M^{-1}_t - \epsilon_t^4,\; 10^{-16}\big),

    v_{t+1} = v_t + \epsilon_t^2 M^{-1}_t\,\hat g_t - \alpha\,v_t + \sigma_t\,\xi_t, \qquad
    \theta_{t+1} = \theta_t + v_{t+1} \quad\text{(eq. 10)},

    t < B\text{:}\quad r_t = 1/(\tau_t + 1), \quad
    \tau_{t+1} = 1 + \tau_t\big(1 - \bar g_t^2 / (\hat V_t + \delta)\big), \quad
    \bar g_{t+1} = (1 - r_t)\,\bar g_t + r_t\,\hat g_t, \quad
    \hat V_{t+1} = (1 - r_t)\,\hat V_t + r_t\,\hat g_t^2 \quad\text{(eqs. 8-9)};

for :math:`t \ge B`, :math:`\tau, \bar g, \hat V` are frozen. Convention: ``step_size`` is the paper's
:math:`\epsilon` (not :math:`\epsilon^2`); the momentum moves first, then the position with the new
momentum; one gradient evaluation per step; burn-in positions are not samples (``Info.is_sample``).
Start: :math:`v_0 = 0`, :math:`\tau_0 = 1`, :math:`\hat V_0` = ``initial_square_average`` (1),
:math:`\bar g_0 = -\sqrt{\hat V_0}`.

Derivation and notes: docs/derivations.md, section sgbench.samplers.sghmc_sa.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.base.arguments import in_interval, integer_at_least, number_or_vector, vector_length_matches
from sgbench.samplers._benchmarks import CYCLES, DECAY
from sgbench.samplers._contract import static_field
from sgbench.samplers._langevin import LangevinParams, draw_spec  # noqa: F401  (part of SAMPLER)

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
    r"""One step, the paper's equations line by line (NumPy, float64, one chain): during the burn-in
    (:math:`t < B`) eqs. 8-9 update :math:`\tau, \bar g, \hat V`; then
    :math:`v_{t+1} = v_t + \epsilon_t^2 M^{-1}_t \hat g_t - \alpha v_t + \sigma_t \xi_t`,
    :math:`\theta_{t+1} = \theta_t + v_{t+1}` (eq. 10).

    The arguments and result follow the step contract (``sgbench.samplers._contract``).

    Args:
        state: the chain's State (position, momentum, step counter t, tau, gradient and square averages).
        grad_fn: the GradientOracle of this step (``grad_fn(x)`` is the stochastic gradient of the log density).
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step (its counter t + 1), and Info with ``num_grad_evals`` 1 and
        ``is_sample`` ``step >= burn_in_steps``.
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

    The arguments and result are those of :func:`reference_step`; the step contract is in
    ``sgbench.samplers._contract``.

    Args:
        state: the chain's State (position, momentum, step counter t, tau, gradient and square averages).
        grad_fn: the GradientOracle of this step.
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
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


# Its burn-in adapts the preconditioner and friction (not averaged in the gate); 8000 steps, four times its
# linreg chains' autocorrelation time (about 1900 steps; sgbench.bench.gate.start). With exact gradients and
# on linreg its chains are heavy-tailed (excess kurtosis of a per-chain statistic 10.7 and 11 in the
# design runs).
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.05},
        linreg={"step_size": 5e-3},
        posteriors={"mesquite": {"step_size": 0.00129},
                    "gauss_mix": {"step_size": 0.000107}},
        heavy_tailed=("icg4_exact", "linreg"),
        num_burnin=8000,
        posteriors_burnin=16000,  # its design runs there: autocorrelation times of 3200 to 3700 steps
    ),
    equivalence=(
        dict(step_size=0.05, burn_in_steps=300),
        dict(step_size=0.1, momentum_decay=0.1, burn_in_steps=500, temperature=0.5, schedule=DECAY),
        dict(step_size=0.05, burn_in_steps=0, initial_square_average=[1.0, 4.0, 9.0, 16.0] * 2 + [100.0, 0.25],
             schedule=CYCLES),
    ),
    speed={"step_size": 1e-2},
    asv={"linreg": {"step_size": 1e-3}, "bnn": {"step_size": 1e-3}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "sghmc_sa", "Springenberg et al. (2016), section 3, eqs. 8-10 (scale-adapted SGHMC; SMILE's baseline)", globals()))
