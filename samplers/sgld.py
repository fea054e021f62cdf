r"""Stochastic gradient Langevin dynamics (SGLD).

Welling & Teh (2011); in the form of eq. (7) of the SGLRW paper
and Algorithm 1 of the PX paper, written for the log density :math:`\log p = -U`:

.. math:: x_{t+1} = x_t + h_t\,\widehat{\nabla \log p}(x_t) + \sqrt{2 h_t T}\,\xi_t,
          \qquad \xi_t \sim \mathcal N(0, I),

with step size :math:`h_t` from the schedule (``sgbench.samplers.schedules``; constant by default) and
temperature :math:`T` (1 is the posterior).

Discretisation convention: ``convention="standard"`` (default) is the equation above, with
``step_size`` = :math:`h`. ``convention="welling_teh"`` reads ``step_size`` as the
:math:`\epsilon` of Welling & Teh's eq. (4), :math:`x + \tfrac{\epsilon}{2}\nabla\log p +
\sqrt{\epsilon T}\,\xi`, i.e. the same update with :math:`h = \epsilon/2` (also MAMBA's eq. 1).

One gradient evaluation per step. On a Gaussian target the update is a linear Gaussian
recursion (:func:`linear_law`) whose stationary covariance (constant step) solves a discrete Lyapunov equation
(``tests/test_langevin_exact_laws.py``); with minibatch gradients on Bayesian linear regression its second
moments still follow exactly (``sgbench.reference.minibatch_laws``).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.base.arguments import one_of
from sgbench.samplers._benchmarks import CYCLES, DECAY
from sgbench.samplers._langevin import (  # noqa: F401  (parts of SAMPLER)
    LangevinParams,
    State,
    draw_spec,
    init,
    langevin_law,
)
from sgbench.samplers._linear_law import LinearLaw, step_counter

CONVENTIONS = ("standard", "welling_teh")


@samplers.hyperparameters
class Params(LangevinParams):
    """``LangevinParams`` and ``convention`` in ``CONVENTIONS``."""

    convention: str = samplers.static_field("standard")

    def __post_init__(self):
        super().__post_init__()
        one_of("convention", self.convention, CONVENTIONS)


def drift_step(params: Params, step, xp=np):
    """:math:`h_t` of the standard convention for either convention.

    Args:
        params: validated Params.
        step: the step counter t.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        the standard convention's step size at step t (half the schedule's value in the ``welling_teh``
        convention).
    """
    h = params.step_size_at(step, xp)
    return h / 2 if params.convention == "welling_teh" else h


def linear_law(hyperparameters: dict, precision, noise_covariance, step=None) -> LinearLaw:
    r"""The exact law of one step (``sgbench.samplers._linear_law``): :math:`x' = x + h\hat g(x) + \sqrt{2hT}\,\xi`
    with :math:`h` of the standard convention (:func:`drift_step`), ``sgbench.samplers._langevin.langevin_law``.

    Args:
        hyperparameters: the hyperparameters of ``Params``, as given.
        precision: P, (d, d).
        noise_covariance: V, (d, d), or None for exact gradients.
        step: the step counter whose law is asked, or None for every step's (a constant schedule).

    Returns:
        the LinearLaw, with its LangevinStep.

    Raises:
        NoLinearLawError: ``step`` is None and the schedule changes the step size.
    """
    params = Params(**hyperparameters)
    h = float(drift_step(params, step_counter(params, step)))
    return langevin_law(precision, h, params.temperature, noise_covariance)


def reference_step(state: State, grad_fn, draws, params: Params):
    r"""One SGLD step, the update of the module docstring (NumPy, one chain):
    :math:`x_{t+1} = x_t + h_t\,\widehat{\nabla\log p}(x_t) + \sqrt{2 h_t T}\,\xi_t` (:math:`h_t` of the standard
    convention, :func:`drift_step`).

    The arguments and result follow the step contract (``sgbench.samplers._contract``).

    Args:
        state: the chain's State (position, step counter t).
        grad_fn: the GradientOracle of this step (``grad_fn(x)`` is the stochastic gradient of the log density).
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step (its counter t + 1), and Info with ``num_grad_evals`` 1.
    """
    h = drift_step(params, state.step, np)
    grad = grad_fn(state.position)
    position = state.position + h * grad + np.sqrt(2 * h * params.temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


def optimized_step(state: State, grad_fn, draws, params: Params):
    """The same step in JAX (jit- and vmap-able).

    The arguments and result are those of :func:`reference_step`; the step contract is in
    ``sgbench.samplers._contract``.

    Args:
        state: the chain's State (position, step counter t).
        grad_fn: the GradientOracle of this step.
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` 1.
    """
    h = drift_step(params, state.step, jnp)
    grad = grad_fn(state.position)
    position = state.position + h * grad + jnp.sqrt(2 * h * params.temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.02},
        linreg={"step_size": 1e-3},
        posteriors={"mesquite": {"step_size": 0.000258},
                    "gauss_mix": {"step_size": 2.14e-05}},
        variants=(samplers.GateVariant("welling_teh", {"step_size": 0.04, "convention": "welling_teh"}),),
        exact_law=({"step_size": 0.02}, {"step_size": 0.04, "convention": "welling_teh"}),
    ),
    equivalence=(
        dict(step_size=1e-3),
        dict(step_size=2e-3, temperature=0.5),
        dict(step_size=2e-3, convention="welling_teh"),
        dict(step_size=5e-3, schedule=DECAY),
        dict(step_size=3e-3, schedule=CYCLES, convention="welling_teh"),
    ),
    speed={"step_size": 1e-2},
    asv={"rosenbrock": {"step_size": 3e-3}, "linreg": {"step_size": 3e-5}, "bnn": {"step_size": 1e-4}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "sgld", "Welling & Teh (2011); eq. (7) of the SGLRW paper; Algorithm 1 of the PX paper", globals()))
