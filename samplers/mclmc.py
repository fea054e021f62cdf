r"""Microcanonical Langevin Monte Carlo (MCLMC), full batch, with optional online tuning.

Robnik et al. (2023), Robnik & Seljak (2024); as written in the SMILE paper, eq. 1
and appendix F.2, and the MILE paper, eq. 3. One step of size :math:`\Delta t`:

.. math:: u \leftarrow R_{\Delta t/2}(u), \quad
          (\theta, u) \leftarrow \Phi_{\Delta t}(\theta, u), \quad
          u \leftarrow R_{\Delta t/2}(u),

:math:`R_\epsilon` the partial refreshment with decoherence length :math:`L` (``L=inf``: none, the
deterministic dynamics) and :math:`\Phi` the isokinetic minimal-norm scheme P Q P Q P with the
ESH kick (``sgbench.samplers._microcanonical``; ``integrator="leapfrog"`` is velocity Verlet). The state
caches the log density and gradient at its position, so a step costs two gradient evaluations
(one with leapfrog), and records the step's energy error :math:`\Delta E` (SMILE eq. 2). The chain
starts at rest (momentum 0). MCLMC is for full batches. ``tuning_steps = (n1, n2, n3)`` (default
(0, 0, 0): the fixed kernel) runs Robnik et al.'s three phases inside the step
(``sgbench.samplers._mclmc_tuning``); their steps are not posterior samples. There is no Metropolis
adjustment: a diverging chain shows as non-finite positions.

Derivation and notes: docs/derivations.md, section sgbench.samplers.mclmc.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from sgbench import samplers
from sgbench.base.arguments import one_of
from sgbench.base.backend import constant
from sgbench.samplers._contract import Info, Variate, hyperparameters, static_field
from sgbench.samplers._mclmc_tuning import check_tuning, init_tuning, optimized_tune, reference_tune
from sgbench.samplers._microcanonical import (
    INTEGRATORS,
    gradients_per_step,
    integrate,
    optimized_kick,
    optimized_refresh,
    reference_kick,
    reference_refresh,
)

NO_TUNING = (0, 0, 0)


@hyperparameters
class Params:
    """``step_size`` :math:`\\Delta t` > 0; ``L`` (momentum decoherence length) in (0, inf], inf
    (the default of the fixed kernel) for no refreshment; ``integrator`` in ``INTEGRATORS``.

    Tuning: ``tuning_steps`` (n1, n2, n3) integers >= 0 (n2, n3 not 1), the lengths of phases I-III;
    with a phase, ``step_size`` and ``L`` are initial values (None: :math:`\\sqrt d/4` and
    :math:`\\sqrt d`); ``desired_energy_variance`` the EEVPD > 0 (5e-4), or a pair (start, end)
    for MILE's linear schedule over phase I; ``num_effective_samples`` >= 1 (150),
    ``trust_in_estimate`` > 0 (1.5) and ``l_factor`` > 0 (0.4) as in ``sgbench.samplers._mclmc_tuning``."""

    step_size: Any = None
    L: Any = None
    integrator: str = static_field("minimal_norm")
    tuning_steps: tuple = static_field(NO_TUNING)
    desired_energy_variance: Any = 5e-4
    num_effective_samples: Any = 150.0
    trust_in_estimate: Any = 1.5
    l_factor: Any = 0.4

    def __post_init__(self):
        one_of("integrator", self.integrator, INTEGRATORS)
        check_tuning(self)
        if self.tuning_steps == NO_TUNING:
            if self.step_size is None:
                raise ValueError("step_size must be a finite number > 0 (None, a default from the dimension, is "
                                 "only accepted with tuning_steps)")
            if self.L is None:
                object.__setattr__(self, "L", math.inf)


class State(NamedTuple):
    """The state of an MCLMC chain.

    Attributes:
        position: the chain's position, shape (dim,).
        momentum: the unit momentum, shape (dim,); 0 at the start.
        logdensity: the log density at ``position`` (cached; ``prime`` fills it in).
        gradient: its gradient at ``position``, shape (dim,) (cached).
        energy_error: the last step's energy error (SMILE eq. 2).
        step_size: the current step size (tuned during phases I-II).
        L: the current decoherence length (set after phases II and III).
        step: the steps taken.
        tuning: the tuner's accumulators (``sgbench.samplers._mclmc_tuning.Tuning``), None for the fixed kernel.
    """

    position: Any
    momentum: Any
    logdensity: Any
    gradient: Any
    energy_error: Any
    step_size: Any  # the current step size (tuned during phases I-II)
    L: Any  # the current decoherence length (set after phases II and III)
    step: Any  # steps taken
    tuning: Any  # sgbench.samplers._mclmc_tuning.Tuning, None for the fixed kernel


def init(position, params: Params) -> State:
    """At rest at ``position``; ``prime`` fills in the log density and gradient.

    Args:
        position: the chain's starting point, shape (dim,).
        params: validated Params (None step size and L: the defaults from the dimension).

    Returns:
        the chain's State, with log density and gradient 0 until ``prime``.
    """
    dim = position.shape[-1]
    step_size = constant(math.sqrt(dim) / 4 if params.step_size is None else params.step_size, position)
    L = constant(math.sqrt(dim) if params.L is None else params.L, position)
    tuning = None if params.tuning_steps == NO_TUNING else init_tuning(position, params.tuning_steps)
    zero = position.sum() * 0
    return State(position, position * 0, zero, position * 0, zero, step_size, L, np.int64(0), tuning)


def prime(state: State, oracle) -> State:
    """The log density and gradient at the state's position (one evaluation).

    Args:
        state: the State from ``init``.
        oracle: the full-data GradientOracle (``GradientOracle.exact(target)``).

    Returns:
        ``state`` with ``logdensity`` and ``gradient`` at its position.
    """
    logdensity, gradient = oracle.value_and_grad(state.position)
    return state._replace(logdensity=logdensity, gradient=gradient)


def draw_spec(dim: int, params: Params) -> dict[str, Variate]:
    """Two standard normal vectors: the two half refreshments.

    Args:
        dim: the target's dimension.
        params: validated Params (not read).

    Returns:
        ``{"refresh": Variate("normal", (2, dim))}``.
    """
    return {"refresh": Variate("normal", (2, dim))}


def reference_step(state: State, grad_fn, draws, params: Params):
    """One MCLMC step (NumPy, one chain): half a refreshment, the integrator, half a refreshment, then the
    tuning of the step's phase where ``tuning_steps`` has one.

    The arguments and result follow the step contract (``sgbench.samplers._contract``).

    Args:
        state: the chain's State (its cached log density and gradient at the position: ``prime`` fills them in).
        grad_fn: the GradientOracle of this step; ``grad_fn.value_and_grad`` is called once per drift.
        draws: this step's draws of :func:`draw_spec`: ``refresh``, standard normal, shape (2, dim) (one row per half
            refreshment).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` the integrator's gradients
        per step (2 minimal-norm, 1 leapfrog) and ``is_sample`` False during the tuning phases.
    """
    momentum = reference_refresh(state.momentum, state.step_size / 2, state.L, draws["refresh"][0])
    position, momentum, logdensity, gradient, energy_error = integrate(
        state.position, momentum, state.logdensity, state.gradient, grad_fn, state.step_size,
        INTEGRATORS[params.integrator], reference_kick)
    momentum = reference_refresh(momentum, state.step_size / 2, state.L, draws["refresh"][1])
    proposal = state._replace(position=position, momentum=momentum, logdensity=logdensity, gradient=gradient,
                              energy_error=energy_error, step=state.step + 1)
    if params.tuning_steps == NO_TUNING:
        return proposal, Info(gradients_per_step(params.integrator))
    return (reference_tune(state, proposal, params),
            Info(gradients_per_step(params.integrator), state.step >= sum(params.tuning_steps)))


def optimized_step(state: State, grad_fn, draws, params: Params):
    """The same step in JAX (jit- and vmap-able).

    The arguments and result are those of :func:`reference_step`; the step contract is in
    ``sgbench.samplers._contract``.

    Args:
        state: the chain's State (its cached log density and gradient at the position).
        grad_fn: the GradientOracle of this step.
        draws: this step's draws of :func:`draw_spec`: ``refresh``, standard normal, shape (2, dim).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` the integrator's gradients
        per step and ``is_sample`` False during the tuning phases.
    """
    momentum = optimized_refresh(state.momentum, state.step_size / 2, state.L, draws["refresh"][0])
    position, momentum, logdensity, gradient, energy_error = integrate(
        state.position, momentum, state.logdensity, state.gradient, grad_fn, state.step_size,
        INTEGRATORS[params.integrator], optimized_kick)
    momentum = optimized_refresh(momentum, state.step_size / 2, state.L, draws["refresh"][1])
    proposal = state._replace(position=position, momentum=momentum, logdensity=logdensity, gradient=gradient,
                              energy_error=energy_error, step=state.step + 1)
    if params.tuning_steps == NO_TUNING:
        return proposal, Info(gradients_per_step(params.integrator))
    return (optimized_tune(state, proposal, params),
            Info(gradients_per_step(params.integrator), state.step >= sum(params.tuning_steps)))


# A full-batch method: no linreg cell. Equivalence: at step sizes near the icg's stability limit (0.5)
# the isokinetic flow is chaotic.
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(icg4={"step_size": 0.3, "L": 2.0}),
    equivalence=(
        dict(step_size=0.1),
        dict(step_size=0.2, L=3.0),
        dict(step_size=0.1, L=1.0, integrator="leapfrog"),
        dict(step_size=0.1, L=1.0, tuning_steps=(300, 300, 300)),  # tuned step 0.4-0.5
        dict(step_size=0.1, L=1.0, tuning_steps=(500, 200, 200), integrator="leapfrog"),
    ),
    speed={"step_size": 0.1, "L": 3.0},
    asv={"linreg": {"step_size": 0.01, "L": 0.2}, "bnn": {"step_size": 1e-2, "L": 1.0}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "mclmc", "Robnik et al. (2023); SMILE paper eq. 1, appendix F.2; MILE paper eq. 3, section 2.2", globals()))
