r"""Stochastic microcanonical Langevin dynamics: what SMILE-naive, pSMILE-naive, SMILE and pSMILE
share (SMILE paper): hyperparameters, state, and the two implementations of a step.

- SMILE-naive (section 3.1, eq. 3): the deterministic MCLMC dynamics driven by the stochastic gradient
  (scaled by :math:`N/B`), no explicit noise (:math:`\eta = 0`), the minimal-norm integrator of appendix
  F.2 (``sgbench.samplers._microcanonical``).
- pSMILE-naive (section 3.2): the same dynamics in :math:`\theta' = c\,\sigma\odot\theta`,
  :math:`c = \sqrt d/\lVert\sigma\rVert`, with moving averages of smoothing :math:`\alpha` (0.01), from
  :math:`\bar g = 0` and :math:`\sigma = 1`, updated before each step's integration:

  .. math:: \bar g \leftarrow (1-\alpha)\bar g + \alpha g, \qquad
            \sigma \leftarrow \sqrt{(1-\alpha)\sigma^2 + \alpha(g - \bar g)^2}.

- SMILE and pSMILE (section 4.2, Algorithm 1, eqs. 4-7; ``sgbench.samplers._energy_tuning``): after each step
  with step size :math:`\eta`, the guardrail rejects it (:math:`(\theta, u) \leftarrow (\theta_{prev}, 0)`)
  if :math:`|\Delta E| > Ga^{-1}(\kappa)`, and the step size becomes :math:`\eta(1+\delta)` if
  :math:`|\Delta E| < Ga^{-1}(a/3)`, :math:`\eta(1-\delta)` if :math:`|\Delta E| > Ga^{-1}(1 - 2a/3)`
  (defaults :math:`\beta = 0.01`, :math:`\kappa = 0.98`, :math:`\delta = 0.02`, :math:`a = 0.1`). A step that
  starts at rest is not observed.

Each step evaluates the gradient (and, in the tuned variants, the log density) at its starting point on its own
draw: three gradient evaluations per step. Only the tuned variants keep the energy error; in the naive ones the log
densities and kinetic energy changes are unused, and XLA drops them (15 to 20 % of the naive variants' step at
150 chains; docs/performance.md).

Derivation and notes: docs/derivations.md, section sgbench.samplers._stochastic_microcanonical.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from sgbench.base.arguments import in_interval, one_of, positive_finite
from sgbench.samplers._contract import Info, hyperparameters, static_field
from sgbench.samplers._energy_tuning import gamma_fit, update_moments, wilson_hilferty
from sgbench.samplers._microcanonical import INTEGRATORS, gradients_per_step, integrate, optimized_kick, reference_kick


@hyperparameters
class NaiveParams:
    """``step_size`` :math:`\\Delta t` > 0 (the initial :math:`\\eta` where it is tuned);
    ``integrator`` in ``sgbench.samplers._microcanonical.INTEGRATORS``."""

    step_size: Any
    integrator: str = static_field("minimal_norm")

    def __post_init__(self):
        object.__setattr__(self, "step_size", positive_finite("step_size", self.step_size))
        one_of("integrator", self.integrator, INTEGRATORS)


@hyperparameters
class PreconditionedParams(NaiveParams):
    """Plus ``noise_smoothing`` :math:`\\alpha` in (0, 1] (0.01)."""

    noise_smoothing: Any = 0.01

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "noise_smoothing", in_interval("noise_smoothing", self.noise_smoothing, 0.0, 1.0,
                                                                low_open=True))


@hyperparameters
class TunedParams(NaiveParams):
    """Plus ``energy_smoothing`` :math:`\\beta` in (0, 1) (0.01), ``kappa`` in (0, 1) (0.98),
    ``adaptation_probability`` :math:`a` in (0, 1) (0.1), ``adaptation_rate`` :math:`\\delta` in
    (0, 1) (0.02)."""

    energy_smoothing: Any = 0.01
    kappa: Any = 0.98
    adaptation_probability: Any = 0.1
    adaptation_rate: Any = 0.02

    def __post_init__(self):
        super().__post_init__()
        for name in ("energy_smoothing", "kappa", "adaptation_probability", "adaptation_rate"):
            object.__setattr__(self, name, in_interval(name, getattr(self, name), 0.0, 1.0, low_open=True,
                                                       high_open=True))


@hyperparameters
class PreconditionedTunedParams(TunedParams, PreconditionedParams):
    """``TunedParams`` and ``PreconditionedParams`` together (pSMILE)."""


class State(NamedTuple):
    """The state of a stochastic microcanonical chain (SMILE-naive, pSMILE-naive, SMILE, pSMILE).

    Attributes:
        position: the chain's position, shape (dim,).
        momentum: the unit momentum, or 0 at rest (the start, and after a reset), shape (dim,).
        step_size: the current step size (tuned by SMILE and pSMILE).
        gradient_mean: the stochastic gradient's moving mean, shape (dim,) (preconditioned variants; else 0).
        gradient_std: its moving standard deviation, shape (dim,) (preconditioned variants; else 1).
        energy_mean: the moving mean of |dE| (eq. 4), not bias-corrected.
        energy_variance: the moving variance of |dE| (eq. 4), not bias-corrected.
        observations: the steps that entered the moving moments.
        energy_error: this step's energy error dE (eq. 2), kept by the tuned variants (SMILE, pSMILE) only: the
            naive ones do not use it and leave it 0, so their steps evaluate no log density.
        gamma_shape: the shape of the Gamma fit this step used (0 where none).
        gamma_scale: the scale of the Gamma fit this step used (0 where none).
        reset: 1 where this step was rejected (the guardrail, or a non-finite step), else 0.
        resets: the number of resets so far.
    """

    position: Any
    momentum: Any
    step_size: Any
    gradient_mean: Any
    gradient_std: Any
    energy_mean: Any
    energy_variance: Any
    observations: Any
    energy_error: Any
    gamma_shape: Any
    gamma_scale: Any
    reset: Any
    resets: Any


def init(position, params: NaiveParams) -> State:
    """At rest (the first kick points the momentum up the gradient), preconditioner 1, no
    energy observations.

    Args:
        position: the chain's starting point, shape (dim,).
        params: validated NaiveParams or a subclass (its ``step_size`` is the initial one).

    Returns:
        the chain's State.
    """
    zero = position.sum() * 0
    return State(position, position * 0, zero + params.step_size, position * 0, position * 0 + 1, zero, zero,
                 zero, zero, zero, zero, zero, zero)


def draw_spec(dim: int, params: NaiveParams) -> dict:
    """None: the only noise is the gradient's.

    Args:
        dim: the target's dimension.
        params: validated Params (not read).

    Returns:
        ``{}``.
    """
    return {}


def _preconditioner(gradient_std, xp):
    """:math:`1/(c\\sigma)`, :math:`c = \\sqrt d/\\lVert\\sigma\\rVert`."""
    return xp.linalg.norm(gradient_std) / (math.sqrt(gradient_std.shape[-1]) * gradient_std)


def _precondition(state: State, gradient, params, xp):
    """(gradient mean, gradient std, scale of the kicks and drifts): section 3.2's moving averages
    updated with ``gradient`` and :func:`_preconditioner` of them (pSMILE); unchanged and 1 without."""
    if not isinstance(params, PreconditionedParams):
        return state.gradient_mean, state.gradient_std, 1.0
    mean, variance = update_moments(state.gradient_mean, state.gradient_std**2, gradient, params.noise_smoothing)
    std = xp.sqrt(variance)
    return mean, std, _preconditioner(std, xp)


def reference_step(state: State, grad_fn, draws, params: NaiveParams):
    """One step (NumPy, one chain): the log density and gradient at the start on this step's draw, the
    preconditioner's moving averages where ``params`` has them, the integrator, then the energy-variance
    tuning where ``params`` has it.

    The arguments and result follow the step contract (``sgbench.samplers._contract``).

    Args:
        state: the chain's State.
        grad_fn: the GradientOracle of this step; ``grad_fn.value_and_grad`` is called at the start and once per
            drift of the integrator.
        draws: this step's draws of :func:`draw_spec`: none (an empty dict; the only noise is the gradient's).
        params: validated NaiveParams or a subclass (PreconditionedParams: the preconditioner; TunedParams: the
            energy-variance tuning).

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` 1 plus the integrator's
        gradients per step (3 with the minimal-norm scheme).
    """
    start = state.position
    logdensity, gradient = grad_fn.value_and_grad(start)
    gradient_mean, gradient_std, scale = _precondition(state, gradient, params, np)
    at_rest = not np.any(state.momentum)
    position, momentum, _, _, energy_error = integrate(
        start, state.momentum, logdensity, gradient, grad_fn, state.step_size,
        INTEGRATORS[params.integrator], reference_kick, scale)
    state = state._replace(position=position, momentum=momentum, gradient_mean=gradient_mean,
                           gradient_std=gradient_std)
    if isinstance(params, TunedParams):  # unused by the naive variants: dead code XLA drops
        state = _reference_tune(state._replace(energy_error=energy_error), params, start, at_rest)
    return state, Info(1 + gradients_per_step(params.integrator))


def _reference_tune(state: State, params: TunedParams, previous, at_rest) -> State:
    size = abs(state.energy_error)
    finite = bool(np.isfinite(size) and np.all(np.isfinite(state.position)))
    shape, scale, usable = gamma_fit(state.energy_mean, state.energy_variance, state.observations,
                                     params.energy_smoothing, np)
    energy_mean, energy_variance, observations = state.energy_mean, state.energy_variance, state.observations
    usable = usable and not at_rest
    observed = finite and not at_rest
    if observed:
        energy_mean, energy_variance = update_moments(energy_mean, energy_variance, size, params.energy_smoothing)
        observations = observations + 1
    a = params.adaptation_probability
    reset = (not finite) or (usable and size > wilson_hilferty(params.kappa, shape, scale, np))
    position, momentum = (previous, np.zeros_like(state.momentum)) if reset else (state.position, state.momentum)
    step_size = state.step_size
    if (not finite) or (usable and size > wilson_hilferty(1 - 2 * a / 3, shape, scale, np)):
        step_size = step_size * (1 - params.adaptation_rate)
    elif usable and size < wilson_hilferty(a / 3, shape, scale, np):
        step_size = step_size * (1 + params.adaptation_rate)
    return state._replace(position=position, momentum=momentum, step_size=step_size, energy_mean=energy_mean,
                          energy_variance=energy_variance, observations=observations,
                          gamma_shape=shape if usable else 0.0, gamma_scale=scale if usable else 0.0,
                          reset=float(reset), resets=state.resets + reset)


def optimized_step(state: State, grad_fn, draws, params: NaiveParams):
    """The same step in JAX (jit- and vmap-able); the tuning's branches are selects.

    The arguments and result are those of :func:`reference_step`; the step contract is in
    ``sgbench.samplers._contract``.

    Args:
        state: the chain's State.
        grad_fn: the GradientOracle of this step.
        draws: this step's draws of :func:`draw_spec`: none.
        params: validated NaiveParams or a subclass.

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` 1 plus the integrator's
        gradients per step.
    """
    start = state.position
    logdensity, gradient = grad_fn.value_and_grad(start)
    gradient_mean, gradient_std, scale = _precondition(state, gradient, params, jnp)
    at_rest = ~jnp.any(state.momentum != 0)
    position, momentum, _, _, energy_error = integrate(
        start, state.momentum, logdensity, gradient, grad_fn, state.step_size,
        INTEGRATORS[params.integrator], optimized_kick, scale)
    state = state._replace(position=position, momentum=momentum, gradient_mean=gradient_mean,
                           gradient_std=gradient_std)
    if isinstance(params, TunedParams):  # unused by the naive variants: dead code XLA drops
        state = _optimized_tune(state._replace(energy_error=energy_error), params, start, at_rest)
    return state, Info(1 + gradients_per_step(params.integrator))


def _optimized_tune(state: State, params: TunedParams, previous, at_rest) -> State:
    size = jnp.abs(state.energy_error)
    finite = jnp.isfinite(size) & jnp.all(jnp.isfinite(state.position))
    shape, scale, usable = gamma_fit(state.energy_mean, state.energy_variance, state.observations,
                                     params.energy_smoothing, jnp)
    usable = usable & ~at_rest
    observed = finite & ~at_rest
    energy_mean, energy_variance, observations = state.energy_mean, state.energy_variance, state.observations
    updated_mean, updated_variance = update_moments(energy_mean, energy_variance, size, params.energy_smoothing)
    energy_mean = jnp.where(observed, updated_mean, energy_mean)
    energy_variance = jnp.where(observed, updated_variance, energy_variance)
    observations = observations + observed
    a = params.adaptation_probability
    reset = (~finite) | (usable & (size > wilson_hilferty(params.kappa, shape, scale, jnp)))
    position = jnp.where(reset, previous, state.position)
    momentum = jnp.where(reset, jnp.zeros_like(state.momentum), state.momentum)
    step_size = state.step_size
    shrink = (~finite) | (usable & (size > wilson_hilferty(1 - 2 * a / 3, shape, scale, jnp)))
    grow = (~shrink) & usable & (size < wilson_hilferty(a / 3, shape, scale, jnp))
    step_size = jnp.where(shrink, step_size * (1 - params.adaptation_rate),
                          jnp.where(grow, step_size * (1 + params.adaptation_rate), step_size))
    return state._replace(position=position, momentum=momentum, step_size=step_size, energy_mean=energy_mean,
                          energy_variance=energy_variance, observations=observations,
                          gamma_shape=jnp.where(usable, shape, 0.0), gamma_scale=jnp.where(usable, scale, 0.0),
                          reset=reset.astype(size.dtype), resets=state.resets + reset)
