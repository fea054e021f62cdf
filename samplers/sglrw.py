r"""Stochastic gradient lattice random walk (SGLRW).

Definition 4.1 of the SGLRW paper with the clipping of its
section 4.3.1, written for the log density (:math:`\hat g = \widehat{\nabla\log p} = -\widehat{\partial U}`):
each coordinate moves one lattice step,

.. math:: x_{t+1, i} = x_{t, i} + s_i\sqrt{2 h_t T}, \qquad
          P[s_i = \pm 1] = \tfrac12 \pm \tfrac12\,\mathrm{clip}\big(\sqrt{h_t / (2T)}\,\hat g_i(x_t), -1, 1\big),

drawn as :math:`s_i = +1` iff :math:`u_i < P[s_i = +1]` with :math:`u_i \sim U[0, 1)`. Where the
clip is inactive the increment :math:`S` has the moments of eq. (10), :math:`E[S \mid x] = h_t \hat g`
and :math:`E[S_i^2 \mid x] = 2 h_t T` (the paper's :math:`T = 1`; the temperature scales the lattice
to :math:`\sqrt{2 h T}` so that the second moment is :math:`2hT` and the mean stays :math:`h\hat g`).
Standard convention (:math:`\delta_t = h_t`); the paper's runs use
``schedule={"kind": "polynomial_decay"}`` (:math:`\delta_t = \delta(1+t)^{-0.55}`). One gradient
evaluation per step. Its second moments follow a linear recursion where the clip is inactive (:func:`linear_law`,
the SGLRW Table 1 reproduction's prediction).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.samplers._benchmarks import DECAY
from sgbench.samplers._langevin import LangevinParams, State, init  # noqa: F401  (parts of SAMPLER)
from sgbench.samplers._linear_law import LinearLaw, step_counter


@samplers.hyperparameters
class Params(LangevinParams):
    """``LangevinParams``."""


def draw_spec(dim: int, params=None) -> dict[str, samplers.Variate]:
    """The variates of one step: one uniform vector, ``uniform``, which picks each coordinate's direction.

    Args:
        dim: the target's dimension.
        params: validated Params (not read).

    Returns:
        ``{"uniform": Variate("uniform", (dim,))}``.
    """
    return {"uniform": samplers.Variate("uniform", (dim,))}


def linear_law(hyperparameters: dict, precision, noise_covariance, step=None) -> LinearLaw:
    r"""The law of one step of the walk without its clip (``sgbench.samplers._linear_law``; eq. 10 and Lemma 4.3
    of the paper): with :math:`g(x) = -P(x - \mu)` and gradient noise of covariance :math:`V`, the increment has
    :math:`E[\Delta \mid x] = h g(x)`, so :math:`A = I - hP`; given the gradient the coordinates move
    independently, so off the diagonal :math:`\mathrm{Var}(\Delta \mid x) = h^2 V`, and on it the lattice fixes
    :math:`E[\Delta_i^2 \mid x] = 2hT`, so :math:`\mathrm{Var}(\Delta_i \mid x) = 2hT - h^2 g_i(x)^2`:
    :math:`Q = h^2(V - \mathrm{diag}\,V) + 2hT\,I` and the state's part
    :math:`-h^2\,\mathrm{diag}(PSP)` (:math:`E[gg^\top] = PSP`). An approximation where the clip
    :math:`\sqrt{h/(2T)}\,|\hat g_i| \le 1` binds.

    Args:
        hyperparameters: the hyperparameters of ``Params``, as given.
        precision: P, (d, d).
        noise_covariance: V, (d, d), or None for exact gradients.
        step: the step counter whose law is asked, or None for every step's (a constant schedule).

    Returns:
        the LinearLaw (its ``approximation`` names the clip).

    Raises:
        NoLinearLawError: ``step`` is None and the schedule changes the step size.
    """
    params = Params(**hyperparameters)
    h = float(params.step_size_at(step_counter(params, step)))
    p = np.asarray(precision, dtype=np.float64)
    d = p.shape[0]
    v = np.zeros((d, d)) if noise_covariance is None else np.asarray(noise_covariance, dtype=np.float64)
    covariance = h * h * (v - np.diag(np.diag(v))) + np.diag(np.full(d, 2 * h * params.temperature))

    def state_covariance(second_moment):
        return np.diag(-h * h * np.diag(p @ second_moment @ p))

    return LinearLaw(np.eye(d) - h * p, covariance, state_covariance=state_covariance, position_dependent_noise=True,
                     approximation="the clip of the tilt (exact where sqrt(h / (2T)) |g_i| <= 1)")


def reference_step(state: State, grad_fn, draws, params: Params):
    r"""One SGLRW step, the update of the module docstring (NumPy, one chain): each coordinate moves by
    :math:`\pm\sqrt{2 h_t T}`, up where
    :math:`u_i < \tfrac12 + \tfrac12\,\mathrm{clip}(\sqrt{h_t/(2T)}\,\hat g_i, -1, 1)`.

    The arguments and result follow the step contract (``sgbench.samplers._contract``).

    Args:
        state: the chain's State (position, step counter t).
        grad_fn: the GradientOracle of this step (``grad_fn(x)`` is the stochastic gradient of the log density).
        draws: this step's draws of :func:`draw_spec`: ``uniform``, uniforms on [0, 1) of shape (dim,).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step (its counter t + 1), and Info with ``num_grad_evals`` 1.
    """
    h = params.step_size_at(state.step, np)
    lattice = np.sqrt(2 * h * params.temperature)
    tilt = np.clip(np.sqrt(h / (2 * params.temperature)) * grad_fn(state.position), -1, 1)
    position = state.position + np.where(draws["uniform"] < (1 + tilt) / 2, lattice, -lattice)
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


def optimized_step(state: State, grad_fn, draws, params: Params):
    """The same step in JAX (jit- and vmap-able).

    The arguments and result are those of :func:`reference_step`; the step contract is in
    ``sgbench.samplers._contract``.

    Args:
        state: the chain's State (position, step counter t).
        grad_fn: the GradientOracle of this step.
        draws: this step's draws of :func:`draw_spec`: ``uniform``, uniforms on [0, 1) of shape (dim,).
        params: validated Params.

    Returns:
        (new State, Info): the state after one step, and Info with ``num_grad_evals`` 1.
    """
    h = params.step_size_at(state.step, jnp)
    lattice = jnp.sqrt(2 * h * params.temperature)
    tilt = jnp.clip(jnp.sqrt(h / (2 * params.temperature)) * grad_fn(state.position), -1, 1)
    position = state.position + jnp.where(draws["uniform"] < (1 + tilt) / 2, lattice, -lattice)
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)


# Its "stiff" gate cell (condition number 16, gradient-noise variance 16) is where the clip binds.
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
        dict(step_size=2e-2, schedule=DECAY, temperature=0.5),  # large steps: the clip is active
    ),
    speed={"step_size": 1e-2},
    asv={"rosenbrock": {"step_size": 3e-3}, "linreg": {"step_size": 3e-5}, "bnn": {"step_size": 1e-4}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "sglrw", "SGLRW paper, Definition 4.1 and section 4.3.1", globals()))
