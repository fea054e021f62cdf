r"""Cyclical SGLD (cSGLD).

Zhang et al. (2020), "Cyclical stochastic gradient MCMC for Bayesian deep learning", Algorithm 1;
the PX paper's cyclical schedule (appendix C); the baseline of the SMILE paper. The step size follows
the cosine cycle of ``sgbench.samplers.schedules.Cyclical`` (``schedule`` must be one), and each
cycle starts with an exploration stage: while the phase :math:`r(t) = \mathrm{mod}(t, K)/K` is
below the exploration fraction :math:`\beta`, the step is an
optimisation step without noise, and afterwards it is SGLD:

.. math:: x_{t+1} = x_t + h_t\,\widehat{\nabla\log p}(x_t)
          + \mathbb 1[r(t) \ge \beta]\,\sqrt{2 h_t T}\,\xi_t .

Positions of exploration steps are not posterior samples (``Info.is_sample`` is False): the
drivers leave them out of the moments and the kept samples. :math:`\beta = 0` (default) is SGLD
with the cyclical schedule, as in the PX paper; SMILE's baseline uses :math:`\beta = 1/3`.
Standard convention. One gradient evaluation per step.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.base.arguments import in_interval
from sgbench.samplers._benchmarks import CYCLES
from sgbench.samplers._langevin import LangevinParams, State, draw_spec, init  # noqa: F401  (parts of SAMPLER)
from sgbench.samplers.schedules import Cyclical


@samplers.hyperparameters
class Params(LangevinParams):
    """``LangevinParams`` with a cyclical ``schedule`` (e.g. ``{"kind": "cyclical", "cycle_length":
    5000}``); ``exploration_fraction`` :math:`\\beta` in [0, 1] (default 0)."""

    exploration_fraction: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        if not isinstance(self.schedule, Cyclical):
            raise ValueError(f"schedule must be cyclical for csgld, e.g. {{'kind': 'cyclical', 'cycle_length': 5000}}, "
                             f"got {self.schedule!r}")
        object.__setattr__(self, "exploration_fraction",
                           in_interval("exploration_fraction", self.exploration_fraction, 0.0, 1.0))


def reference_step(state: State, grad_fn, draws, params: Params):
    r"""One cSGLD step (NumPy, one chain): SGLD, without the noise in the exploration stage of the cycle:
    :math:`x_{t+1} = x_t + h_t\,\widehat{\nabla\log p}(x_t) + \mathbb 1[r(t) \ge \beta]\,\sqrt{2 h_t T}\,\xi_t`.

    The arguments and result follow the step contract (``sgbench.samplers._contract``).

    Args:
        state: the chain's State (position, step counter t).
        grad_fn: the GradientOracle of this step (``grad_fn(x)`` is the stochastic gradient of the log density).
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
        params: validated Params (a cyclical schedule).

    Returns:
        (new State, Info): the state after one step (its counter t + 1), and Info with ``num_grad_evals`` 1 and
        ``is_sample`` False in the exploration stage.
    """
    h = params.step_size_at(state.step, np)
    sampling = params.schedule.phase(state.step, np) >= params.exploration_fraction
    grad = grad_fn(state.position)
    position = state.position + h * grad + sampling * np.sqrt(2 * h * params.temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1, is_sample=sampling)


def optimized_step(state: State, grad_fn, draws, params: Params):
    """The same step in JAX (jit- and vmap-able).

    The arguments and result are those of :func:`reference_step`; the step contract is in
    ``sgbench.samplers._contract``.

    Args:
        state: the chain's State (position, step counter t).
        grad_fn: the GradientOracle of this step.
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
        params: validated Params (a cyclical schedule).

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` 1 and ``is_sample`` False in
        the exploration stage.
    """
    h = params.step_size_at(state.step, jnp)
    sampling = params.schedule.phase(state.step, jnp) >= params.exploration_fraction
    grad = grad_fn(state.position)
    position = state.position + h * grad + sampling * jnp.sqrt(2 * h * params.temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1, is_sample=sampling)


_GATE_CYCLES = {"kind": "cyclical", "cycle_length": 100}  # an exploration stage in each cell's 4000 steps
_TIMING_CYCLES = {"kind": "cyclical", "cycle_length": 10_000}
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.04, "schedule": _GATE_CYCLES, "exploration_fraction": 0.25},
        linreg={"step_size": 2e-3, "schedule": _GATE_CYCLES, "exploration_fraction": 0.25},
        posteriors={"mesquite": {"step_size": 0.000517, "schedule": _GATE_CYCLES, "exploration_fraction": 0.25},
                    "gauss_mix": {"step_size": 4.29e-05, "schedule": _GATE_CYCLES, "exploration_fraction": 0.25}},
    ),
    equivalence=(
        dict(step_size=3e-3, schedule=CYCLES),
        dict(step_size=3e-3, schedule={"kind": "cyclical", "cycle_length": 200, "final_fraction": 0.02},
             exploration_fraction=1 / 3, temperature=0.5),
    ),
    speed={"step_size": 1e-2, "schedule": _TIMING_CYCLES},
    asv={"rosenbrock": {"step_size": 3e-3, "schedule": _TIMING_CYCLES},
         "linreg": {"step_size": 3e-5, "schedule": _TIMING_CYCLES},
         "bnn": {"step_size": 1e-4, "schedule": _TIMING_CYCLES}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "csgld", "Zhang et al. (2020), Algorithm 1; the PX paper's cyclical schedule", globals()))
