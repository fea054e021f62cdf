r"""Clipped-SGLD: SGLD whose drift, not whole increment, is clipped componentwise.

Eq. (18) of the SGLRW paper, written for the log density:

.. math:: x_{t+1} = x_t + \mathrm{clip}(h_t\,\widehat{\nabla\log p}(x_t); R_t) + \sqrt{2 h_t T}\,\xi_t,
          \qquad \mathrm{clip}(x; R)_i = \mathrm{sign}(x_i)\min\{|x_i|, R\},

with :math:`R_t = \sqrt{2 h_t T}`, the scale of the injected noise (the paper's :math:`\sqrt{2\delta_t}`
at :math:`T = 1`). Only the drift is clipped: the diffusion keeps its variance :math:`2 h_t T`
(clipping the whole increment changes the diffusion limit, the paper's appendix A.4). Standard
convention; the paper's runs use ``schedule={"kind": "polynomial_decay"}``
(:math:`\delta_t = \delta(1+t)^{-0.55}`). One gradient evaluation per step.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.samplers._benchmarks import DECAY
from sgbench.samplers._langevin import LangevinParams, State, draw_spec, init  # noqa: F401  (parts of SAMPLER)


@samplers.hyperparameters
class Params(LangevinParams):
    """``LangevinParams``."""


def reference_step(state: State, grad_fn, draws, params: Params):
    r"""One clipped-SGLD step, the update of the module docstring (NumPy, one chain):
    :math:`x_{t+1} = x_t + \mathrm{clip}(h_t\,\widehat{\nabla\log p}(x_t); R_t) + R_t\,\xi_t`,
    :math:`R_t = \sqrt{2 h_t T}`.

    The arguments and result follow the step contract (``sgbench.samplers._contract``).

    Args:
        state: the chain's State (position, step counter t).
        grad_fn: the GradientOracle of this step (``grad_fn(x)`` is the stochastic gradient of the log density).
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step (its counter t + 1), and Info with ``num_grad_evals`` 1.
    """
    h = params.step_size_at(state.step, np)
    radius = np.sqrt(2 * h * params.temperature)
    drift = np.clip(h * grad_fn(state.position), -radius, radius)
    position = state.position + drift + radius * draws["noise"]
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
    h = params.step_size_at(state.step, jnp)
    radius = jnp.sqrt(2 * h * params.temperature)
    drift = jnp.clip(h * grad_fn(state.position), -radius, radius)
    position = state.position + drift + radius * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


# Its "stiff" gate cell (condition number 16, gradient-noise variance 16) is where the clip binds:
# about a third of the drift components are clipped; on icg4 the clip never binds.
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.02},
        linreg={"step_size": 1e-3},
        posteriors={"mesquite": {"step_size": 0.000258},
                    "gauss_mix": {"step_size": 2.14e-05}},
        variants=(samplers.GateVariant("stiff", {"step_size": 0.05}, "icg4_stiff"),),
    ),
    equivalence=(
        dict(step_size=1e-3),
        dict(step_size=2e-2, schedule=DECAY, temperature=2.0),  # large steps: the clip is active
    ),
    speed={"step_size": 1e-2},
    asv={"rosenbrock": {"step_size": 1e-3}, "linreg": {"step_size": 3e-5}, "bnn": {"step_size": 1e-4}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "clipped_sgld", "SGLRW paper, eq. (18)", globals()))
