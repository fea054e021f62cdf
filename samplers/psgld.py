r"""Preconditioned SGLD (pSGLD) with an RMSprop preconditioner.

Li et al. (2016); Algorithm 2 of the PX paper (appendix C), written
for the log density (:math:`\hat g_t = \widehat{\nabla\log p}(x_t) = -\nabla\tilde U`):

.. math::
    \nu_{t+1} = \beta\,\nu_t + (1 - \beta)\,\hat g_t^2, \qquad
    G_{t+1} = 1 / (\sqrt{\nu_{t+1}} + \varepsilon),

    x_{t+1} = x_t + h_t\,G_{t+1} \odot \hat g_t + \sqrt{2 h_t T\,G_{t+1}} \odot \xi_t,
    \qquad \xi_t \sim \mathcal N(0, I),

elementwise, with smoothing factor :math:`\beta` (``smoothing``, PX default 0.99), :math:`\varepsilon`
(``epsilon``; Li et al.'s :math:`\lambda = 10^{-5}` by default), step size :math:`h_t` from the
schedule and temperature :math:`T`. As in Algorithm 2 (and Li et al.'s experiments), the
correction term :math:`\Gamma` of the position-dependent preconditioner is dropped.
``initial_square_average`` is :math:`\nu_0` (a number or a vector of the target's dimension;
RMSprop's 0 by default). ``smoothing = 1`` freezes the preconditioner at :math:`G = 1/(\sqrt{\nu_0}
+ \varepsilon)`: the update is then a linear recursion on a Gaussian target (:func:`linear_law`), whose
stationary covariance solves a discrete Lyapunov equation (``tests/test_langevin_exact_laws.py``).
Standard convention (:math:`h`, not :math:`\epsilon/2`). One gradient evaluation per step.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.base.arguments import in_interval, number_or_vector, positive_finite, vector_length_matches
from sgbench.samplers._benchmarks import CYCLES
from sgbench.samplers._langevin import LangevinParams, draw_spec, langevin_law  # noqa: F401  (part of SAMPLER)
from sgbench.samplers._linear_law import LinearLaw, NoLinearLawError, step_counter


@samplers.hyperparameters
class Params(LangevinParams):
    """``LangevinParams``; ``smoothing`` :math:`\\beta` in [0, 1] (default 0.99), ``epsilon`` > 0
    (default 1e-5), ``initial_square_average`` :math:`\\nu_0` >= 0 (number or vector, default 0)."""

    smoothing: float = 0.99
    epsilon: float = 1e-5
    initial_square_average: Any = 0.0

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "smoothing", in_interval("smoothing", self.smoothing, 0.0, 1.0))
        object.__setattr__(self, "epsilon", positive_finite("epsilon", self.epsilon))
        object.__setattr__(self, "initial_square_average",
                           number_or_vector("initial_square_average", self.initial_square_average))


class State(NamedTuple):
    """The state of a pSGLD chain.

    Attributes:
        position: the chain's position, shape (dim,).
        step: the step counter t, from which the schedule reads the step size.
        square_average: the RMSprop average of the squared gradient, shape (dim,).
    """

    position: Any
    step: Any
    square_average: Any


def init(position, params: Params) -> State:
    """The chain at ``position``, its step counter at 0 and its square average at ``initial_square_average``.

    Args:
        position: the chain's starting point, shape (dim,).
        params: validated Params.

    Returns:
        the chain's State.

    Raises:
        ValueError: ``initial_square_average`` is a vector whose length is not the position's dimension.
    """
    vector_length_matches("initial_square_average", params.initial_square_average, position)
    return State(position=position, step=0, square_average=params.initial_square_average + 0 * position)


def linear_law(hyperparameters: dict, precision, noise_covariance, step=None) -> LinearLaw:
    r"""The exact law of one step (``sgbench.samplers._linear_law``) where the preconditioner is frozen
    (``smoothing`` = 1): SGLD's step with :math:`G = 1/(\sqrt{\nu_0} + \varepsilon)`,
    ``sgbench.samplers._langevin.langevin_law``.

    Args:
        hyperparameters: the hyperparameters of ``Params``, as given.
        precision: P, (d, d).
        noise_covariance: V, (d, d), or None for exact gradients.
        step: the step counter whose law is asked, or None for every step's (a constant schedule).

    Returns:
        the LinearLaw, with its LangevinStep.

    Raises:
        NoLinearLawError: ``smoothing`` is not 1 (the preconditioner then follows the squared gradients), or
            ``step`` is None and the schedule changes the step size.
    """
    params = Params(**hyperparameters)
    if params.smoothing != 1.0:
        raise NoLinearLawError(f"pSGLD is linear only with a frozen preconditioner (smoothing = 1), "
                               f"got smoothing {params.smoothing}")
    h = float(params.step_size_at(step_counter(params, step)))
    preconditioner = 1 / (np.sqrt(params.initial_square_average) + params.epsilon)
    return langevin_law(precision, h, params.temperature, noise_covariance, preconditioner)


def reference_step(state: State, grad_fn, draws, params: Params):
    r"""One pSGLD step, the update of the module docstring (NumPy, one chain):
    :math:`\nu_{t+1} = \beta\nu_t + (1 - \beta)\hat g_t^2`, :math:`G_{t+1} = 1/(\sqrt{\nu_{t+1}} + \varepsilon)`,
    :math:`x_{t+1} = x_t + h_t G_{t+1} \odot \hat g_t + \sqrt{2 h_t T G_{t+1}} \odot \xi_t`.

    The arguments and result follow the step contract (``sgbench.samplers._contract``).

    Args:
        state: the chain's State (position, step counter t, square average).
        grad_fn: the GradientOracle of this step (``grad_fn(x)`` is the stochastic gradient of the log density).
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step (its counter t + 1), and Info with ``num_grad_evals`` 1.
    """
    h = params.step_size_at(state.step, np)
    grad = grad_fn(state.position)
    square_average = params.smoothing * state.square_average + (1 - params.smoothing) * grad**2
    preconditioner = 1 / (np.sqrt(square_average) + params.epsilon)
    noise = np.sqrt(2 * h * params.temperature * preconditioner) * draws["noise"]
    position = state.position + h * preconditioner * grad + noise
    return State(position, state.step + 1, square_average), samplers.Info(num_grad_evals=1)


def optimized_step(state: State, grad_fn, draws, params: Params):
    """The same step in JAX (jit- and vmap-able).

    The arguments and result are those of :func:`reference_step`; the step contract is in
    ``sgbench.samplers._contract``.

    Args:
        state: the chain's State (position, step counter t, square average).
        grad_fn: the GradientOracle of this step.
        draws: this step's draws of ``draw_spec``: ``noise``, a standard normal vector of shape (dim,).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` 1.
    """
    h = params.step_size_at(state.step, jnp)
    grad = grad_fn(state.position)
    square_average = params.smoothing * state.square_average + (1 - params.smoothing) * grad**2
    preconditioner = 1 / (jnp.sqrt(square_average) + params.epsilon)
    noise = jnp.sqrt(2 * h * params.temperature * preconditioner) * draws["noise"]
    position = state.position + h * preconditioner * grad + noise
    return State(position, state.step + 1, square_average), samplers.Info(num_grad_evals=1)


# Adaptive pSGLD's chains are heavy-tailed: when a chain's RMSprop average of g^2 is small its
# preconditioner is large and the chain makes a huge excursion (over 4096 chains at h = 0.02 on icg4 the
# excess kurtosis of the per-chain variance error is about 360 in one coordinate; on linreg 3800). Its
# exact-law cell freezes the preconditioner (smoothing 1), which makes it linear. Its cells warm up for 5200
# steps, four times its linreg chains' autocorrelation time (about 1270 steps; sgbench.bench.gate.start).
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.02},
        linreg={"step_size": 1e-3},
        posteriors={"mesquite": {"step_size": 0.008},
                    "gauss_mix": {"step_size": 0.008}},
        exact_law=({"step_size": 0.02, "smoothing": 1.0, "initial_square_average": 4.0},),
        heavy_tailed=("icg4", "linreg"),
        num_burnin=5200,
    ),
    equivalence=(
        dict(step_size=1e-3),
        dict(step_size=1e-3, smoothing=0.9, epsilon=1e-3, temperature=0.5, schedule=CYCLES),
        dict(step_size=1e-3, smoothing=1.0, initial_square_average=[1.0, 4.0, 9.0, 16.0] * 2 + [1.0, 1.0]),
    ),
    speed={"step_size": 1e-2},
    asv={"rosenbrock": {"step_size": 3e-3}, "linreg": {"step_size": 1e-4}, "bnn": {"step_size": 1e-4}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "psgld", "Li et al. (2016); Algorithm 2 of the PX paper", globals()))
