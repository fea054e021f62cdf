r"""SGLD with control variates (SGLD-CV).

Baker et al. (2019); MAMBA (``seeds/001_cba5cf4c86b7500e.txt``), appendix D.3: the SGLD update

.. math:: x_{t+1} = x_t + h_t\,\hat g_{cv}(x_t) + \sqrt{2 h_t T}\,\xi_t, \qquad
          \hat g_{cv}(x) = \nabla\log p(\hat x) + \widehat{\nabla\log p}(x) - \widehat{\nabla\log p}(\hat x),

with centre :math:`\hat x` (``centre``) and the full-data gradient there (``centre_grad``). Unless
given, both come from ``samplers.control_variates.find_map`` (optax L-BFGS on the full-data log
density, computed once per target), filled in by ``Sampler.params_for`` / ``bench.run``.
Standard convention (MAMBA's eq. 1 is the ``welling_teh`` one: its :math:`h` is :math:`2h` here).
Two stochastic-gradient evaluations per step (at :math:`x_t` and at :math:`\hat x`, one minibatch);
the one full-data gradient at the centre is not counted. With additive gradient noise the
estimator is the exact gradient, so on a Gaussian target the chain is noise-free SGLD, a linear
recursion with a discrete-Lyapunov stationary covariance (``tests/test_langevin_exact_laws.py``).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

import samplers
from samplers import control_variates
from samplers._langevin import LangevinParams, State, draw_spec  # noqa: F401  (parts of SAMPLER)


@samplers.hyperparameters
class Params(LangevinParams):
    """``LangevinParams``; ``centre`` and ``centre_grad``: vectors of the target's dimension."""

    centre: Any = None
    centre_grad: Any = None

    def __post_init__(self):
        super().__post_init__()
        control_variates.check_centre(self)


prepare = control_variates.prepare  # fills in the centre (the MAP) and the full-data gradient there


def init(position, params: Params) -> State:
    control_variates.check_dimension(params, position)
    return State(position=position, step=0)


def reference_step(state: State, grad_fn, draws, params: Params):
    h = params.step_size_at(state.step, np)
    grad = control_variates.cv_grad_fn(grad_fn, params.centre, params.centre_grad)(state.position)
    position = state.position + h * grad + np.sqrt(2 * h * params.temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=2)


def optimized_step(state: State, grad_fn, draws, params: Params):
    h = params.step_size_at(state.step, jnp)
    grad = control_variates.cv_grad_fn(grad_fn, params.centre, params.centre_grad)(state.position)
    position = state.position + h * grad + jnp.sqrt(2 * h * params.temperature) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=2)


SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "sgld_cv", "Baker et al. (2019); MAMBA appendix D.3, eq. (8)", globals()))
